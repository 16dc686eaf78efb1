// Workflow (2.0.0+): a branch asks for human input (RequestInput) inside a fan-out and is answered in a second
// turn (the counterpart of suites/adk/test_upstream_hitl.py): google/adk-js #733 -> PR #760, adk-go #1568.
// Orders are forced with gates the nodes wait on and the runner's own events, never the clock.
import { Gate, Vacuous, harm, probe, sameValue, settle } from "../fanin_node.mjs";
import { FAN_OUT_ORDERS, HITL_NEEDS, answerMessage, askedFor, fanOutOrder, firstTurn, sessionTurns, turnShown } from "./kit.mjs";

// One order's label and hazard (the Python probe's reading): a raise, the join firing early or with other
// inputs, a sibling run again.
function fanInReading(seen) {
  const failed = [seen.first_turn, seen.resume].find((t) => t !== "returned");
  if (failed !== undefined) return [`raises ${failed.raises}`.slice(0, 30), "loud"];
  if (seen.join_fired_before_answer) return ["join fires before the answer", "silent"];
  if (!sameValue(seen.join_inputs, [{ Ask: "answer=yes", Sib: "sib" }])) return ["join gets other inputs", "silent"];
  if (seen.runs_after_resume.Sib) return ["sibling runs again", "silent"];
  return ["sibling kept, join once", "safe"];
}

probe({
  "id": "adkjs/workflow/hitl-in-fan-out",
  "title": "START -> Ask and Sib -> Join -> Collect; Ask (rerunOnResume) yields a RequestInput (Sib finishing after the request reached the runner, and before Ask asks); the user answers in a second turn",
  "claim": {
    "text": "A branch that asks for input pauses only itself: its sibling's result survives the pause, the sibling does not run again on resume, and the join fires once, with the answer and the sibling's output (adk-js #733, fixed by PR #760). Code after the RequestInput's yield does not run before the answer (reported on google-adk 2.5.0 to run in the same pass).",
    "source": "https://github.com/google/adk-js/issues/733",
    "expect": {"value.orders.sib finishes after the request.join_inputs": [{"Ask": "answer=yes", "Sib": "sib"}], "value.orders.sib finishes after the request.runs_after_resume.Sib": 0}
  },
  "sources": ["https://github.com/google/adk-js/pull/760", "https://github.com/google/adk-go/issues/1568"]
}, async function hitlInFanOut(obs) {
  const adk = await obs.need("@google/adk", ...HITL_NEEDS);
  const orders = {};
  for (const [name, sibFirst] of Object.entries(FAN_OUT_ORDERS)) orders[name] = await fanOutOrder(adk, sibFirst, false);
  if (!Object.values(orders).some((o) => o.asked_for.length)) throw new Vacuous("Ask never asked for input");
  const readings = Object.fromEntries(Object.entries(orders).map(([name, seen]) => [name, fanInReading(seen)]));
  // Code after the RequestInput's yield that runs before the answer acts without it, and nothing says so.
  const ranOn = Object.values(orders).some((seen) => seen.after_yield.length);
  const worstOf = (rs) => rs.reduce((found, r) => (harm(r[1]) > harm(found[1]) ? r : found));
  const fanIn = worstOf(Object.values(readings))[0];
  const same = new Set(Object.values(readings).map(([text]) => text)).size === 1;
  obs.record({ orders }, {
    label: (same ? fanIn : "the two orders differ") + (ranOn ? "; yield runs on" : ""),
    detail: Object.entries(orders).map(([name, seen]) => `${name}: ${readings[name][0]} (asked ${JSON.stringify(seen.asked_for)}, finished ${JSON.stringify(seen.finish_order)}, before the answer ran ${JSON.stringify(seen.runs_before_answer)}, the resume ran ${JSON.stringify(seen.runs_after_resume)}, join got ${JSON.stringify(seen.join_inputs)}, after the yield ${seen.after_yield.length ? JSON.stringify(seen.after_yield) : "nothing ran"})`).join("; "),
    hazard: worstOf([...Object.values(readings), ["", ranOn ? "silent" : "safe"]])[1],
  });
});

// One order's label and hazard for a parent whose ctx.runNode child asked: a raise, the parent re-run on the
// reply, asked again, its result missing a child's, a finished child run again.
function parentReading(seen, expected) {
  const failed = [seen.first_turn, seen.resume].find((t) => t !== "returned");
  if (failed !== undefined) return [`raises ${failed.raises}`.slice(0, 30), "loud"];
  if (seen.parent_inputs.length > 1 && !sameValue(seen.parent_inputs[1], seen.parent_inputs[0])) return ["parent re-run on the reply", "silent"];
  if (seen.asked_again.length) return ["asks again", "silent"];
  if (!sameValue(seen.parent_results.at(-1) ?? null, expected)) return ["children's results lost", "silent"];
  if (Object.values(seen.runs_after_resume).some((n) => n > 0)) return ["a child runs again", "silent"];
  return ["parent resumed on its input", "safe"];
}

probe({
  "id": "adkjs/workflow/hitl-rerun-parent",
  "title": "START -> supervisor (rerunOnResume), which fans \"alpha, beta, gamma\" out with ctx.runNode to one worker each; beta's worker yields a RequestInput (alpha and gamma finishing after the request reached the runner, and before beta asks); the user answers in a second turn",
  "claim": {
    "text": "On resume, a rerunOnResume parent whose ctx.runNode child paused is re-run on its original input, not on the human's reply: its finished children are answered from their first run (not run again), the asker's reply takes its place, and the parent returns every child's result (adk-js #733: before PR #760 the parent got the reply as its input and silently dropped beta and gamma).",
    "source": "https://github.com/google/adk-js/issues/733",
    "expect": {"value.orders.others finish after the request.parent_inputs": ["alpha, beta, gamma", "alpha, beta, gamma"], "value.orders.others finish after the request.parent_results": [[{"item": "alpha", "length": 5}, "yes", {"item": "gamma", "length": 5}]]}
  },
  "sources": ["https://github.com/google/adk-js/pull/760", "https://github.com/google/adk-go/issues/1568"]
}, async function hitlRerunParent(obs) {
  const adk = await obs.need("@google/adk", "Workflow", "FunctionNode", "RequestInput", "START", "REQUEST_INPUT_FUNCTION_CALL_NAME");
  const { FunctionNode, RequestInput, START, Workflow } = adk;
  const expected = [{ item: "alpha", length: 5 }, "yes", { item: "gamma", length: 5 }];
  const oneOrder = async (othersFirst) => {
    const parentInputs = [];
    const parentResults = [];
    const runs = {};
    const finished = [];
    const asked = new Gate();
    const othersDone = new Gate();
    const worker = new FunctionNode("analyze", async function* (ctx, item) {
      runs[item] = (runs[item] ?? 0) + 1;
      if (item === "beta") {
        const reply = ctx.resumeInputs?.["q-beta"];
        if (reply !== undefined) {
          yield reply;
          return;
        }
        if (othersFirst) {
          await othersDone.wait();
          await settle(); // alpha's and gamma's outputs are handed on before beta asks
        }
        finished.push("beta asked");
        yield new RequestInput({ interruptId: "q-beta", message: "analyze beta?" });
        return;
      }
      if (!othersFirst) await asked.wait();
      finished.push(`${item} finished`);
      if (finished.filter((f) => f.endsWith("finished")).length === 2) othersDone.open();
      yield { item, length: item.length };
    });
    const supervisor = new FunctionNode("supervisor", async (ctx, input) => {
      parentInputs.push(input);
      const results = await Promise.all(String(input).split(", ").map((item) => ctx.runNode(worker, item)));
      parentResults.push(results.map((r) => r.output ?? null));
      return parentResults.at(-1);
    }, { rerunOnResume: true });
    const turn = await sessionTurns(new Workflow({ name: "wf", edges: [[START, supervisor]] }));
    const text = "alpha, beta, gamma";
    const first = othersFirst ? await turn({ role: "user", parts: [{ text }] }) : await firstTurn(turn, asked, "q-beta", text);
    const before = { ...runs };
    const ids = askedFor(first.events);
    const second = ids.length ? await turn(answerMessage(adk.REQUEST_INPUT_FUNCTION_CALL_NAME, "q-beta", "yes")) : { events: [], error: { name: "(nothing asked)" } };
    return {
      first_turn: turnShown(first),
      asked_for: ids,
      finish_order: finished,
      runs_before_answer: before,
      resume: turnShown(second),
      asked_again: askedFor(second.events),
      parent_inputs: parentInputs,
      runs_after_resume: Object.fromEntries(["alpha", "beta", "gamma"].map((k) => [k, (runs[k] ?? 0) - (before[k] ?? 0)])),
      parent_results: parentResults,
    };
  };
  const orders = { "others finish after the request": await oneOrder(false), "others finish before the request": await oneOrder(true) };
  if (!Object.values(orders).some((o) => o.asked_for.length)) throw new Vacuous("beta's worker never asked for input");
  const readings = Object.fromEntries(Object.entries(orders).map(([name, seen]) => [name, parentReading(seen, expected)]));
  const worst = Object.values(readings).reduce((found, r) => (harm(r[1]) > harm(found[1]) ? r : found));
  const same = new Set(Object.values(readings).map(([text]) => text)).size === 1;
  obs.record({ orders }, {
    label: same ? worst[0] : "the two orders differ",
    detail: Object.entries(orders).map(([name, seen]) => `${name}: ${readings[name][0]} (asked ${JSON.stringify(seen.asked_for)}, finished ${JSON.stringify(seen.finish_order)}, the parent got ${JSON.stringify(seen.parent_inputs)} and returned ${JSON.stringify(seen.parent_results)}, the resume ran ${JSON.stringify(seen.runs_after_resume)})`).join("; "),
    hazard: worst[1],
  });
});
