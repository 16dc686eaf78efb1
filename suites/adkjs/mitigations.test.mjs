// Mitigations of the ADK for JavaScript hazards (the counterparts of suites/adk/test_mitigations_parallel.py).
// Every probe id is its hazard probe's id plus `-mitigated`; reference/mitigations.toml names it. Each probe
// is its hazard probe's scenario (same agents, same gates) with the fix applied, run in two forced completion
// orders: every write the branches made must be kept (in state, or in the merge record with the branch it
// came from), and the outcome must be the same in every order (suites/fanin_node.mjs's judge).
import { LlmAgent, ParallelAgent, SequentialAgent } from "@google/adk";
import { Gate, Vacuous, probe, recordJudged, sameValue, settle } from "../fanin_node.mjs";
import { Combine, FAN_OUT_ORDERS, FakeLlm, GatedWriter, Guard, HITL_NEEDS, Merge, Step, Turns, caught, fanOutOrder, fate, mergedWrites, runInTurns, runTurn } from "./kit.mjs";

probe({
  "id": "adkjs/parallel-agent/same-key-mitigated",
  "title": "same-key, mitigated: the three ParallelAgent children each write their own key; a merge step after the ParallelAgent (a SequentialAgent) folds them in authority order a, b, c, keeping conflicts with their branch; two completion orders",
  "claim": {
    "text": "Give each parallel child its own state key and merge them in the step after the ParallelAgent: no write is lost and the merged value does not depend on which branch finished last.",
    "source": "https://google.github.io/adk-docs/agents/workflow-agents/parallel-agents/",
    "expect": {"hazard": "safe", "value.variants.own keys, merge in authority order.runs.a,b,c.result.from": "a"}
  }
}, async function sameKeyMitigated(obs) {
  const runs = {};
  for (const order of [["a", "b", "c"], ["c", "b", "a"]]) {
    const turns = new Turns(order);
    const children = ["a", "b", "c"].map((name) => new GatedWriter({ name, turns, delta: () => ({ [`result_${name}`]: name.toUpperCase() }) }));
    const finished = [];
    const onEvent = (event) => {
      if (order.includes(event.author) && Object.keys(event.actions?.stateDelta ?? {}).length) {
        finished.push(event.author);
        turns.done(event.author);
      }
    };
    const root = new SequentialAgent({
      name: "pipeline",
      subAgents: [new ParallelAgent({ name: "fanout", subAgents: children }), new Merge({ name: "merge", authority: ["a", "b", "c"], prefix: "result_", target: "result" })],
    });
    const { error, storedState } = await runInTurns(root, turns, { onEvent });
    if (error) {
      runs[order.join(",")] = { raises: error.name };
      continue;
    }
    const writes = { a: "A", b: "B", c: "C" };
    const record = (await storedState()).result ?? {};
    runs[order.join(",")] = {
      made: Object.entries(writes).map(([b, v]) => `${b}: ${v}`),
      kept: mergedWrites(writes, record),
      result: record,
      observed: { finished },
    };
  }
  recordJudged(obs, { "own keys, merge in authority order": runs });
});

probe({
  "id": "adkjs/output-key/same-key-mitigated",
  "title": "output-key same-key, mitigated: the three LlmAgent children each get their own outputKey; a merge step folds the replies in authority order a, b, c, keeping conflicts with their branch; two completion orders",
  "claim": {
    "text": "Give every parallel LlmAgent its own outputKey and merge them in the next step: every reply is kept and the merged value does not depend on which reply was stored last.",
    "source": "https://google.github.io/adk-docs/agents/workflow-agents/parallel-agents/",
    "expect": {"hazard": "safe"}
  }
}, async function outputKeySameKeyMitigated(obs) {
  const runs = {};
  for (const order of [["a", "b", "c"], ["c", "b", "a"]]) {
    const turns = new Turns(order);
    const children = ["a", "b", "c"].map((name) => new LlmAgent({ name, instruction: "reply", outputKey: `result_${name}`, model: new FakeLlm(`reply ${name}`, () => turns.wait(name)) }));
    const stored = [];
    const onEvent = (event) => {
      if (Object.keys(event.actions?.stateDelta ?? {}).some((k) => k.startsWith("result_"))) {
        stored.push(event.author);
        turns.done(event.author);
      }
    };
    const root = new SequentialAgent({
      name: "pipeline",
      subAgents: [new ParallelAgent({ name: "fanout", subAgents: children }), new Merge({ name: "merge", authority: ["a", "b", "c"], prefix: "result_", target: "result" })],
    });
    const { error, storedState } = await runInTurns(root, turns, { onEvent, arrived: "reached the model before the first reply" });
    if (error) {
      runs[order.join(",")] = { raises: error.name };
      continue;
    }
    const writes = { a: "reply a", b: "reply b", c: "reply c" };
    const record = (await storedState()).result ?? {};
    runs[order.join(",")] = {
      made: Object.entries(writes).map(([b, v]) => `${b}: ${v}`),
      kept: mergedWrites(writes, record),
      result: record,
      observed: { output_key_events: stored },
    };
  }
  recordJudged(obs, { "own outputKeys, merge in authority order": runs });
});

probe({
  "id": "adkjs/parallel-agent/read-modify-write-mitigated",
  "title": "read-modify-write, mitigated: the two children write per-branch keys instead of {...old, mine: value}; a step after the ParallelAgent combines them into the tally; both completion orders",
  "claim": {
    "text": "Per-branch keys combined after the ParallelAgent keep every branch's update (and what the key held before), whatever the completion order.",
    "source": "https://google.github.io/adk-docs/sessions/state/",
    "expect": {"hazard": "safe"}
  }
}, async function readModifyWriteMitigated(obs) {
  const runs = {};
  for (const order of [["a", "b"], ["b", "a"]]) {
    const turns = new Turns(order);
    const children = ["a", "b"].map((name) => new GatedWriter({ name, turns, delta: () => ({ [`tally_${name}`]: name.toUpperCase() }) }));
    const onEvent = (event) => {
      if (order.includes(event.author)) turns.done(event.author);
    };
    const root = new SequentialAgent({
      name: "pipeline",
      subAgents: [new ParallelAgent({ name: "fanout", subAgents: children }), new Combine({ name: "combine", branches: ["a", "b"], prefix: "tally_", target: "tally" })],
    });
    const { error, storedState } = await runInTurns(root, turns, { onEvent, state: { tally: { seed: "0" } } });
    if (error) {
      runs[order.join(",")] = { raises: error.name };
      continue;
    }
    const tally = (await storedState()).tally ?? {};
    const writes = { seed: "0", a: "A", b: "B" };
    runs[order.join(",")] = {
      made: Object.entries(writes).map(([k, v]) => `${k}: ${v}`),
      kept: Object.entries(writes).filter(([k, v]) => tally[k] === v).map(([k, v]) => `${k}: ${v}`),
      result: tally,
    };
  }
  recordJudged(obs, { "per-branch keys, combined after": runs });
});

probe({
  "id": "adkjs/parallel-agent/child-exception-running-sibling-mitigated",
  "title": "child-exception-running-sibling, mitigated: each ParallelAgent branch is wrapped in an agent that catches what its child throws and records a failure result in its own key; `a` throws while c is in flight (c released after), then c finishes before `a` throws",
  "claim": {
    "text": "With exceptions caught inside each branch and recorded as that branch's result, the run waits for the sibling, completes, and keeps every branch's writes (failures included) in either completion order.",
    "source": "https://github.com/google/adk-js/blob/main/core/src/agents/parallel_agent.ts",
    "expect": {"hazard": "safe", "value.variants.caught in each branch.runs.a first.result.result_a": {"failed": "Error"}}
  }
}, async function childExceptionRunningSiblingMitigated(obs) {
  const runs = {};
  for (const first of ["a", "c"]) {
    const log = [];
    const hold = new Gate();
    const holding = new Gate();
    // c first: a throws only after c, released, has run to its end.
    const failAfter = async () => {
      await holding.wait();
      if (first === "c") {
        hold.open();
        await settle();
      }
    };
    const branches = [
      new Guard({ name: "guard_a", key: "result_a", child: new Step({ name: "a", log, fail: true, failAfter }) }),
      new Guard({ name: "guard_c", key: "result_c", child: new Step({ name: "c", log, first: { result_c1: "C1" }, then: { result_c2: "C2" }, hold, holding }) }),
    ];
    let ended = false;
    const run = runTurn(new ParallelAgent({ name: "fanout", subAgents: branches })).then((result) => {
      ended = true;
      return result;
    });
    let endedBeforeRelease = null;
    if (first === "a") {
      await settle();
      endedBeforeRelease = ended;
      hold.open(); // the I/O c was waiting for completes
    }
    const { error, storedState } = await run;
    await settle();
    const ends = log.filter(([who, what]) => (who === "a" && what === "raised") || (who === "c" && what === "finished")).map(([who]) => who);
    const cInFlight = log.findIndex(([who, what]) => who === "c" && what === "holding") < log.findIndex(([who, what]) => who === "a" && what === "raised");
    if (ends.join(",") !== (first === "a" ? "a,c" : "c,a") || !cInFlight) throw new Vacuous(`not the order ${first} first with c in flight: ${JSON.stringify(log)}`);
    if (error) {
      runs[`${first} first`] = { raises: error.name };
      continue;
    }
    const state = await storedState();
    const writes = { result_a: { failed: "Error" }, result_c1: "C1", result_c2: "C2" };
    runs[`${first} first`] = {
      made: Object.entries(writes).map(([k, v]) => `${k}: ${JSON.stringify(v)}`),
      kept: Object.entries(writes).filter(([k, v]) => sameValue(state[k] ?? null, v)).map(([k, v]) => `${k}: ${JSON.stringify(v)}`),
      result: Object.fromEntries(Object.keys(writes).map((k) => [k, state[k] ?? null])),
      observed: { branches: { a: fate(log, "a"), c: fate(log, "c") }, ...(endedBeforeRelease === null ? {} : { run_ended_before_c_released: endedBeforeRelease }) },
    };
  }
  recordJudged(obs, { "caught in each branch": runs }, "run completes, every result kept");
});

probe({
  "id": "adkjs/workflow/failing-branch-sibling-mitigated",
  "title": "failing-branch-sibling, mitigated: both Workflow nodes catch their own errors and record a failure result (`failing_result`); `failing` throws while `slow` awaits a gate, then `slow` finishes before `failing` throws",
  "claim": {
    "text": "A Workflow node that catches its own errors and records a failure result in state (returning no output) does not abort its siblings: the run waits for every node and keeps every write, the failure included, in either completion order.",
    "source": "https://github.com/google/adk-js/blob/main/core/src/workflow/workflow.ts",
    "expect": {"hazard": "safe", "value.variants.caught in each node.runs.failing first.result.failing_result": {"failed": "Error"}}
  }
}, async function failingBranchSiblingMitigated(obs) {
  const { FunctionNode, START, Workflow } = await obs.need("@google/adk", "Workflow", "FunctionNode", "START");
  const runs = {};
  for (const first of ["failing", "slow"]) {
    const log = [];
    const started = new Gate();
    const hold = new Gate();
    const slow = new FunctionNode("slow", caught("slow", async (ctx) => {
      log.push("slow started");
      ctx.abortSignal?.addEventListener("abort", () => log.push("slow signal aborted"));
      ctx.state.set("slow_before", "S1");
      started.open();
      await hold.wait();
      ctx.state.set("slow_after", "S2");
      log.push("slow finished");
      return "slow output";
    }));
    const failing = new FunctionNode("failing", caught("failing", async () => {
      await started.wait();
      if (first === "slow") {
        hold.open();
        await settle();
      }
      log.push("failing threw");
      throw new Error("failing node");
    }));
    let ended = false;
    const run = runTurn(new Workflow({ name: "wf", edges: [[START, [slow, failing]]] })).then((result) => {
      ended = true;
      return result;
    });
    let endedBeforeRelease = null;
    if (first === "failing") {
      await settle();
      endedBeforeRelease = ended;
      hold.open();
    }
    const { error, storedState } = await run;
    await settle();
    const ends = log.filter((what) => what === "failing threw" || what === "slow finished").map((what) => what.split(" ")[0]);
    if (ends.join(",") !== (first === "failing" ? "failing,slow" : "slow,failing") || log[0] !== "slow started") {
      throw new Vacuous(`not the order ${first} first with slow in flight: ${JSON.stringify(log)}`);
    }
    if (error) {
      runs[`${first} first`] = { raises: error.name };
      continue;
    }
    const state = await storedState();
    const writes = { slow_before: "S1", slow_after: "S2", failing_result: { failed: "Error" } };
    runs[`${first} first`] = {
      made: Object.entries(writes).map(([k, v]) => `${k}: ${JSON.stringify(v)}`),
      kept: Object.entries(writes).filter(([k, v]) => sameValue(state[k] ?? null, v)).map(([k, v]) => `${k}: ${JSON.stringify(v)}`),
      result: Object.fromEntries(Object.keys(writes).map((k) => [k, state[k] ?? null])),
      observed: { log, ...(endedBeforeRelease === null ? {} : { run_ended_before_slow_released: endedBeforeRelease }) },
    };
  }
  recordJudged(obs, { "caught in each node": runs }, "run completes, every result kept");
});

probe({
  "id": "adkjs/workflow/hitl-in-fan-out-mitigated",
  "title": "hitl-in-fan-out, mitigated: Ask returns right after yielding its RequestInput and acts only in the pass that reads the answer from ctx.resumeInputs; the same two orders",
  "claim": {
    "text": "End a node at its RequestInput (return right after the yield) and act only in the resumed pass that reads ctx.resumeInputs: nothing acts before the answer, the node acts once, on the answer, and the join gets the answer and the sibling's output whichever finished first.",
    "source": "https://github.com/google/adk-js/blob/main/core/src/workflow/base_node.ts",
    "expect": {"hazard": "safe"}
  }
}, async function hitlInFanOutMitigated(obs) {
  const adk = await obs.need("@google/adk", ...HITL_NEEDS);
  const runs = {};
  let asked = false;
  for (const [name, sibFirst] of Object.entries(FAN_OUT_ORDERS)) {
    const seen = await fanOutOrder(adk, sibFirst, true);
    asked ||= seen.asked_for.length > 0;
    const failed = [seen.first_turn, seen.resume].find((t) => t !== "returned");
    if (failed !== undefined) {
      runs[name] = failed;
      continue;
    }
    const got = seen.join_inputs[0] ?? {};
    const wrong = [
      ...seen.after_yield,
      ...(sameValue(seen.acted_on, ["yes"]) ? [] : [`Ask acted on ${JSON.stringify(seen.acted_on)}`]),
      ...(seen.join_fired_before_answer ? ["the join fired before the answer"] : []),
      ...(seen.join_inputs.length > 1 ? [`the join fired ${seen.join_inputs.length} times`] : []),
      ...(seen.runs_after_resume.Sib ? ["Sib ran again"] : []),
    ];
    runs[name] = { made: ["Ask: answer=yes", "Sib: sib"], kept: Object.entries(got).map(([k, v]) => `${k}: ${v}`), wrong, result: got, observed: { asked_for: seen.asked_for, finish_order: seen.finish_order } };
  }
  if (!asked) throw new Vacuous("Ask never asked for input");
  recordJudged(obs, { "end the node at its request": runs });
});
