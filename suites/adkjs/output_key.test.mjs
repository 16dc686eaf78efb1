// LlmAgent children of a ParallelAgent storing their reply with outputKey (the counterpart of
// suites/adk/test_output_key.py). The model is FakeLlm, so LlmAgent's own outputKey path stores it.
import { LlmAgent, ParallelAgent } from "@google/adk";
import { probe } from "../fanin_node.mjs";
import { FakeLlm, Turns, runInTurns } from "./kit.mjs";

probe({
  "id": "adkjs/output-key/same-key",
  "title": "Three LlmAgent children of a ParallelAgent share one outputKey; their replies are stored in the orders a,b,c and c,b,a",
  "claim": {
    "text": "Parallel sub-agents share session state; to avoid race conditions each one should write its result to a distinct output key. A shared key keeps only one reply.",
    "source": "https://google.github.io/adk-docs/agents/workflow-agents/parallel-agents/",
    "expect": {"value.a,b,c.final": "reply c", "value.c,b,a.final": "reply a"}
  }
}, async function sameKey(obs) {
  const runs = {};
  for (const order of [["a", "b", "c"], ["c", "b", "a"]]) {
    const turns = new Turns(order);
    // each child hands on its turn once ADK has taken its reply (not when an event with the key shows up),
    // so the finish order is the gate's, and a reply dropped on its way to the session is not taken for the last
    const children = ["a", "b", "c"].map((name) => new LlmAgent({ name, instruction: "reply", outputKey: "result", model: new FakeLlm(`reply ${name}`, () => turns.wait(name), () => turns.done(name)) }));
    const writers = [];
    const onEvent = (event) => {
      if (event.actions?.stateDelta && "result" in event.actions.stateDelta) writers.push(event.author);
    };
    const { error, storedState } = await runInTurns(new ParallelAgent({ name: "fanout", subAgents: children }), turns, { onEvent, arrived: "reached the model before the first reply" });
    if (error) return obs.raised(error, { value: { order: order.join(","), output_key_events: writers } });
    runs[order.join(",")] = { finish_order: [...turns.acted], output_key_events: writers, final: (await storedState()).result ?? null };
  }
  const all = Object.values(runs);
  const lastWins = all.every((r) => r.finish_order.length && r.final === `reply ${r.finish_order[r.finish_order.length - 1]}`);
  const lost = all.reduce((n, r) => n + r.finish_order.filter((name) => r.final !== `reply ${name}`).length, 0);
  const stored = all.reduce((n, r) => n + r.output_key_events.length, 0);
  const finished = all.reduce((n, r) => n + r.finish_order.length, 0);
  const survivors = Object.entries(runs).map(([order, r]) => `${order} -> ${r.final}`).join("; ");
  obs.record(runs, {
    label: lastWins ? "last reply wins" : "not the last reply",
    detail: `${stored} of ${finished} replies stored under 'result' and ${lastWins ? "the last to finish wins" : "the survivor is not the last to finish"} (${survivors}); ${lost} replies lost, no error`,
    hazard: lost ? "silent" : "safe",
  });
});

probe({
  "id": "adkjs/output-key/distinct-keys",
  "title": "Three LlmAgent children of a ParallelAgent each have their own outputKey",
  "claim": {
    "text": "Give each parallel sub-agent its own output key; every reply is then kept in session state.",
    "source": "https://google.github.io/adk-docs/agents/workflow-agents/parallel-agents/",
    "expect": {"value.final": {"result_a": "reply a", "result_b": "reply b", "result_c": "reply c"}}
  }
}, async function distinctKeys(obs) {
  const turns = new Turns(["c", "b", "a"]);
  const children = ["a", "b", "c"].map((name) => new LlmAgent({ name, instruction: "reply", outputKey: `result_${name}`, model: new FakeLlm(`reply ${name}`, () => turns.wait(name)) }));
  const writers = [];
  const onEvent = (event) => {
    if (event.actions?.stateDelta && Object.keys(event.actions.stateDelta).length) {
      writers.push(event.author);
      turns.done(event.author);
    }
  };
  const { error, storedState } = await runInTurns(new ParallelAgent({ name: "fanout", subAgents: children }), turns, { onEvent, arrived: "reached the model before the first reply" });
  if (error) return obs.raised(error);
  const state = await storedState();
  const final = Object.fromEntries(["a", "b", "c"].map((n) => [`result_${n}`, state[`result_${n}`] ?? null]));
  const count = Object.values(final).filter((v) => v !== null).length;
  obs.record({ output_key_events: writers, final }, {
    label: `${count} of 3 replies kept`,
    detail: `${writers.length} outputKey events in the order ${writers.join(",")}; ${count} of 3 replies are in state`,
    hazard: count === 3 ? "safe" : "silent",
  });
});
