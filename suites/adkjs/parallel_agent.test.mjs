// A ParallelAgent child that throws while a sibling is in flight (the counterpart of
// adk/parallel-agent/child-exception-running-sibling in suites/adk/test_parallel_production.py).
import { ParallelAgent } from "@google/adk";
import { Gate, Vacuous, probe, settle } from "../fanin_node.mjs";
import { GatedWriter, Step, Turns, fate, runInTurns, runTurn } from "./kit.mjs";

probe({
  "id": "adkjs/parallel-agent/child-exception-running-sibling",
  "title": "A ParallelAgent child throws while its sibling is in flight (wrote result_c1, parked on a gate before result_c2); then the gate is opened",
  "claim": {
    "text": "ParallelAgent merges its children's event generators with Promise.race; when one child throws, the run rejects and the other generators are never resumed nor closed: the sibling is not cancelled, and an event it yields afterwards is never appended to the session.",
    "source": "https://github.com/google/adk-js/blob/main/core/src/agents/parallel_agent.ts",
    "expect": {"value.run.raises": "Error", "value.c_when_run_ended": "holding", "value.persisted.result_c2": null}
  }
}, async function childExceptionRunningSibling(obs) {
  const log = [];
  const hold = new Gate();
  const holding = new Gate();
  const children = [
    new Step({ name: "a", log, fail: true, failAfter: () => holding.wait() }),
    new Step({ name: "c", log, first: { result_c1: "C1" }, then: { result_c2: "C2" }, hold, holding }),
  ];
  const { events, error, storedState } = await runTurn(new ParallelAgent({ name: "fanout", subAgents: children }));
  if (fate(log, "a") !== "raised" || !log.some(([who, what]) => who === "c" && what === "holding")) {
    hold.open();
    throw new Vacuous(`c was not in flight when a raised: ${JSON.stringify(log)}`);
  }
  await settle();
  const cAtEnd = fate(log, "c");
  hold.open(); // the I/O c was waiting for completes: does a c left running still get its write in?
  await settle();
  const state = await storedState();
  const persisted = Object.fromEntries(["result_c1", "result_c2"].map((k) => [k, state[k] ?? null]));
  const value = {
    run: error ? { raises: error.name, message: String(error.message) } : "returned",
    event_authors: events.map((e) => e.author),
    c_when_run_ended: cAtEnd,
    c_after_hold_released: fate(log, "c"),
    persisted,
  };
  const sibling = { cancelled: "sibling cancelled", holding: "sibling left running" }[cAtEnd] ?? `c ${cAtEnd}`;
  const kept = Object.entries(persisted).filter(([, v]) => v !== null).map(([k]) => k);
  obs.record(value, {
    label: `${error ? error.name : "no error"}, ${sibling}`,
    detail: `runAsync ${error ? `rejects with ${error.name}: ${error.message}` : "returns"}; c, in flight when a threw, ${cAtEnd === "holding" ? "was not cancelled" : "was " + cAtEnd}`
      + (cAtEnd === "holding" ? `; once released it ran on (${fate(log, "c")}) but result_c2 ${persisted.result_c2 === null ? "never reached the session" : "was saved"}` : "")
      + `; persisted: ${kept.join(", ") || "nothing"}`,
    hazard: error ? "loud" : "silent",
    outcome: error ? `raises:${error.name}` : "ok",
  });
});

probe({
  "id": "adkjs/parallel-agent/same-key",
  "title": "Three ParallelAgent children emit a state delta for the same key, in the orders a,b,c and c,b,a",
  "claim": {
    "text": "Branches share session state and nothing merges their writes: each state delta is applied as its event arrives, so the last arrival wins and the others are lost without an error.",
    "source": "https://google.github.io/adk-docs/agents/workflow-agents/parallel-agents/",
    "expect": {"value.a,b,c.final": "C", "value.c,b,a.final": "A"}
  }
}, async function sameKey(obs) {
  const runs = {};
  for (const order of [["a", "b", "c"], ["c", "b", "a"]]) {
    const turns = new Turns(order);
    const children = ["a", "b", "c"].map((name) => new GatedWriter({ name, turns, delta: () => ({ result: name.toUpperCase() }) }));
    const deltas = [];
    const onEvent = (event) => {
      if (event.actions?.stateDelta && "result" in event.actions.stateDelta) {
        deltas.push(event.author);
        turns.done(event.author);
      }
    };
    const { error, storedState } = await runInTurns(new ParallelAgent({ name: "fanout", subAgents: children }), turns, { onEvent });
    if (error) return obs.raised(error, { value: { order: order.join(","), state_delta_events: deltas } });
    runs[order.join(",")] = { state_delta_events: deltas, final: (await storedState()).result ?? null };
  }
  const lastWins = Object.values(runs).every((r) => r.final === r.state_delta_events[r.state_delta_events.length - 1]?.toUpperCase());
  const lost = Object.entries(runs).flatMap(([order, r]) => order.split(",").filter((n) => r.final !== n.toUpperCase()).map((n) => `${order} | ${n.toUpperCase()}`));
  obs.record({ ...runs, lost }, {
    label: lastWins ? "last arrival wins" : "not the last arrival",
    detail: `${lastWins ? "last arrival wins" : "the final value is not the last arrival"}: ${Object.entries(runs).map(([k, r]) => `${k} -> ${r.final}`).join("; ")}; lost: ${lost.join(", ") || "nothing"}, no error`,
    hazard: lost.length ? "silent" : "safe",
  });
});

probe({
  "id": "adkjs/parallel-agent/read-modify-write",
  "title": "Two ParallelAgent children each read a dict key when they start and write back {...old, mine: value}",
  "claim": {
    "text": "A state delta replaces the value of a key; there is no merge or reducer, so concurrent read-modify-write of one key loses an update.",
    "source": "https://google.github.io/adk-docs/sessions/state/",
    "expect": {"hazard": "silent"}
  }
}, async function readModifyWrite(obs) {
  const turns = new Turns(["a", "b"]);
  const children = ["a", "b"].map((name) => new GatedWriter({ name, turns, delta: (read) => ({ tally: { ...(read.tally ?? {}), [name]: name.toUpperCase() } }) }));
  const onEvent = (event) => {
    if (event.actions?.stateDelta && "tally" in event.actions.stateDelta) turns.done(event.author);
  };
  const { error, storedState } = await runInTurns(new ParallelAgent({ name: "fanout", subAgents: children }), turns, { onEvent, state: { tally: { seed: "0" } }, arrived: "had read the tally before the first write" });
  if (error) return obs.raised(error);
  const tally = (await storedState()).tally ?? {};
  const lost = ["a", "b", "seed"].filter((k) => !(k in tally));
  obs.record({ final: tally, lost }, {
    label: lost.length ? `update of ${lost.join(", ")} lost` : "both updates kept",
    detail: `both read the tally before either wrote; final tally ${JSON.stringify(tally)}; lost: ${lost.join(", ") || "nothing"}`,
    hazard: lost.length ? "silent" : "safe",
  });
});
