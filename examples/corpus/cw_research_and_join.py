"""A research flow as CrewAI's docs draw one: a planner starts two researchers (the web and the internal
docs), each keeping its notes in a field of its own of a structured state, and a writer listens to
and_(both) and reads the two fields. Nothing is shared between the researchers: hazard-free."""

from crewai.flow.flow import Flow, and_, listen, start
from pydantic import BaseModel


class ResearchState(BaseModel):
    topic: str = ""
    web_notes: str = ""
    doc_notes: str = ""
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
        self.state.web_notes = await ask(f"web: {self.state.topic}")

    @listen(plan)
    async def research_docs(self) -> None:
        self.state.doc_notes = await ask(f"docs: {self.state.topic}")

    @listen(and_(research_web, research_docs))
    def write_report(self) -> str:
        self.state.report = self.state.web_notes + "\n" + self.state.doc_notes
        return self.state.report
