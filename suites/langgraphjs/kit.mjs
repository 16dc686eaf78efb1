// Shared pieces of the LangGraph.js probes (hashed into each probe that uses them, by name).
import { Annotation } from "@langchain/langgraph";

export const JS_DOCS = "https://docs.langchain.com/oss/javascript/langgraph/graph-api";

// A list key whose reducer appends (operator.add in the Python probes).
export function appendKey() {
  return Annotation({ reducer: (left, right) => left.concat(right), default: () => [] });
}

// The superstep a node runs in, as LangGraph.js reports it in the node's config.
export function stepOf(config) {
  return config?.metadata?.langgraph_step ?? null;
}

// A join run recorded as the Python probes record it: the step and the items it saw.
export function joinHazard(runs) {
  if (runs.length === 1) return "safe";
  return "silent";
}

// The mitigation probes' two namings of the same two writers (suites/langgraph/lg_mitigation.py's NAMINGS):
// node name -> the writer's role (what it writes); LangGraph.js folds one superstep's writes by node name.
export const NAMINGS = { "a writes A, b writes B": { a: "A", b: "B" }, "a writes B, b writes A": { a: "B", b: "A" } };

// The writes (`node:item`) whose item is in `items`, counting repeats (lg_mitigation.kept_of).
export function keptOf(made, items) {
  const left = new Map();
  for (const item of items) left.set(JSON.stringify(item), (left.get(JSON.stringify(item)) ?? 0) + 1);
  const kept = [];
  for (const [node, item] of Object.entries(made)) {
    const key = JSON.stringify(item);
    if ((left.get(key) ?? 0) > 0) {
      left.set(key, left.get(key) - 1);
      kept.push(`${node}:${item}`);
    }
  }
  return kept;
}

// What a reading node does with a folded list: sort the entries by the key stored with each, keep the items.
export function byKey(entries) {
  return [...entries].sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0)).map((entry) => entry.item);
}

// A join run's writes against what it saw (test_mitigations_join.joined): kept = seen by every run of the join,
// wrong = the join did not run exactly once; the compared result is how often it ran.
export function joined(made, joinRuns, join = "join") {
  return {
    made,
    kept: made.filter((w) => joinRuns.length && joinRuns.every((saw) => saw.includes(w))),
    wrong: joinRuns.length !== 1 ? [`${join} ran ${joinRuns.length} times`] : [],
    result: { [`${join}_runs`]: joinRuns.length },
    observed: { [`${join}_saw`]: joinRuns },
  };
}

// An invoke's outcome as a mitigation run sees it (obs.attempt in the Python kit): the final state, or the
// error's name (LangGraph.js errors set it: InvalidUpdateError).
export async function attempt(fn) {
  try {
    return { returned: await fn() };
  } catch (error) {
    return { raises: error?.name || "Error" };
  }
}
