// A failing node and its running sibling: what happens to the sibling once invoke rejects.
import { Annotation, START, StateGraph } from "@langchain/langgraph";
import { Gate, probe, settle } from "../fanin_node.mjs";
import { appendKey } from "./kit.mjs";

probe({
  "id": "langgraphjs/errors/async-sibling-cancelled",
  "title": "`failing` throws while its sibling `slow` is awaiting (held by a gate); then the gate is opened",
  "claim": {
    "text": "When a node throws, LangGraph.js aborts the other nodes of the superstep through config.signal and invoke rejects; JavaScript cannot cancel a promise, so a node that does not watch the signal keeps running after the rejection.",
    "source": "https://docs.langchain.com/oss/javascript/langgraph/graph-api",
    "expect": {"value.first_run.raises": "Error", "value.slow_log_after_release": ["started", "signal aborted", "ran on after release"]}
  }
}, async function asyncSiblingCancelled(obs) {
  const State = Annotation.Root({ items: appendKey() });
  const slowLog = [];
  const slowStarted = new Gate();
  const hold = new Gate();
  const slow = async (state, config) => {
    slowLog.push("started");
    config?.signal?.addEventListener("abort", () => slowLog.push("signal aborted"));
    slowStarted.open();
    await hold.wait();
    slowLog.push("ran on after release");
    return { items: ["slow"] };
  };
  const failing = async () => {
    await slowStarted.wait();
    throw new Error("failing node");
  };
  const graph = new StateGraph(State)
    .addNode("slow", slow)
    .addNode("failing", failing)
    .addEdge(START, "slow")
    .addEdge(START, "failing")
    .compile();
  let firstRun;
  try {
    await graph.invoke({ items: [] });
    firstRun = { returned: true };
  } catch (error) {
    firstRun = { raises: error.name };
  }
  await settle();
  const atReject = [...slowLog];
  hold.open();
  await settle();
  const ranOn = slowLog.includes("ran on after release");
  obs.record({ first_run: firstRun, slow_log_at_reject: atReject, slow_log_after_release: [...slowLog] }, {
    label: ranOn ? "sibling ran on after reject" : "sibling stopped",
    detail: `invoke ${firstRun.raises ? "rejected with " + firstRun.raises : "returned"}; slow at rejection ${JSON.stringify(atReject)}, after its gate opened ${JSON.stringify(slowLog)}`,
    hazard: firstRun.raises ? "loud" : "silent",
  });
});
