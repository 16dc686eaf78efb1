"""Two reviewers as entry points of one Strands graph, both feeding a summarizer: paths of equal depth, so the
summarizer runs once, after both, with both inputs: hazard-free at the join."""

from strands.multiagent.base import MultiAgentBase, MultiAgentResult, Status
from strands.multiagent.graph import GraphBuilder


class Step(MultiAgentBase):
    """A custom node (a plain function where an agent would be)."""

    async def invoke_async(self, task, invocation_state=None, **kwargs):
        return MultiAgentResult(status=Status.COMPLETED, results={})


builder = GraphBuilder()
for name in ("security_review", "style_review", "summarizer"):
    builder.add_node(Step(), name)
builder.add_edge("security_review", "summarizer")
builder.add_edge("style_review", "summarizer")
builder.set_entry_point("security_review")
builder.set_entry_point("style_review")
builder.set_max_node_executions(10)
graph = builder.build()
