"""A validation loop whose body drafts twice: two drafters (a model and its cheaper twin, say) both fed by the
loop's joiner, their replies picked by a second BranchJoiner before the check. The loop's joiner is safe (the
first input and the retry arrive in different passes); the picker is not: both drafters run in every pass
and both send it a value, which its greedy input keeps one of or raises on (haystack/branch-joiner/two-live-branches).
"""

from haystack import Pipeline, component
from haystack.components.joiners import BranchJoiner
from haystack.components.routers import ConditionalRouter


@component
class Draft:
    def __init__(self, suffix: str) -> None:
        self.suffix = suffix

    @component.output_types(draft=str)
    def run(self, text: str) -> dict:
        return {"draft": text.strip() + self.suffix}


routes = [
    {"condition": "{{ draft|length > 3 }}", "output": "{{ draft }}", "output_name": "valid", "output_type": str},
    {"condition": "{{ draft|length <= 3 }}", "output": "{{ draft ~ '!' }}", "output_name": "retry", "output_type": str},
]

pipeline = Pipeline(max_runs_per_component=5)
pipeline.add_component("joiner", BranchJoiner(str))
pipeline.add_component("large", Draft(""))
pipeline.add_component("small", Draft("."))
pipeline.add_component("pick", BranchJoiner(str))
pipeline.add_component("check", ConditionalRouter(routes=routes))
pipeline.connect("joiner.value", "large.text")
pipeline.connect("joiner.value", "small.text")
pipeline.connect("large.draft", "pick.value")
pipeline.connect("small.draft", "pick.value")
pipeline.connect("pick.value", "check.draft")
pipeline.connect("check.retry", "joiner.value")
