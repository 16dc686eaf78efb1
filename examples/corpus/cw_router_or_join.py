"""A review flow as CrewAI's docs route one: a router scores a draft and returns "approved" or
"rejected"; one listener per route sets the status, and a notifier on or_(both handlers) tells the author.
Only one route runs in a pass, so the notifier fires once and the two status writes never meet:
hazard-free."""

from crewai.flow.flow import Flow, listen, or_, router, start


class ReviewFlow(Flow):
    @start()
    def draft(self) -> None:
        self.state["draft"] = "a draft"
        self.state["score"] = 7

    @router(draft)
    def review(self) -> str:
        if self.state["score"] >= 5:
            return "approved"
        return "rejected"

    @listen("approved")
    async def publish(self) -> None:
        self.state["status"] = "published"

    @listen("rejected")
    async def send_back(self) -> None:
        self.state["status"] = "returned"

    @listen(or_(publish, send_back))
    def notify(self) -> str:
        return f"author told: {self.state['status']}"
