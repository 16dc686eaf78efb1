"""BranchJoiner as Haystack's docs use it: a ConditionalRouter sends the query down one of two branches
(a short answer or a web search stand-in), and a BranchJoiner takes whichever ran. Only one branch runs, so
the joiner gets one value: hazard-free."""

from haystack import Pipeline, component
from haystack.components.joiners import BranchJoiner
from haystack.components.routers import ConditionalRouter


@component
class Reply:
    def __init__(self, how: str) -> None:
        self.how = how

    @component.output_types(reply=str)
    def run(self, query: str) -> dict:
        return {"reply": f"{self.how}: {query}"}


routes = [
    {"condition": "{{ query|length < 20 }}", "output": "{{ query }}", "output_name": "short", "output_type": str},
    {"condition": "{{ query|length >= 20 }}", "output": "{{ query }}", "output_name": "long", "output_type": str},
]

pipeline = Pipeline()
pipeline.add_component("router", ConditionalRouter(routes=routes))
pipeline.add_component("quick", Reply("quick"))
pipeline.add_component("search", Reply("search"))
pipeline.add_component("joiner", BranchJoiner(str))
pipeline.connect("router.short", "quick.query")
pipeline.connect("router.long", "search.query")
pipeline.connect("quick.reply", "joiner.value")
pipeline.connect("search.reply", "joiner.value")
