"""What `fanin audit` sees in a Google ADK agent tree or Workflow: shared keys, escalation, loops, joins.

Runs in the environment with the user's agents and ADK installed (never in the harness). It walks
the whole tree by class name and public attributes (`sub_agents`, `output_key`, `tools`, the
callbacks, `graph.edges`), so it works across ADK versions without importing their private
modules. The state keys a tool, callback or custom agent writes, and whether it escalates, are
read from its source with `ast` where the source can be found; where it cannot, the writer is
listed as unknown and an escalation is "possible", never assumed absent. Every finding names the
probes it rests on and states their precondition as it holds in this tree; the harness adds what
those probes observed at the installed version.
"""

# The inspector is split by job: audit_adk_source (reading agents' code), audit_adk_agents (agent trees),
# audit_adk_workflow (Workflow graphs), audit_dry_run, audit_adk_recorded (`fanin record`); this file is the
# entry points the harness calls.

from typing import Any

from audit_adk_source import _is_agent, _is_workflow, _kind
from audit_adk_agents import _agent_facts
from audit_adk_workflow import _workflow_facts
from audit_adk_recorded import recorded  # noqa: F401 - `fanin record`'s entry point, called by the harness


NO_DRY_RUN = "the ADK audit reads a Workflow as built and has no dry run for it; agent trees have one"


def inspect(target: Any, given: Any = None) -> dict[str, Any] | None:
    """Facts and findings for an ADK agent tree or Workflow; None when `target` is neither."""
    if _is_workflow(target):
        return {"framework": "adk", "kind": _kind(target), **_workflow_facts(target), "no_dry_run": NO_DRY_RUN}
    if not _is_agent(target):
        return None
    facts = {"framework": "adk", "kind": _kind(target), **_agent_facts(target)}
    if given is not None:
        import audit_dry_run  # suites/adk/audit_dry_run.py: imports ADK's runner, only for a dry run

        facts["dry_run"] = audit_dry_run.dry_run(target, given)
        _seen_in_dry_run(facts)
    return facts


def _seen_in_dry_run(facts: dict[str, Any]) -> None:
    """A shared-key finding whose key two agents did write in the dry run is seen, not only read from the tree."""
    authors: dict[str, list[str]] = {}
    for write in facts["dry_run"]["writes"]:
        for key in write["keys"]:
            authors.setdefault(key, []).append(write["node"])
    for finding in facts["findings"]:
        where = "; ".join(str(w) for w in finding["where"])
        for key, names in authors.items():
            if f"output_key {key!r}" in where and len(set(names)) > 1:
                finding["certainty"] = "observed"
                finding["how"] = f"dry run: {', '.join(dict.fromkeys(names))} each wrote {key!r}; {finding['how']}"
