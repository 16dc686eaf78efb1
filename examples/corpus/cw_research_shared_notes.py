"""The research flow with both researchers writing one field, `notes`, of the structured state (a common
slip when a second researcher is copied from the first): they run at once, the last to finish wins and the
writer sees one researcher's notes."""

from crewai.flow.flow import Flow, and_, listen, start
from pydantic import BaseModel


class ResearchState(BaseModel):
    topic: str = ""
    notes: str = ""
    report: str = ""


async def ask(prompt: str) -> str:
    """Where a crew or an LLM call would be."""
    return f"notes on {prompt}"


class ResearchFlow(Flow[ResearchState]):
    @start()
    def plan(self) -> None:
        self.state.topic = self.state.topic or "fan-in"

    @listen(plan)
    async def research_web(self) -> None:
        self.state.notes = await ask(f"web: {self.state.topic}")

    @listen(plan)
    async def research_docs(self) -> None:
        self.state.notes = await ask(f"docs: {self.state.topic}")

    @listen(and_(research_web, research_docs))
    def write_report(self) -> str:
        self.state.report = self.state.notes
        return self.state.report
