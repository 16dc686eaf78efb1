// Joins after branches of unequal length: separate edges vs a list edge.
import { Annotation, START, StateGraph } from "@langchain/langgraph";
import { probe } from "../fanin_node.mjs";
import { appendKey, joinHazard, stepOf } from "./kit.mjs";

probe({
  "id": "langgraphjs/join/separate-edges",
  "title": "`a` and `b -> b2` fan in to `join` with two separate addEdge calls",
  "claim": {
    "text": "With separate edges a node runs whenever any of its predecessors finished in the previous step: with branches of unequal length the join runs twice, the first time without the longer branch.",
    "source": "https://langchain-ai.github.io/langgraphjs/how-tos/branching/",
    "expect": {"value.join_runs[0].saw": ["a", "b"], "value.join_runs[1].saw": ["a", "b", "b2"], "value.join_runs[2]": "(absent)"}
  }
}, async function separateEdges(obs) {
  const State = Annotation.Root({ items: appendKey() });
  const joinRuns = [];
  const writer = (name) => () => ({ items: [name] });
  const join = (state, config) => {
    joinRuns.push({ step: stepOf(config), saw: [...state.items] });
    return {};
  };
  const graph = new StateGraph(State)
    .addNode("a", writer("a"))
    .addNode("b", writer("b"))
    .addNode("b2", writer("b2"))
    .addNode("join", join)
    .addEdge(START, "a")
    .addEdge(START, "b")
    .addEdge("b", "b2")
    .addEdge("a", "join")
    .addEdge("b2", "join")
    .compile();
  const final = await obs.framework(() => graph.invoke({ items: [] }), { value: () => ({ join_runs: joinRuns }) });
  obs.record({ join_runs: joinRuns, final }, {
    label: `join ×${joinRuns.length}`,
    detail: `join ran ${joinRuns.length} times, seeing ${JSON.stringify(joinRuns.map((r) => r.saw))}`,
    hazard: joinHazard(joinRuns),
  });
});

probe({
  "id": "langgraphjs/join/list-edge",
  "title": "`a` and `b -> b2` fan in to `join` with addEdge([\"a\", \"b2\"], \"join\")",
  "claim": {
    "text": "addEdge with a list of start nodes waits for all of them: the join runs once, after the longer branch, and sees every write.",
    "source": "https://langchain-ai.github.io/langgraphjs/how-tos/branching/",
    "expect": {"value.join_runs[0].saw": ["a", "b", "b2"], "value.join_runs[1]": "(absent)"}
  }
}, async function listEdge(obs) {
  const State = Annotation.Root({ items: appendKey() });
  const joinRuns = [];
  const writer = (name) => () => ({ items: [name] });
  const join = (state, config) => {
    joinRuns.push({ step: stepOf(config), saw: [...state.items] });
    return {};
  };
  const graph = new StateGraph(State)
    .addNode("a", writer("a"))
    .addNode("b", writer("b"))
    .addNode("b2", writer("b2"))
    .addNode("join", join)
    .addEdge(START, "a")
    .addEdge(START, "b")
    .addEdge("b", "b2")
    .addEdge(["a", "b2"], "join")
    .compile();
  const final = await obs.framework(() => graph.invoke({ items: [] }), { value: () => ({ join_runs: joinRuns }) });
  obs.record({ join_runs: joinRuns, final }, {
    label: `join ×${joinRuns.length}`,
    detail: `join ran ${joinRuns.length} times, seeing ${JSON.stringify(joinRuns.map((r) => r.saw))}`,
    hazard: joinHazard(joinRuns),
  });
});
