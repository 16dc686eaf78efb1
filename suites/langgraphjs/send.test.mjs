// Send fan-out: the order results fold in when workers finish in another order.
import { Annotation, START, StateGraph } from "@langchain/langgraph";
import { Gate, Vacuous, probe, settle } from "../fanin_node.mjs";
import { appendKey } from "./kit.mjs";

probe({
  "id": "langgraphjs/send/order",
  "title": "Send workers finish in the opposite order to the Send list: forward, reversed, and to two node names",
  "claim": {
    "text": "Send tasks of one superstep are folded in a deterministic order; map-reduce results come back in the order of the Send list, whatever the finishing order or target node names.",
    "source": "https://docs.langchain.com/oss/javascript/langgraph/graph-api#send",
    "expect": {"value.forward.items": ["a", "b", "c"], "value.reversed.items": ["c", "b", "a"]}
  }
}, async function sendOrder(obs) {
  const { Send } = await obs.need("@langchain/langgraph", "Send");
  const State = Annotation.Root({ items: appendKey() });

  async function scenario(targets, finishing) {
    const gates = Object.fromEntries(targets.map(([, item]) => [item, new Gate()]));
    const started = [];
    const finished = [];
    const worker = async (payload) => {
      started.push(payload.item);
      await gates[payload.item].wait();
      finished.push(payload.item);
      return { items: [payload.item] };
    };
    const nodes = [...new Set(targets.map(([node]) => node))];
    let builder = new StateGraph(State).addNode("fan", () => ({}));
    for (const node of nodes) builder = builder.addNode(node, worker);
    builder = builder
      .addEdge(START, "fan")
      .addConditionalEdges("fan", () => targets.map(([node, item]) => new Send(node, { item })), nodes);
    const graph = builder.compile();
    const run = graph.invoke({ items: [] });
    await settle();
    if (started.length !== targets.length) throw new Vacuous(`not every worker was in flight: ${JSON.stringify(started)}`);
    for (const item of finishing) {
      gates[item].open();
      await settle();
    }
    const final = await obs.framework(() => run);
    return { sent: targets.map(([, item]) => item), finished, items: final.items };
  }

  const cases = {
    "forward": await scenario([["worker", "a"], ["worker", "b"], ["worker", "c"]], ["c", "b", "a"]),
    "reversed": await scenario([["worker", "c"], ["worker", "b"], ["worker", "a"]], ["a", "b", "c"]),
    "two targets, zeta sent first": await scenario([["zeta", "z1"], ["alpha", "a1"]], ["a1", "z1"]),
  };
  const bySendList = Object.values(cases).every((c) => JSON.stringify(c.items) === JSON.stringify(c.sent));
  const byFinish = Object.values(cases).every((c) => JSON.stringify(c.items) === JSON.stringify(c.finished));
  const rule = bySendList ? "Send list order" : byFinish ? "finishing order" : "mixed";
  obs.record(cases, {
    label: `order: ${rule}`,
    detail: bySendList ? "results come back in Send list order in every case" : `results: ${JSON.stringify(cases)}`,
    hazard: bySendList ? "order-coupled" : byFinish ? "nondeterministic" : "order-coupled",
  });
});
