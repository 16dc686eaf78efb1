// Mastra's workflow state under `.parallel([a, b]).then(join)`: what two parallel steps' setState calls leave
// in the one state a run has, in each forced finish order, and what the join's input (keyed by step id) keeps.
import { probe } from "../fanin_node.mjs";
import { inTurns, needState, workflows, writer } from "./kit.mjs";

const ORDERS = [["a", "b"], ["b", "a"]];

probe({
  "id": "mastra/join/input-keyed",
  "title": "Two parallel steps return an output with the same field (result: A, result: B); the join reads its input; finish orders a,b and b,a",
  "claim": {
    "text": "The step after .parallel([a, b]) gets one object keyed by step id ({a: output of a, b: output of b}; getStepOutput of a parallel entry), so two outputs with the same field never collide and neither depends on the finish order.",
    "source": "https://github.com/mastra-ai/mastra/blob/main/packages/core/src/workflows/default.ts",
    "expect": {"hazard": "safe", "value.a,b.joined.a.result": "A", "value.b,a.joined.b.result": "B"}
  }
}, async function joinInputKeyed(obs) {
  const api = await workflows(obs);
  const runs = await inTurns(api, ORDERS, { act: async (_args, name) => ({ result: name.toUpperCase() }) });
  const value = {};
  const lost = [];
  for (const [order, { result, joined }] of Object.entries(runs)) {
    value[order] = { status: result.status, joined: joined ?? null };
    for (const name of ["a", "b"]) if (joined?.[name]?.result !== name.toUpperCase()) lost.push(`${order}: ${name}`);
  }
  obs.record(value, {
    label: lost.length ? `lost ${lost.length} of 4 outputs` : "both outputs kept, keyed by step id",
    detail: `the join's input: ${JSON.stringify(Object.fromEntries(Object.entries(value).map(([o, v]) => [o, v.joined])))}`,
    hazard: lost.length ? "silent" : "safe",
  });
});

probe({
  "id": "mastra/workflow-state/read-modify-write",
  "title": "Two parallel steps each read state.n (0), await their turn, and setState({...state, n: n + 1}); finish orders a,b and b,a",
  "claim": {
    "text": "A step's state is what the engine handed it when it started; setState is applied to the run's one state only as the step's result is folded in, with no merge of the key: both steps read 0, both write 1, one increment is lost without an error.",
    "source": "https://github.com/mastra-ai/mastra/blob/main/packages/core/src/workflows/handlers/step.ts",
    "expect": {"value.a,b.final.n": 1, "value.b,a.final.n": 1}
  }
}, async function readModifyWrite(obs) {
  const api = await workflows(obs);
  await needState(api);
  const runs = await inTurns(api, ORDERS, {
    initialState: { n: 0 },
    body: async (args) => writer(args).read("n"),
    act: async (args, _name, n) => writer(args).write("n", n + 1),
  });
  const value = Object.fromEntries(Object.entries(runs).map(([order, { result }]) => [order, { status: result.status, final: { n: result.state?.n ?? null } }]));
  const lost = Object.values(value).filter((v) => v.final.n !== 2).length;
  obs.record(value, {
    label: lost ? "an increment lost, no error" : "both increments kept",
    detail: Object.entries(value).map(([o, v]) => `${o}: n = ${v.final.n} (${v.status})`).join("; "),
    hazard: lost ? "silent" : "safe",
  });
});

probe({
  "id": "mastra/workflow-state/own-keys",
  "title": "Two parallel steps each setState({...state, [own key]: value}) (a_done, b_done), with no read across an await; finish orders a,b and b,a",
  "claim": {
    "text": "Whether writes to distinct keys survive depends on how the engine folds a step's setState into the run's state: replaced by the last finisher's whole state, the first finisher's key is lost; merged into one live object (Object.assign in applyMutableContext), both are kept and a step still running sees its sibling's key in the state it was handed.",
    "source": "https://github.com/mastra-ai/mastra/blob/main/packages/core/src/workflows/default.ts",
    "expect": {"value.a,b.final.b_done": true, "value.b,a.final.a_done": true}
  }
}, async function ownKeys(obs) {
  const api = await workflows(obs);
  await needState(api);
  const runs = await inTurns(api, ORDERS, {
    act: async (args, name) => {
      const sibling = name === "a" ? "b_done" : "a_done";
      const sawSibling = sibling in (args.state ?? {});
      await args.setState({ ...(args.state ?? {}), [`${name}_done`]: true });
      return { saw_sibling: sawSibling };
    },
  });
  const value = {};
  const lost = [];
  for (const [order, { result, joined }] of Object.entries(runs)) {
    const final = { a_done: result.state?.a_done ?? null, b_done: result.state?.b_done ?? null };
    const second = order.split(",")[1];
    value[order] = { status: result.status, final, second_saw_first: joined?.[second]?.saw_sibling ?? null };
    for (const [key, kept] of Object.entries(final)) if (kept !== true) lost.push(`${order}: ${key}`);
  }
  const live = Object.values(value).every((v) => v.second_saw_first === true);
  obs.record(value, {
    label: lost.length ? `the first finisher's key lost (${lost.length} of 4)` : `both keys kept${live ? ", state live" : ""}`,
    detail: Object.entries(value).map(([o, v]) => `${o}: final ${JSON.stringify(v.final)}, the second finisher ${v.second_saw_first ? "saw" : "did not see"} the first's key in its state`).join("; "),
    hazard: lost.length ? "silent" : "safe",
  });
});
