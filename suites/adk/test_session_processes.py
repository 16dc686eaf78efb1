"""One stored session, two worker processes: the production case of two workers behind one database."""

import re
import time
from multiprocessing.connection import Connection
from typing import Any

from adk_kit import APP, USER
from adk_sessions import close_service, in_one_second, keeps_whole_seconds, session_store, start_worker, window_start

from fanin.probe import Claim, Observer, probe

# Each worker appends its events in this interleaving, one append at a time, after both hold the session.
STEPS = ("a1", "b1", "a2", "b2")
PATIENCE = 30.0  # seconds a worker may take to answer; only ever reached when a worker is broken


def receive(conn: Connection, name: str) -> tuple:
    """The worker's next message; a worker that dies or stops answering is a defect of the probe run."""
    if not conn.poll(PATIENCE):
        raise RuntimeError(f"worker {name} did not answer within {PATIENCE} s")
    message = conn.recv()
    if message[0] == "worker-error":
        raise RuntimeError(f"worker {name} failed:\n{message[1]}")
    return message


def outcome(append: str | dict[str, Any]) -> str:
    return append if isinstance(append, str) else f"raises {append['raises']}"


@probe(
    "adk/session/concurrent-processes",
    title="Two worker processes each read one stored session, then append events with state_delta in turn",
    claim=Claim(
        "DatabaseSessionService.append_event refuses a session object older than the stored session: the "
        "worker appending from a stale copy gets a 'stale session' error instead of writing.",
        "https://github.com/google/adk-python/issues/1733",
        expect={"value.appends.b1.is_value_error": True},
    ),
    sources=(
        "https://github.com/google/adk-python/issues/3717",
        "https://github.com/google/adk-python/issues/4751",
    ),
    backends=("sqlite", "postgres", "sqlite-native"),
)
async def test_concurrent_processes(obs: Observer) -> None:
    store = session_store(obs)

    async def scenario(attempt: int) -> tuple[tuple, bool, tuple[float, float]]:
        session_id = f"s{attempt}"
        # Opened first, it creates the tables, which the workers then find; closed before they fork.
        await close_service(store.open(target))
        workers = {name: start_worker(obs.backend, target, name, APP, USER, session_id) for name in ("a", "b")}
        try:
            for name, (_, conn) in workers.items():
                receive(conn, name)  # its service is open
            service = store.open(target)
            try:
                start = await window_start(attempt)
                created = await service.create_session(app_name=APP, user_id=USER, session_id=session_id)
            finally:
                await close_service(service)
            # Both workers hold a copy of the session before either appends.
            for name, (_, conn) in workers.items():
                conn.send("read")
                receive(conn, name)
            appends: dict = {}
            views: dict = {}
            messages: dict = {}
            stopped: set = set()
            for key in STEPS:
                name = key[0]
                if name in stopped:
                    appends[key] = "not attempted: its worker stopped"
                    continue
                conn = workers[name][1]
                conn.send(key)
                reply = receive(conn, name)
                if reply[0] == "appended":
                    appends[key] = "appended"
                    views[name] = reply[1]
                else:
                    appends[key] = reply[1]
                    messages[key] = reply[2]
                    stopped.add(name)
            end = time.time()
            for name, (process, conn) in workers.items():
                if name not in stopped:
                    conn.send(None)
                process.join(PATIENCE)
        finally:
            for process, conn in workers.values():
                if process.is_alive():
                    process.kill()
                    process.join()
                conn.close()
        service = store.open(target)
        try:
            stored = await service.get_session(app_name=APP, user_id=USER, session_id=session_id)
        finally:
            await close_service(service)
        return (appends, views, messages, stored), keeps_whole_seconds(created), (start, end)

    async with store as target:
        (appends, views, messages, stored), clock = await in_one_second(obs, scenario)
    state = dict(stored.state)
    appended = [key for key in STEPS if appends[key] == "appended"]
    value = {
        "appends": appends,
        "persisted": {key: state.get(key) for key in (*STEPS, "last")},
        "stored_events": [str(event.invocation_id).removeprefix("inv-") for event in stored.events],
        "worker_views": {name: [k for k in keys if k in STEPS] for name, keys in sorted(views.items())},
    }
    # A write is lost when its append returned but the store lacks its key, its event, or (last) its value.
    lost = [key for key in appended if state.get(key) is None]
    lost += [f"event {key}" for key in appended if key not in value["stored_events"]]
    if appended and state.get("last") != appended[-1]:
        lost.append(f"last={appended[-1]}")
    reordered = [key for key in value["stored_events"] if key in appended] != appended
    raised = [f"{key} raises {appends[key]['raises']}" for key in STEPS if isinstance(appends[key], dict)]
    kept = [key for key in STEPS if state.get(key) is not None]
    order = ",".join(value["stored_events"])
    wording = "; ".join(f"{key}: {re.sub(r'[0-9]+', 'N', text)}" for key, text in messages.items())
    obs.record(
        value,
        label=(f"{', '.join(raised)}; " if raised else "") + (f"lost {', '.join(lost)}" if lost else f"{len(kept)} of 4 kept"),
        detail=f"appends {', '.join(f'{k}: {outcome(v)}' for k, v in appends.items())}; "
        f"stored state keeps {', '.join(kept) or 'nothing'} (last={state.get('last')!r}); stored events {order}"
        + (f"; lost without error: {', '.join(lost)}" if lost else "")
        + ("; stored event order differs from the order of the appends" if reordered else "")
        + (f"; {wording}" if wording else "")
        + (f"; {clock}" if clock else ""),
        hazard="silent" if lost else "loud" if raised else "safe",
    )
