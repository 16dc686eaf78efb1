// Workflow (2.0.0+): one fanned-out node throws while its sibling is in flight.
import { Gate, Vacuous, probe, settle } from "../fanin_node.mjs";
import { runTurn } from "./kit.mjs";

probe({
  "id": "adkjs/workflow/failing-branch-sibling",
  "title": "Workflow fans out from START to `slow` and `failing`; `failing` throws while `slow` (which set slow_before) awaits a gate; the gate is opened only after the run has settled",
  "claim": {
    "text": "When a node fails, Workflow aborts the other running nodes through ctx.abortSignal and waits for them to settle before the run ends with the error; a node that does not watch the signal runs on, and its state writes are still saved.",
    "source": "https://github.com/google/adk-js/blob/main/core/src/workflow/workflow.ts",
    "expect": {"value.slow_log": ["started", "signal aborted", "ran on after release"], "value.persisted.slow_after": "S2"}
  }
}, async function failingBranchSibling(obs) {
  const { FunctionNode, START, Workflow } = await obs.need("@google/adk", "Workflow", "FunctionNode", "START");
  const slowLog = [];
  const started = new Gate();
  const hold = new Gate();
  const slow = new FunctionNode("slow", async (ctx) => {
    slowLog.push("started");
    ctx.abortSignal?.addEventListener("abort", () => slowLog.push("signal aborted"));
    ctx.state.set("slow_before", "S1");
    started.open();
    await hold.wait();
    slowLog.push("ran on after release");
    ctx.state.set("slow_after", "S2");
    return "slow output";
  });
  const failing = new FunctionNode("failing", async () => {
    await started.wait();
    throw new Error("failing node");
  });
  let finished = false;
  const run = runTurn(new Workflow({ name: "wf", edges: [[START, [slow, failing]]] })).then((result) => {
    finished = true;
    return result;
  });
  await settle();
  const ended_before_release = finished;
  const atSettle = [...slowLog];
  if (!atSettle.includes("started")) {
    hold.open();
    await run;
    throw new Vacuous(`slow was not in flight when failing threw: ${JSON.stringify(atSettle)}`);
  }
  hold.open();
  const { events, error, storedState } = await run;
  await settle();
  const state = await storedState();
  const persisted = Object.fromEntries(["slow_before", "slow_after"].map((k) => [k, state[k] ?? null]));
  const errorEvents = events.filter((e) => e.errorCode || e.errorMessage).map((e) => ({ author: e.author, error_code: e.errorCode ?? null, error_message: e.errorMessage ?? null }));
  const value = {
    run: error ? { raises: error.name, message: String(error.message) } : "returned",
    ended_before_release,
    slow_log_at_settle: atSettle,
    slow_log: [...slowLog],
    error_events: errorEvents,
    persisted,
  };
  const ranOn = slowLog.includes("ran on after release");
  const kept = Object.entries(persisted).filter(([, v]) => v !== null).map(([k]) => k);
  obs.record(value, {
    label: `${error ? error.name : "no error"}, ${ranOn ? "sibling ran on" : "sibling stopped"}${persisted.slow_after !== null ? ", write saved" : ""}`,
    detail: `the run ${ended_before_release ? "ended" : "waited for the aborted sibling"} before its gate opened, then ${error ? `rejected with ${error.name}: ${error.message}` : "returned"}; slow saw ${JSON.stringify(slowLog)}; persisted: ${kept.join(", ") || "nothing"}`,
    hazard: error ? "loud" : "silent",
    outcome: error ? `raises:${error.name}` : "ok",
  });
});
