"""Two summarisers run on the same text and a ListJoiner collects their outputs; the consumer reads them as a
list. Nothing is lost, but the list's order follows how the pipeline is run: sender names under
Pipeline.run, finishing order under run_async (haystack/sync-async/join-order, order-coupled)."""

from haystack import Pipeline, component
from haystack.components.joiners import ListJoiner


@component
class Summary:
    def __init__(self, style: str) -> None:
        self.style = style

    @component.output_types(summaries=list[str])
    def run(self, text: str) -> dict:
        return {"summaries": [f"{self.style}: {text[:20]}"]}


pipeline = Pipeline()
pipeline.add_component("brief", Summary("brief"))
pipeline.add_component("detailed", Summary("detailed"))
pipeline.add_component("joiner", ListJoiner(list[str]))
pipeline.connect("brief.summaries", "joiner.values")
pipeline.connect("detailed.summaries", "joiner.values")
