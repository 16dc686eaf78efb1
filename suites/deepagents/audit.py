"""What `fanin audit` sees in a deepagents agent: parallel `task` calls and the state their subagents hand back.

Runs in the environment with the user's agent and deepagents installed (never in the harness). A deep
agent (`create_deep_agent`) is a compiled LangGraph graph whose `tools` node holds the `task` tool;
the subagents that tool can launch are the compiled graphs it closes over (`subagent_graphs`), read
here through public attributes (`nodes`, `bound.tools_by_name`, `channels`, a function's closure
variables) and guarded so every version from 0.2 on is read the same way. The LangGraph inspector
sees the same graph; this one adds what happens when several `task` calls fan back in: their
`files`, todo lists and structured responses (deepagents/subagents/* probes).
"""

import inspect as pyinspect
from typing import Any

_FILE_WRITERS = ("write_file", "edit_file")
_NOT_IN_STATE = ("FilesystemBackend", "StoreBackend", "LocalShellBackend", "SandboxBackend")


def _tools(graph: Any) -> dict[str, Any]:
    """{name: tool} of a compiled agent graph's `tools` node (a ToolNode), or {}."""
    nodes = getattr(graph, "nodes", None)
    if not isinstance(nodes, dict) or "tools" not in nodes:
        return {}
    node = nodes["tools"]
    bound = getattr(node, "bound", node)
    found = getattr(bound, "tools_by_name", None)
    return dict(found) if isinstance(found, dict) else {}


def _closure(func: Any) -> dict[str, Any]:
    if func is None:
        return {}
    try:
        return dict(pyinspect.getclosurevars(func).nonlocals)
    except (TypeError, ValueError):
        return {}


def _subagent_graphs(task: Any) -> dict[str, Any] | None:
    """{subagent name: its runnable}, as the `task` tool closes over them; None when not readable."""
    for func in (getattr(task, "func", None), getattr(task, "coroutine", None)):
        graphs = _closure(func).get("subagent_graphs")
        if isinstance(graphs, dict):
            return dict(graphs)
    return None


def _listed_subagents(task: Any) -> list[str]:
    """Subagent names from the `task` tool's description ("- name: what it does"), the public fallback."""
    text = str(getattr(task, "description", "") or "")
    names = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("- ") and ":" in line:
            name = line[2:].split(":", 1)[0].strip()
            if name and " " not in name:
                names.append(name)
    return names


def _backend(tool: Any) -> str:
    """'state' when a file tool keeps files in graph state (deepagents' StateBackend), 'elsewhere', or 'unknown'."""
    for func in (getattr(tool, "func", None), getattr(tool, "coroutine", None)):
        closure = _closure(func)
        backend = closure.get("backend")
        if backend is None and closure.get("self") is not None:
            backend = getattr(closure["self"], "backend", None)
        if backend is None:
            continue
        return _backend_kind(backend)
    return "unknown"


def _backend_kind(backend: Any) -> str:
    kind = type(backend).__name__
    if kind == "StateBackend":
        return "state"
    if kind == "CompositeBackend":
        default = getattr(backend, "default", None)
        return _backend_kind(default) if default is not None else "unknown"
    if any(kind.endswith(name) or kind == name for name in _NOT_IN_STATE):
        return "elsewhere"
    if callable(backend) and not isinstance(backend, type):  # a factory, e.g. `lambda rt: StateBackend(rt)`
        try:
            text = pyinspect.getsource(backend)
        except (OSError, TypeError):
            return "unknown"
        if "StateBackend" in text and not any(name in text for name in _NOT_IN_STATE):
            return "state"
        return "unknown"
    return "unknown"


def _response_format(graph: Any) -> bool | None:
    """Whether a create_agent graph has a response_format (read from its model node's closure); None: unknown."""
    nodes = getattr(graph, "nodes", None)
    if not isinstance(nodes, dict) or "model" not in nodes:
        return None
    bound = getattr(nodes["model"], "bound", nodes["model"])
    for func in (getattr(bound, "func", None), getattr(bound, "afunc", None)):
        closure = _closure(func)
        for name in ("initial_response_format", "response_format"):
            if name in closure:
                return closure[name] is not None
    return None


def _describe(name: str, graph: Any) -> dict[str, Any]:
    tools = _tools(graph)
    channels = list(getattr(graph, "channels", None) or [])
    readable = bool(tools) or bool(channels)
    writers = [t for t in _FILE_WRITERS if t in tools]
    backend = _backend(tools[writers[0]]) if writers else None
    return {
        "name": name,
        "readable": readable,
        "tools": sorted(tools),
        "file_tools": writers,
        "files_channel": "files" in channels,
        "backend": backend,
        "todos": "write_todos" in tools and ("todos" in channels or not channels),
        "response_format": _response_format(graph) if readable else None,
    }


def _is_deep_agent(target: Any) -> Any:
    """The `task` tool when `target` is a deepagents agent (its tools node holds deepagents' task tool)."""
    task = _tools(target).get("task")
    if task is None:
        return None
    module = ""
    for func in (getattr(task, "func", None), getattr(task, "coroutine", None)):
        module = getattr(func, "__module__", "") or module
    config = getattr(target, "config", None) or {}
    metadata = config.get("metadata", {}) if isinstance(config, dict) else {}
    if module.startswith("deepagents") or metadata.get("ls_integration") == "deepagents":
        return task
    return task if _subagent_graphs(task) is not None else None


def inspect(target: Any, given: Any = None) -> dict[str, Any] | None:
    """Facts and findings for a deepagents agent; None when `target` is not one."""
    task = _is_deep_agent(target)
    if task is None:
        return None
    graphs = _subagent_graphs(task)
    if graphs is None:
        subagents: list[dict[str, Any]] = [{"name": n, "readable": False} for n in _listed_subagents(task)]
    else:
        subagents = [_describe(name, graph) for name, graph in graphs.items()]
    unknown = [s["name"] for s in subagents if not s["readable"]]
    findings: list[dict[str, Any]] = []
    launch = (
        "the parent's model issues several `task` calls in one message (deepagents' prompt asks for this when "
        "tasks are independent; one subagent type may be launched twice), so they run in one superstep and fan in"
    )

    in_state = [s for s in subagents if s.get("file_tools") and s.get("files_channel") and s["backend"] == "state"]
    maybe = [s for s in subagents if s.get("file_tools") and s["backend"] == "unknown"]
    if in_state or maybe:
        names = [s["name"] for s in in_state + maybe]
        findings.append({
            "pattern": "parallel subagents write files",
            "where": ["task", f"subagents with {'/'.join(_FILE_WRITERS)} on graph state: {names}"],
            "probes": ["deepagents/subagents/parallel-files"],
            "certainty": "static" if in_state else "possible",
            "how": "read from the subagents' tools and file backend: "
            + "; ".join(f"{s['name']}: {', '.join(s['file_tools'])}, backend {s['backend']}" for s in in_state + maybe),
            "precondition": f"{launch}; each of {names} returns its whole copy of `files`, so for every path the "
            "copy of the last-listed call is kept, including an untouched stale copy over a sibling's edit",
        })
    todo = [s["name"] for s in subagents if s.get("todos")]
    if todo:
        findings.append({
            "pattern": "parallel subagents keep todo lists",
            "where": ["task", f"subagents with write_todos: {todo}"],
            "probes": ["deepagents/subagents/parallel-todos"],
            "certainty": "static",
            "how": f"read from the subagents' tools: {', '.join(todo)} hold write_todos",
            "precondition": f"{launch}; {todo} each write a `todos` list of their own",
        })
    structured = [s["name"] for s in subagents if s.get("response_format")]
    if structured:
        findings.append({
            "pattern": "parallel subagents with structured responses",
            "where": ["task", f"subagents with a response_format: {structured}"],
            "probes": ["deepagents/subagents/structured-response"],
            "certainty": "static",
            "how": f"read from the subagents' model nodes: {', '.join(structured)} have a response_format",
            "precondition": f"{launch}; {structured} each end with a `structured_response`",
        })
    writes = {
        f"task/{s['name']}": {
            "keys": sorted(
                (["files"] if s.get("file_tools") and s.get("backend") == "state" else [])
                + (["todos"] if s.get("todos") else [])
                + (["structured_response"] if s.get("response_format") else [])
            ),
            "how": "static" if s["readable"] else "unknown",
        }
        for s in subagents
    }
    return {
        "framework": "deepagents",
        "kind": type(target).__name__,
        "subagents": subagents,
        "writes": writes,
        "unknown_writers": [f"task/{name}" for name in unknown],
        "findings": findings,
    }
