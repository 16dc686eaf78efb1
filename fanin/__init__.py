"""fanin: what happens to state when parallel agent branches fan back in.

The harness imports no agent framework; probes import `fanin.probe`.
"""

__version__ = "0.1.0"
