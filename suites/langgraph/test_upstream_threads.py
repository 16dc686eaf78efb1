"""Two processes invoke the same thread on one durable checkpointer, as users report it upstream."""


import lg_persist
import lg_procs
from fanin.probe import Claim, Observer, harm, probe

OWNERSHIP_ISSUE = "https://github.com/langchain-ai/langgraph/issues/8796"


@probe(
    "langgraph/threads/two-processes-one-thread",
    title="Two worker processes invoke one thread on one store (a SQLite file; PostgreSQL): both read its latest"
    " checkpoint before either writes, then A finishes before B writes; B reads A's half-done run (A's node"
    " held), A finishes, then B writes; and, as the control, B starts after A finished",
    claim=Claim(
        "A thread has no single-writer guarantee: two runs that overlap both succeed, the checkpoint chain"
        " forks, and the latest state holds only the later run's writes; run one after the other, each"
        " continues the other's state.",
        OWNERSHIP_ISSUE,
        expect={
            "value.overlapping.A.returned": ["A:work", "from-A", "seed", "seed:work"],
            "value.one-after-the-other.thread.latest": ["A:work", "B:work", "from-A", "from-B", "seed", "seed:work"],
        },
    ),
    sources=[OWNERSHIP_ISSUE, "https://docs.langchain.com/oss/python/langgraph/persistence#threads"],
    # SQLite first: the default variant (and `fanin repro`) needs no server; #8796 is about PostgreSQL
    backends=("sqlite", "postgres"),
)
def test_two_processes_one_thread(obs: Observer) -> None:
    if obs.backend == "sqlite":
        obs.need("langgraph.checkpoint.sqlite", "SqliteSaver")
    else:
        obs.need("langgraph.checkpoint.postgres", "PostgresSaver")

    def scenario(target: str, thread: str, how: str) -> dict:
        seeder, pipe = lg_procs.fork(lg_procs.seed, obs.backend, target, thread)
        lg_procs.ask(pipe, "seeded", "the seed run")
        lg_procs.finish(seeder, pipe)
        workers = {}
        read = {}
        done = {}
        for name in ("A", "B"):
            hold = how == "mid-run" and name == "A"
            workers[name] = lg_procs.fork(lg_procs.invoke_when_told, obs.backend, target, thread, name, hold)
            if how == "overlapping":
                continue
            read[name] = lg_procs.ask(workers[name][1], "read", name)
            if how == "sequential" or hold:  # sequential: B starts only after A has finished
                workers[name][1].send("go")
            if how == "sequential":
                done[name] = lg_procs.ask(workers[name][1], "done", name)
            elif hold:
                lg_procs.ask(workers["A"][1], "working", "A")  # A's input is saved, its node runs: B reads from here
        if how == "mid-run":
            if read["A"] == read["B"]:
                obs.vacuous(f"B read the checkpoint A started from ({read}): A's run was not under way")
            workers["A"][1].send("finish")  # A finishes while B waits between its read and its writes
            done["A"] = lg_procs.ask(workers["A"][1], "done", "A")
            workers["B"][1].send("go")
            done["B"] = lg_procs.ask(workers["B"][1], "done", "B")
        if how == "overlapping":
            for name in ("A", "B"):
                read[name] = lg_procs.ask(workers[name][1], "read", name)
            if read["A"] != read["B"]:
                obs.vacuous(f"the workers read different checkpoints ({read}): they never overlapped")
            for name in ("A", "B"):  # A writes everything before B writes anything
                workers[name][1].send("go")
                done[name] = lg_procs.ask(workers[name][1], "done", name)
        for process, pipe in workers.values():
            lg_procs.finish(process, pipe)
        reader, pipe = lg_procs.fork(lg_procs.read_thread, obs.backend, target, thread)
        state = lg_procs.ask(pipe, "state", "the reader")
        lg_procs.finish(reader, pipe)
        return {
            "read_same_checkpoint": read["A"] == read["B"],
            "A": done["A"],
            "B": done["B"],
            "thread": state,
        }

    def run_all(target: str) -> dict:
        return {
            "overlapping": scenario(target, "overlapping", "overlapping"),
            "mid-run": scenario(target, "mid-run", "mid-run"),  # B reads A's half-done run, writes after A ends
            "one-after-the-other": scenario(target, "sequential", "sequential"),
        }

    if obs.backend == "sqlite":
        seen = run_all(str(obs.scratch / "threads.sqlite"))
    else:
        with lg_persist._database(obs) as dsn:  # closed in this process before any fork
            seen = run_all(dsn)

    readings = {case: _fork_reading(s) for case, s in seen.items()}
    for case, s in seen.items():
        s["reading"] = readings[case][0]
    hazard = max((h for _, h in readings.values()), key=harm)
    over = seen["overlapping"]
    label = (
        f"overlap: {'A lost' if 'A:work' not in (over['thread']['latest'] or []) else 'both kept'},"
        f" {over['thread']['unreachable_from_latest']} ckpt unreachable"
        if hazard != "loud"
        else f"overlap: {readings['overlapping'][0]}"
    )
    obs.record(
        seen,
        label=label[:40],
        detail="; ".join(
            f"{case}: {readings[case][0]} (A {s['A']}, B {s['B']}, latest {s['thread']['latest']},"
            f" {s['thread']['checkpoints']} checkpoints, {s['thread']['unreachable_from_latest']} unreachable from the"
            " latest)"
            for case, s in seen.items()
        ),
        hazard=hazard,
    )


def _fork_reading(s: dict) -> tuple[str, str]:
    """(what the latest state kept of both runs, hazard)."""
    raised = [name for name in ("A", "B") if "raises" in s[name]]
    latest = s["thread"]["latest"] or []
    lost = sorted(item for item in ("from-A", "A:work", "from-B", "B:work") if item not in latest)
    if raised and not lost:
        return f"{', '.join(raised)} raises, nothing lost", "loud"
    if raised:
        return f"{', '.join(raised)} raises; {lost} not in the latest state", "loud"
    if lost:
        return f"both succeed; latest state lacks {lost}", "silent"
    return "both succeed; latest state has both", "safe"
