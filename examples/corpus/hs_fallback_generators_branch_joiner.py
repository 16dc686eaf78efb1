"""A "fallback" written as two branches: the prompt goes to a primary and a fallback generator, and a
BranchJoiner is meant to take "whichever answered". Nothing routes between them, so both run in every run
(concurrently under run_async) and the joiner keeps the last to finish, silently, from 2.7.0
(haystack/branch-joiner/two-live-branches). A ConditionalRouter on the primary's reply is the fix."""

from haystack import Pipeline, component
from haystack.components.joiners import BranchJoiner


@component
class Prompt:
    @component.output_types(prompt=str)
    def run(self, question: str) -> dict:
        return {"prompt": f"Answer briefly: {question}"}


@component
class Generator:
    """A stand-in for a chat generator."""

    def __init__(self, model: str) -> None:
        self.model = model

    @component.output_types(reply=str)
    def run(self, prompt: str) -> dict:
        return {"reply": f"{self.model}: {prompt}"}

    @component.output_types(reply=str)
    async def run_async(self, prompt: str) -> dict:
        return {"reply": f"{self.model}: {prompt}"}


pipeline = Pipeline()
pipeline.add_component("prompt", Prompt())
pipeline.add_component("primary", Generator("large"))
pipeline.add_component("fallback", Generator("small"))
pipeline.add_component("pick", BranchJoiner(str))
pipeline.connect("prompt.prompt", "primary.prompt")
pipeline.connect("prompt.prompt", "fallback.prompt")
pipeline.connect("primary.reply", "pick.value")
pipeline.connect("fallback.reply", "pick.value")
