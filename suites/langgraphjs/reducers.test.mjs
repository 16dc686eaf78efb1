// Keys with reducers: what parallel writes fold into.
import { Annotation, START, StateGraph } from "@langchain/langgraph";
import { probe } from "../fanin_node.mjs";
import { appendKey, stepOf } from "./kit.mjs";

probe({
  "id": "langgraphjs/reducers/add",
  "title": "Two parallel writers append to a list key whose reducer concatenates",
  "claim": {
    "text": "A reducer folds every write of a superstep into the key, so both parallel writes are kept.",
    "source": "https://docs.langchain.com/oss/javascript/langgraph/graph-api#reducers",
    "expect": {"hazard": "order-coupled"}
  }
}, async function add(obs) {
  const State = Annotation.Root({ items: appendKey() });
  const steps = {};
  const writer = (name, item) => (state, config) => {
    steps[name] = stepOf(config);
    return { items: [item] };
  };
  const graph = new StateGraph(State)
    .addNode("a", writer("a", "A"))
    .addNode("b", writer("b", "B"))
    .addEdge(START, "a")
    .addEdge(START, "b")
    .compile();
  const final = await obs.framework(() => graph.invoke({ items: [] }), { value: () => ({ writer_steps: steps }) });
  obs.requireSameStep(steps, 2, "writers");
  const items = final.items;
  const bothKept = [...items].sort().join() === "A,B";
  obs.record({ final, writer_steps: steps }, {
    label: bothKept ? `both kept: ${items.join(", ")}` : `lost: ${items.join(", ")}`,
    detail: bothKept ? `both kept, folded as ${JSON.stringify(items)}` : `writes lost: ${JSON.stringify(items)}`,
    hazard: bothKept ? "order-coupled" : "silent",
  });
});
