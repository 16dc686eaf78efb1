// Upstream reports about joins, probed in every LangGraph.js cell (the Python form is langgraph/join/unselected-branch).
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { probe } from "../fanin_node.mjs";
import { appendKey } from "./kit.mjs";

probe({
  "id": "langgraphjs/join/unselected-branch",
  "title": "A conditional edge selects only `a`; `join` waits on [\"a\", \"b\"]",
  "claim": {
    "text": "A list edge waits for every listed node; when a conditional edge never selects one of them the join and everything after it never run, and invoke() resolves normally (langgraphjs #2666).",
    "source": "https://github.com/langchain-ai/langgraphjs/issues/2666",
    "expect": {"value.ran": ["a"]}
  },
  "sources": ["https://github.com/langchain-ai/langgraph/issues/3249"]
}, async function unselectedBranch(obs) {
  const State = Annotation.Root({ items: appendKey() });
  const ran = [];
  const writer = (name) => () => {
    ran.push(name);
    return { items: [name] };
  };
  const builder = new StateGraph(State);
  for (const name of ["a", "b", "join", "after_join"]) builder.addNode(name, writer(name));
  const graph = builder
    .addConditionalEdges(START, () => ["a"], ["a", "b"])
    .addEdge(["a", "b"], "join")
    .addEdge("join", "after_join")
    .addEdge("after_join", END)
    .compile();
  const final = await obs.framework(() => graph.invoke({ items: [] }), { value: () => ({ ran }) });
  const joined = ran.includes("join");
  obs.record({ ran, final }, {
    label: joined ? "join runs" : "join never runs, no error",
    detail: `nodes run: ${JSON.stringify(ran)}; final ${JSON.stringify(final.items)}`,
    hazard: joined ? "safe" : "silent",
  });
});
