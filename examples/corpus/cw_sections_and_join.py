"""A book outline flow: two chapter writers run at once and append their chapter to one list in the state;
an assembler on and_(both) takes the trigger's output as "the chapters". Every chapter is kept, in the
order the writers finish, and the assembler is handed the last finisher's output only: order-coupled,
nothing lost."""

from typing import Any

from crewai.flow.flow import Flow, and_, listen, start


class BookFlow(Flow):
    @start()
    def outline(self) -> None:
        self.state["chapters"] = []

    @listen(outline)
    async def chapter_one(self) -> str:
        self.state["chapters"].append("one")
        return "one"

    @listen(outline)
    async def chapter_two(self) -> str:
        self.state["chapters"].append("two")
        return "two"

    @listen(and_(chapter_one, chapter_two))
    def assemble(self, chapters: Any) -> list[str]:
        return list(self.state["chapters"])
