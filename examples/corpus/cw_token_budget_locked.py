"""The token-budget flow with the fix: one lock, shared by both writers, held from the read of what is
spent to the write of the sum (the model call inside it), so the two updates come one after the other."""

import asyncio

from crewai.flow.flow import Flow, and_, listen, start

budget_lock = asyncio.Lock()


async def draft(part: str) -> tuple[str, int]:
    """Where the model call would be: the text and the tokens it used."""
    return f"{part} draft", 100


class BudgetFlow(Flow):
    @start()
    def begin(self) -> None:
        self.state["spent"] = 0

    @listen(begin)
    async def write_intro(self) -> None:
        async with budget_lock:
            spent = self.state["spent"]
            text, used = await draft("intro")
            self.state["spent"] = spent + used
        self.state["intro"] = text

    @listen(begin)
    async def write_body(self) -> None:
        async with budget_lock:
            spent = self.state["spent"]
            text, used = await draft("body")
            self.state["spent"] = spent + used
        self.state["body"] = text

    @listen(and_(write_intro, write_body))
    def report(self) -> int:
        return self.state["spent"]
