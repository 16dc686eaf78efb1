"""LangGraph's `pause` and `resume` for the scenario adapters of LangGraph and of deepagents, which runs on it
(docs/ADAPTERS.md): a branch pauses with `interrupt()` (langgraph.types, which raises GraphInterrupt in the node the
first time and returns the resume value when the node runs again; deepagents calls it in a subagent's middleware,
inside the parent's `task` call), and the stopped run is resumed on its checkpointer's thread the way the docs say:
`ainvoke(Command(resume=answer), config)` after a pause, `ainvoke(None, config)` after a failure (the last
checkpoint's pending tasks run again; writes of tasks that finished are kept as pending writes)."""

from __future__ import annotations

from typing import Any

import scenario_kit


def cannot() -> dict[str, str]:
    """Why this version cannot pause or resume, read from the installed package (empty when it can)."""
    import langgraph.types

    missing = [name for name in ("interrupt", "Command") if not hasattr(langgraph.types, name)]
    if not missing:
        return {}
    reason = f"langgraph.types has no {' or '.join(missing)} (a node cannot interrupt or be resumed with a value)"
    return {"pause": reason}


def pause(name: str) -> Any:
    """A branch asks for human input: LangGraph's interrupt(), whose value is the answer once resumed."""
    from langgraph.types import interrupt

    return interrupt({"branch": name})


def resume_input(script: scenario_kit.Script) -> Any:
    """What the resumed run is given: the answer for the pause, or nothing (run on from the checkpoint)."""
    if script.paused:
        from langgraph.types import Command

        return Command(resume=scenario_kit.ANSWER)
    return None
