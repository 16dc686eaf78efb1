// Mitigations of Mastra's workflow-state hazards: each is its hazard probe's run (same steps, same turns) with
// the fix applied, in both finish orders, judged by suites/fanin_node.mjs's judge (every write kept, the
// same outcome in every order). The fix is the one Mastra's own design offers: a parallel step hands its
// write to the join as its output (the join's input is keyed by step id), and the join alone writes state.
import { recordJudged, probe } from "../fanin_node.mjs";
import { inTurns, needState, workflows, writer } from "./kit.mjs";

const ORDERS = [["a", "b"], ["b", "a"]];

probe({
  "id": "mastra/workflow-state/read-modify-write-mitigated",
  "title": "read-modify-write, mitigated: the two parallel steps return their increment as output (no setState); the join adds both to state.n; finish orders a,b and b,a",
  "claim": {
    "text": "Return each branch's increment as its step output and let the step after .parallel add them to state: the join's input holds both, keyed by step id, so no increment is lost in either order.",
    "source": "https://mastra.ai/docs/workflows/control-flow",
    "expect": {"hazard": "safe"}
  }
}, async function readModifyWriteMitigated(obs) {
  const api = await workflows(obs);
  await needState(api);
  const runs = await inTurns(api, ORDERS, {
    initialState: { n: 0 },
    act: async () => ({ add: 1 }),
    join: async (args) => {
      const { read, write } = writer(args);
      const adds = Object.values(args.inputData ?? {}).reduce((sum, out) => sum + (out?.add ?? 0), 0);
      await write("n", read("n") + adds);
    },
  });
  const judged = {};
  for (const [order, { result }] of Object.entries(runs)) {
    const n = result.state?.n ?? 0;
    judged[order] = { made: ["a: +1", "b: +1"], kept: ["a: +1", "b: +1"].slice(0, n), result: { n }, observed: { status: result.status } };
  }
  recordJudged(obs, { "outputs to the join, the join writes state": judged });
});

probe({
  "id": "mastra/workflow-state/own-keys-mitigated",
  "title": "own-keys, mitigated: the two parallel steps return their key as output (no setState); the join writes both into state; finish orders a,b and b,a",
  "claim": {
    "text": "Hand each branch's write to the join as its step output and write state only in the join: both keys are kept whether the engine replaces or merges a parallel step's state.",
    "source": "https://mastra.ai/docs/workflows/control-flow",
    "expect": {"hazard": "safe"}
  }
}, async function ownKeysMitigated(obs) {
  const api = await workflows(obs);
  await needState(api);
  const runs = await inTurns(api, ORDERS, {
    act: async (_args, name) => ({ [`${name}_done`]: true }),
    join: async (args) => {
      await args.setState({ ...(args.state ?? {}), ...Object.assign({}, ...Object.values(args.inputData ?? {})) });
    },
  });
  const judged = {};
  for (const [order, { result }] of Object.entries(runs)) {
    const final = { a_done: result.state?.a_done ?? null, b_done: result.state?.b_done ?? null };
    judged[order] = { made: ["a_done", "b_done"], kept: Object.keys(final).filter((k) => final[k] === true), result: final, observed: { status: result.status } };
  }
  recordJudged(obs, { "outputs to the join, the join writes state": judged });
});
