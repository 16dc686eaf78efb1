// A ParallelAgent child that throws while a sibling is in flight (the counterpart of
// adk/parallel-agent/child-exception-running-sibling in suites/adk/test_parallel_production.py).
import { ParallelAgent } from "@google/adk";
import { Gate, Vacuous, probe, settle } from "../fanin_node.mjs";
import { Step, fate, runTurn } from "./kit.mjs";

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
