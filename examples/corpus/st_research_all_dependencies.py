"""st_research_unequal_depth with the fix Strands' docs give: every edge into the writer has a condition that
holds only once all of the writer's sources have completed, so it runs once, after the analyst."""

from strands.multiagent.base import MultiAgentBase, MultiAgentResult, Status
from strands.multiagent.graph import GraphBuilder


class Step(MultiAgentBase):
    """A custom node (a plain function where an agent would be)."""

    async def invoke_async(self, task, invocation_state=None, **kwargs):
        return MultiAgentResult(status=Status.COMPLETED, results={})


def all_done(*sources):
    def condition(state):
        return set(sources) <= {node.node_id for node in state.completed_nodes}

    return condition


builder = GraphBuilder()
for name in ("researcher", "analyst", "fact_checker", "writer"):
    builder.add_node(Step(), name)
builder.add_edge("researcher", "analyst")
builder.add_edge("analyst", "writer", condition=all_done("analyst", "fact_checker"))
builder.add_edge("fact_checker", "writer", condition=all_done("analyst", "fact_checker"))
builder.set_entry_point("researcher")
builder.set_entry_point("fact_checker")
builder.set_max_node_executions(10)
graph = builder.build()
