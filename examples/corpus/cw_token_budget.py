"""Two writers drafting at once under one token budget kept in the flow's unstructured state: each reads
what is spent, awaits its model call, and writes back the sum. Both read before either writes: one
writer's tokens are lost."""

from crewai.flow.flow import Flow, and_, listen, start


async def draft(part: str) -> tuple[str, int]:
    """Where the model call would be: the text and the tokens it used."""
    return f"{part} draft", 100


class BudgetFlow(Flow):
    @start()
    def begin(self) -> None:
        self.state["spent"] = 0

    @listen(begin)
    async def write_intro(self) -> None:
        spent = self.state["spent"]
        text, used = await draft("intro")
        self.state["intro"] = text
        self.state["spent"] = spent + used

    @listen(begin)
    async def write_body(self) -> None:
        spent = self.state.get("spent", 0)
        text, used = await draft("body")
        self.state["body"] = text
        self.state["spent"] = spent + used

    @listen(and_(write_intro, write_body))
    def report(self) -> int:
        return self.state["spent"]
