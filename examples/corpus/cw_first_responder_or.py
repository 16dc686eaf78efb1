"""A hedged search: two providers queried at once, and a summariser on or_(both) meant to take whichever
answers first and, as its author thought, the other one too when it comes. Both complete: up to 1.8.1
the summariser runs twice, from 1.9.0 once, the second answer dropped without a log."""

from typing import Any

from crewai.flow.flow import Flow, listen, or_, start


class HedgedSearch(Flow):
    @start()
    def question(self) -> str:
        return "what changed in 1.9.0?"

    @listen(question)
    async def search_primary(self, query: str) -> str:
        return f"primary: {query}"

    @listen(question)
    async def search_backup(self, query: str) -> str:
        return f"backup: {query}"

    @listen(or_(search_primary, search_backup))
    def summarise(self, answer: Any) -> None:
        self.state.setdefault("answers", []).append(answer)
