"""BranchJoiner in a validation loop, as Haystack's loop examples use it: the first draft and the corrected
draft sent back by a router reach the joiner in different passes, never together. Hazard-free."""

from haystack import Pipeline, component
from haystack.components.joiners import BranchJoiner
from haystack.components.routers import ConditionalRouter


@component
class Draft:
    @component.output_types(draft=str)
    def run(self, text: str) -> dict:
        return {"draft": text.strip()}


routes = [
    {"condition": "{{ draft|length > 3 }}", "output": "{{ draft }}", "output_name": "valid", "output_type": str},
    {"condition": "{{ draft|length <= 3 }}", "output": "{{ draft ~ '!' }}", "output_name": "retry", "output_type": str},
]

pipeline = Pipeline(max_runs_per_component=5)
pipeline.add_component("joiner", BranchJoiner(str))
pipeline.add_component("draft", Draft())
pipeline.add_component("check", ConditionalRouter(routes=routes))
pipeline.connect("joiner.value", "draft.text")
pipeline.connect("draft.draft", "check.draft")
pipeline.connect("check.retry", "joiner.value")
