"""A self-evaluation loop (a start that also listens to its "retry" route, as CrewAI's docs write one) whose
draft is checked by two critics at once; both set state["feedback"], so the router sees the last critic's
feedback only and the other's is lost."""

from crewai.flow.flow import Flow, and_, listen, router, start


async def critique(aspect: str, text: str) -> str:
    """Where a reviewer crew would be."""
    return f"{aspect}: fine"


class DraftFlow(Flow):
    @start("retry")
    def draft(self) -> None:
        self.state["text"] = "a post"
        self.state["tries"] = self.state.get("tries", 0) + 1

    @listen(draft)
    async def check_style(self) -> None:
        self.state["feedback"] = await critique("style", self.state["text"])

    @listen(draft)
    async def check_facts(self) -> None:
        self.state["feedback"] = await critique("facts", self.state["text"])

    @router(and_(check_style, check_facts))
    def decide(self) -> str:
        if "fine" in self.state["feedback"] or self.state["tries"] > 2:
            return "done"
        return "retry"

    @listen("done")
    def publish(self) -> str:
        return self.state["text"]
