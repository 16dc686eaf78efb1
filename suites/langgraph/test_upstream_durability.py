"""A process killed in the middle of a parallel superstep, and two processes on one thread: what a durable
checkpointer holds, and what runs again, as users report it upstream."""

import os
import signal


import lg_persist
import lg_procs
from fanin.probe import Claim, Observer, harm, probe

CRASH_ISSUE = "https://github.com/langchain-ai/langgraph/issues/8039"
DURABILITY_DOC = "https://docs.langchain.com/oss/python/langgraph/durable-execution#durability-modes"


def _kill_reading(seen: dict) -> tuple[str, str]:
    """test_kill_mid_superstep's reading of one restart: (what it says, its hazard)."""
    runs = seen["runs_on_restart"]
    final = seen["final"] or []
    if isinstance(seen["resume"], dict):
        return f"resume raises {seen['resume']['raises']}", "loud"
    if not final:
        return "nothing saved: the run is lost", "silent"
    if any(final.count(item) > 1 for item in final) or sorted(final) != ["fast", "join", "prep", "slow"]:
        return f"final {final}", "silent"
    if not seen["fast_finished_before_kill"]:
        return "fast had not run: both run", "safe"
    if runs.get("fast"):
        return "finished fast runs again", "silent"
    return "only slow runs again", "safe"


def _kill_word(text: str) -> str:
    """A reading of test_kill_mid_superstep in one word, for its label."""
    for start, word in (("resume raises", "raises"), ("nothing", "lost"), ("final", "wrong"), ("finished", "re-runs fast")):
        if text.startswith(start):
            return word
    return "ok"


@probe(
    "langgraph/durability/kill-mid-superstep",
    title="prep, then `fast` and `slow` in parallel; the process is killed (SIGKILL) once fast has finished while"
    " slow is still running, once every save the mode makes by then has returned (and with the checkpoint after"
    " prep held in its save), under each durability mode; a new process on the same store resumes the thread",
    claim=Claim(
        "A durable checkpointer keeps the writes of nodes that finished in an interrupted superstep as pending"
        " writes: after a crash, resuming the thread re-runs only the node that had not finished, and each write"
        " reaches the state once. Durability `exit` saves nothing until the run exits, so a crash loses the run.",
        DURABILITY_DOC,
        expect={
            "value.settings.sync.all-saved.runs_on_restart": {"join": 1, "slow": 1},
            "value.settings.async.all-saved.runs_on_restart": {"join": 1, "slow": 1},
            "value.settings.async.checkpoint-held.runs_on_restart": {"join": 1, "slow": 1},
            "value.settings.sync.all-saved.final": ["fast", "join", "prep", "slow"],
        },
    ),
    sources=[CRASH_ISSUE, "https://github.com/langchain-ai/langgraph/issues/8234"],
    backends=("sqlite", "postgres"),
)
def test_kill_mid_superstep(obs: Observer) -> None:
    if obs.backend == "sqlite":
        obs.need("langgraph.checkpoint.sqlite", "SqliteSaver")
    else:
        obs.need("langgraph.checkpoint.postgres", "PostgresSaver")
    api, settings = lg_procs.durability_settings(obs)

    def crash_and_restart(target: str, name: str, options: dict, hold: bool) -> dict:
        thread = f"kill-{name}-{'held' if hold else 'saved'}"
        worker, pipe = lg_procs.fork(
            lg_procs.run_until_killed, obs.backend, target, thread, options, lg_procs.save_plan(name), hold
        )
        try:
            if not pipe.poll(60):
                raise RuntimeError("the worker never reached the gated point (a broken worker)")
            kind, seen = pipe.recv()
            if kind == "worker-error":
                raise RuntimeError(f"the worker failed:\n{seen}")
            if kind != "gated":
                raise RuntimeError(f"the worker said {kind}: {seen}")
            if seen["hangs"]:
                obs.vacuous(f"{name}: {seen['hangs'][0]}")
            if seen["fast_finished"]:  # (with its checkpoint held, a step that waits for it never started)
                if not seen["slow_in_flight"]:
                    obs.vacuous("slow was never in flight while fast finished")
                obs.require_same_step({k: v for k, v in seen["steps"].items() if k in ("fast", "slow")}, expected=2)
        finally:
            os.kill(worker.pid, signal.SIGKILL)
            worker.join(30)
            pipe.close()
        killed = {"signal": -worker.exitcode if worker.exitcode and worker.exitcode < 0 else worker.exitcode}
        again, pipe = lg_procs.fork(lg_procs.restart, obs.backend, target, thread, options)
        try:
            if not pipe.poll(60):
                raise RuntimeError("the restarted worker never answered (a broken worker)")
            kind, after = pipe.recv()
            if kind == "worker-error":
                raise RuntimeError(f"the restarted worker failed:\n{after}")
        finally:
            again.join(30)
            pipe.close()
        return {
            "runs_before_kill": seen["runs"],
            "fast_finished_before_kill": seen["fast_finished"],
            "fast_write_saved_before_kill": seen["fast_saved"],
            "its_checkpoint_saved_before_kill": seen["checkpoint_saved"],
            "its_checkpoint_held": seen["checkpoint_held"],
            "saves_started_before_kill": seen["saves_started"],
            "killed_by": killed["signal"],
            **after,
        }

    variants = {"all-saved": False, "checkpoint-held": True}
    observed: dict[str, dict] = {}
    if obs.backend == "sqlite":
        for name, options in settings.items():
            observed[name] = {
                variant: crash_and_restart(str(obs.scratch / f"{name}-{variant}.sqlite"), name, options, hold)
                for variant, hold in variants.items()
            }
    else:
        with lg_persist._database(obs) as dsn:  # closed in this process before any fork
            for name, options in settings.items():
                observed[name] = {
                    variant: crash_and_restart(dsn, name, options, hold) for variant, hold in variants.items()
                }

    readings = {(name, variant): _kill_reading(seen) for name, by in observed.items() for variant, seen in by.items()}
    for (name, variant), (text, _) in readings.items():
        observed[name][variant]["reading"] = text
    worst = max((hazard for _, hazard in readings.values()), key=harm)

    grouped: dict[str, list[str]] = {}
    for name in observed:
        text = max((readings[(name, v)] for v in variants), key=lambda r: harm(r[1]))[0]
        grouped.setdefault(_kill_word(text), []).append(name.replace("checkpoint_during=", "cd="))
    obs.record(
        {"api": api, "settings": observed},
        label="; ".join(f"{', '.join(names)} {word}" for word, names in grouped.items()),
        detail="; ".join(
            f"{name}/{variant}: {readings[(name, variant)][0]} (fast finished {seen['fast_finished_before_kill']},"
            f" its write saved {seen['fast_write_saved_before_kill']}, its checkpoint saved"
            f" {seen['its_checkpoint_saved_before_kill']}; found {seen['found']}; restart ran {seen['runs_on_restart']})"
            for name, by in observed.items()
            for variant, seen in by.items()
        ),
        hazard=worst,
    )
