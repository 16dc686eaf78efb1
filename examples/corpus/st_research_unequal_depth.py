"""A research graph as Strands' docs draw one: a researcher hands to an analyst, a fact-checker runs beside
them, and a writer joins the analyst's and the fact-checker's results. The writer is reached by paths of
unequal depth (fact_checker at depth 0, analyst at depth 1): it starts once the fact-checker is done, before
the analyst has written."""

from strands.multiagent.base import MultiAgentBase, MultiAgentResult, Status
from strands.multiagent.graph import GraphBuilder


class Step(MultiAgentBase):
    """A custom node (a plain function where an agent would be)."""

    async def invoke_async(self, task, invocation_state=None, **kwargs):
        return MultiAgentResult(status=Status.COMPLETED, results={})


builder = GraphBuilder()
for name in ("researcher", "analyst", "fact_checker", "writer"):
    builder.add_node(Step(), name)
builder.add_edge("researcher", "analyst")
builder.add_edge("analyst", "writer")
builder.add_edge("fact_checker", "writer")
builder.set_entry_point("researcher")
builder.set_entry_point("fact_checker")
builder.set_max_node_executions(10)
graph = builder.build()
