"""deepagents' `pause` and `resume` for its scenario adapter (docs/ADAPTERS.md). deepagents runs on LangGraph, so
as in suites/langgraph/scenario_resume.py: a branch pauses with `interrupt()` (langgraph.types; here in a
subagent's middleware, inside the parent's `task` call), which raises GraphInterrupt the first time and returns the
resume value when the node runs again; the parent is resumed on its checkpointer's thread, `ainvoke(Command(resume=
answer), config)` after a pause, `ainvoke(None, config)` after a failure."""

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
