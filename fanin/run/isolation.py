"""Keep probe runs off the network: a network namespace where the OS allows one, else the in-process block.

In a fresh network namespace the only interface is loopback (brought up, so local
IPC over 127.0.0.1 inside the run still works), and it is not the machine's loopback:
whatever a probe does (TCP, UDP, a raw `_socket`, a `curl` subprocess), nothing
leaves, and nothing on the machine can be reached. Unix sockets are files, so the
PostgreSQL server the harness runs stays reachable. `unshare --net` needs root or
unprivileged user namespaces; where neither works the plugin's in-process block
(fanin.run.netblock: TCP connects and DNS refused in Python) is the only guard, and the
result set records which one was in force.
"""

from __future__ import annotations

import shutil
import subprocess
from functools import cache

from fanin.model import contract

NAMESPACE = "network namespace (loopback only)"
IN_PROCESS = "in-process block only (TCP connects and DNS lookups refused in Python)"
ENV = contract.NETWORK_ISOLATION

# Inside the namespace: bring loopback up if `ip` exists, then become the real command.
_SHIM = 'command -v ip >/dev/null 2>&1 && ip link set lo up 2>/dev/null; exec "$@"'


@cache
def namespace_prefix() -> tuple[str, ...]:
    """The command prefix that runs a program in a new network namespace, or () where none can be made."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return ()
    for flags in (("--net",), ("--user", "--map-root-user", "--net")):
        try:
            done = subprocess.run([unshare, *flags, "true"], capture_output=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return (unshare, *flags, "sh", "-c", _SHIM, "sh")
    return ()


def wrap(command: list[str], allow_namespace: bool = True) -> tuple[list[str], str]:
    """The command to run, and the isolation it will have (recorded in the result set)."""
    prefix = namespace_prefix() if allow_namespace else ()
    if prefix:
        return [*prefix, *command], NAMESPACE
    return list(command), IN_PROCESS
