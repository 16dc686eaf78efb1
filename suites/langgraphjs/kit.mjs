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
