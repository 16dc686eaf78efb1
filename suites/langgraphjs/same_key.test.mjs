// Writes to one plain key (no reducer) from parallel and sequential nodes.
import { Annotation, START, StateGraph } from "@langchain/langgraph";
import { probe } from "../fanin_node.mjs";
import { stepOf } from "./kit.mjs";

probe({
  "id": "langgraphjs/same-key/no-reducer",
  "title": "Two nodes fanned out from START write one plain key in the same superstep",
  "claim": {
    "text": "A key without a reducer takes one value per superstep; two parallel writes raise InvalidUpdateError.",
    "source": "https://docs.langchain.com/oss/javascript/langgraph/errors/INVALID_CONCURRENT_GRAPH_UPDATE",
    "expect": {"outcome": "raises:InvalidUpdateError"}
  }
}, async function noReducer(obs) {
  const State = Annotation.Root({ value: Annotation() });
  const steps = {};
  const writer = (name, value) => (state, config) => {
    steps[name] = stepOf(config);
    return { value };
  };
  const graph = new StateGraph(State)
    .addNode("a", writer("a", "A"))
    .addNode("b", writer("b", "B"))
    .addEdge(START, "a")
    .addEdge(START, "b")
    .compile();
  const final = await obs.framework(() => graph.invoke({ value: "init" }), { value: () => ({ writer_steps: steps }) });
  obs.requireSameStep(steps, 2, "writers");
  const kept = final.value;
  const lost = ["A", "B"].filter((v) => v !== kept);
  obs.record({ final, writer_steps: steps }, {
    label: lost.length ? `last write wins: ${kept}` : `kept: ${kept}`,
    detail: lost.length ? `no error; last write wins: ${kept}` : `no error; value: ${kept}`,
    hazard: lost.length ? "silent" : "safe",
  });
});

probe({
  "id": "langgraphjs/same-key/across-supersteps",
  "title": "Two nodes in sequence write one plain key",
  "claim": {
    "text": "Without a reducer each superstep's single write replaces the value: the later node wins, no error.",
    "source": "https://docs.langchain.com/oss/javascript/langgraph/graph-api#reducers",
    "expect": {"value.final.value": "SECOND"}
  }
}, async function acrossSupersteps(obs) {
  const State = Annotation.Root({ value: Annotation() });
  const steps = {};
  const writer = (name, value) => (state, config) => {
    steps[name] = stepOf(config);
    return { value };
  };
  const graph = new StateGraph(State)
    .addNode("first", writer("first", "FIRST"))
    .addNode("second", writer("second", "SECOND"))
    .addEdge(START, "first")
    .addEdge("first", "second")
    .compile();
  const final = await obs.framework(() => graph.invoke({ value: "init" }), { value: () => ({ writer_steps: steps }) });
  const lost = final.value !== "FIRST";
  obs.record({ final, writer_steps: steps }, {
    label: `later step wins: ${final.value}`,
    detail: `no error; value after both steps: ${final.value}${lost ? "; the first write is gone" : ""}`,
    hazard: lost ? "silent" : "safe",
  });
});
