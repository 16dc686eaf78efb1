"""A lead-scoring loop in the shape of crewAI-examples' lead-score flow (our own code): leads load once, a
scorer listens to or_(the loader, the "rescore" route), and a router after it either sends feedback back as
"rescore" or goes on to "emails". The route loops back to the scorer after it ran, one pass at a time: not two
branches completing together (the or_ probe's precondition), so no or_ finding; a loop's re-arming is a
different question (crewAI #5972)."""

from crewai.flow.flow import Flow, listen, or_, router, start


class LeadFlow(Flow):
    @start()
    def load_leads(self) -> None:
        self.state["leads"] = ["ada", "grace"]
        self.state["rounds"] = 0

    @listen(or_(load_leads, "rescore"))
    async def score_leads(self) -> None:
        self.state["scores"] = {lead: len(lead) for lead in self.state["leads"]}

    @router(score_leads)
    def review(self) -> str:
        self.state["rounds"] += 1
        if self.state["rounds"] < 2:
            return "rescore"
        return "emails"

    @listen("emails")
    async def write_emails(self) -> None:
        self.state["emails"] = [f"dear {lead}" for lead in self.state["scores"]]
