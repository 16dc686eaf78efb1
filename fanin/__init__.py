"""fanin: what happens to state when parallel agent branches fan back in.

The harness imports no agent framework; probes import `fanin.probe`.
"""


def __getattr__(name: str) -> str:
    """`fanin.__version__`, read from the installed metadata (pyproject's version) only when asked for."""
    if name != "__version__":
        raise AttributeError(name)
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("fanin")
    except PackageNotFoundError:  # a bare checkout on sys.path, never installed
        return "0+checkout"
