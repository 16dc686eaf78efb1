"""Helpers shared by the LangGraph probes.

Kept small on purpose: a probe's own function is its reproducer in the report, so
anything that decides what a probe observes stays in the probe. What lives here is
plumbing that several probes need the same way:

- `ThreadTurns`: force the order in which *sync* nodes finish, without sleeping.
- `message_view`: a langchain message as plain data (type, id, content).
"""

import threading


class ThreadTurns:
    """Let sync LangGraph nodes (run in its thread pool) finish one at a time, in a chosen order.

    Each node calls `turns.arrive(name)` first thing: it blocks until it is that
    node's turn. The first node in `order` is released by the last arrival, so all
    of them are proven to be in flight together. The probe drives the graph with
    `graph.stream(..., stream_mode="updates")` and calls `turns.finished(name)` on
    each node's update chunk: that chunk is made from the node's recorded writes,
    so the next node is released only once the previous one's writes exist.

    If not every node arrives within `patience` seconds (the framework ran them
    one by one), every node is released and `vacuous` says why: the probe then
    records `vacuous`. The delay only breaks a deadlock; it never decides an order.
    """

    def __init__(self, order: list[str], patience: float = 10.0) -> None:
        self.order = list(order)
        self.patience = patience
        self.arrived: list[str] = []
        self.acted: list[str] = []
        self.vacuous: str | None = None
        self._lock = threading.Lock()
        self._events = {name: threading.Event() for name in self.order}

    def arrive(self, name: str) -> None:
        with self._lock:
            self.arrived.append(name)
            if set(self.arrived) >= set(self.order):
                self._events[self.order[0]].set()
        if not self._events[name].wait(self.patience):
            missing = sorted(set(self.order) - set(self.arrived))
            self.vacuous = f"nodes {missing} were never in flight while {name} waited"
            for event in self._events.values():
                event.set()

    def finished(self, name: str) -> None:
        if name not in self._events:
            return
        self.acted.append(name)
        position = self.order.index(name)
        if position + 1 < len(self.order):
            self._events[self.order[position + 1]].set()


def message_view(message) -> dict:
    """A langchain message as plain data: its type, id and content."""
    return {"type": message.type, "id": message.id, "content": message.content}
