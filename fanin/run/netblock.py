"""Probes never touch the network: a connection attempt raises, and is remembered.

This is the in-process guard, inside the probe's own interpreter: it catches what Python
code does through `socket` (TCP/UDP connect, UDP sendto, DNS). The harness also runs the
whole probe process in a network namespace with only loopback (fanin.run.isolation), which is
what stops raw `_socket` calls and subprocesses; this guard is what *detects* an attempt
and turns the probe into `probe-error` instead of letting it swallow the failure.

The probe then becomes `probe-error` ("network blocked: ..."), so a probe that
quietly depended on a service can never pass. Unix sockets stay allowed:
asyncio's self-pipe and local IPC are not the network.
"""

from __future__ import annotations

import socket
from typing import Any


class Attempts:
    """The connection attempts refused since the last `clear()`: one guard per process, owned by the plugin."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def clear(self) -> None:
        self.seen.clear()


_active = Attempts()  # the socket patches are process-wide, so what they report to is too


class NetworkBlocked(ConnectionRefusedError):
    """Raised instead of connecting; an OSError subclass, as real refusals are."""


def _is_local_unix(sock: socket.socket) -> bool:
    return getattr(socket, "AF_UNIX", None) is not None and sock.family == socket.AF_UNIX


def _refuse(target: Any) -> NetworkBlocked:
    shown = ":".join(str(part) for part in target) if isinstance(target, tuple) else str(target)
    _active.seen.append(shown)
    return NetworkBlocked(f"fanin blocks the network inside probes (tried {shown})")


_original_connect = socket.socket.connect
_original_connect_ex = socket.socket.connect_ex
_original_sendto = socket.socket.sendto
_original_getaddrinfo = socket.getaddrinfo


def _connect(self: socket.socket, address: Any) -> None:
    if _is_local_unix(self):
        return _original_connect(self, address)
    raise _refuse(address)


def _connect_ex(self: socket.socket, address: Any) -> int:
    if _is_local_unix(self):
        return _original_connect_ex(self, address)
    raise _refuse(address)


def _sendto(self: socket.socket, data: Any, *args: Any) -> int:
    if _is_local_unix(self):
        return _original_sendto(self, data, *args)
    raise _refuse(args[-1])


def _getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
    raise _refuse((host, port))


def install(attempts: Attempts) -> None:
    """Patch `socket` so every attempt is refused and reported to `attempts`."""
    global _active
    _active = attempts
    socket.socket.connect = _connect  # type: ignore[method-assign,assignment]
    socket.socket.connect_ex = _connect_ex  # type: ignore[method-assign,assignment]
    socket.socket.sendto = _sendto  # type: ignore[method-assign,assignment]
    socket.getaddrinfo = _getaddrinfo


def uninstall() -> None:
    socket.socket.connect = _original_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _original_connect_ex  # type: ignore[method-assign]
    socket.socket.sendto = _original_sendto  # type: ignore[method-assign]
    socket.getaddrinfo = _original_getaddrinfo
