// Shared pieces of the ADK for JavaScript probes (hashed into each probe that uses them, by name).
// Only the model is replaced: FakeLlm is a BaseLlm subclass that yields one scripted reply, so
// LlmAgent's own output_key code path stores it; runs go through ADK's Runner and InMemorySessionService.
import { BaseAgent, BaseLlm, InMemorySessionService, Runner, createEvent, createEventActions } from "@google/adk";
import { Gate, Vacuous, sameValue, settle } from "../fanin_node.mjs";

export const APP = "fanin";
export const USER = "u";

// The model: one canned text reply, after `before()` (a gate) resolves; never touches the network.
// `after()` runs once ADK has taken the reply and asks the model for more (the reply has gone on up).
export class FakeLlm extends BaseLlm {
  constructor(reply, before, after) {
    super({ model: "fake-model" });
    this.reply = reply;
    this.before = before;
    this.after = after;
  }
  async *generateContentAsync() {
    if (this.before) await this.before();
    yield { content: { role: "model", parts: [{ text: this.reply }] } };
    if (this.after) this.after();
  }
  async connect() {
    throw new Error("FakeLlm has no live connection");
  }
}

// Branches take turns in a given order: each waits at wait(name); start() opens the first turn once
// every branch has arrived (the proof they are in flight together); done(name) opens the next and
// notes `name` in `acted` (the order the gate let them finish, whatever reached the session).
export class Turns {
  constructor(order) {
    this.order = order;
    this.gates = Object.fromEntries(order.map((name) => [name, new Gate()]));
    this.arrived = new Set();
    this.acted = [];
  }
  wait(name) {
    this.arrived.add(name);
    return this.gates[name].wait();
  }
  allArrived() {
    return this.order.every((name) => this.arrived.has(name));
  }
  start() {
    this.gates[this.order[0]].open();
  }
  done(name) {
    this.acted.push(name);
    const next = this.order[this.order.indexOf(name) + 1];
    if (next !== undefined && !this.gates[next].opened) this.gates[next].open();
  }
  openAll() {
    for (const gate of Object.values(this.gates)) gate.open();
  }
}

// One turn through ADK's Runner on a fresh in-memory session; `onEvent` sees each event as the
// runner yields it (after the session service appended it). Never rejects: the error is returned.
export async function runTurn(agent, { onEvent, state } = {}) {
  const sessionService = new InMemorySessionService();
  const runner = new Runner({ appName: APP, agent, sessionService });
  await sessionService.createSession({ appName: APP, userId: USER, sessionId: "s1", state });
  const events = [];
  let error = null;
  try {
    const newMessage = { role: "user", parts: [{ text: "go" }] };
    for await (const event of runner.runAsync({ userId: USER, sessionId: "s1", newMessage })) {
      events.push(event);
      if (onEvent) onEvent(event);
    }
  } catch (caught) {
    error = caught;
  }
  const storedState = async () => {
    const session = await sessionService.getSession({ appName: APP, userId: USER, sessionId: "s1" });
    return { ...(session?.state ?? {}) };
  };
  return { events, error, storedState };
}

// One session answered over several turns (a pause in one turn, its answer in the next): `turn(message,
// onEvent)` runs one turn through the same Runner and in-memory session and resolves to {events, error}
// (never rejects); `onEvent` sees each event as the runner yields it.
export async function sessionTurns(agent) {
  const sessionService = new InMemorySessionService();
  const runner = new Runner({ appName: APP, agent, sessionService });
  await sessionService.createSession({ appName: APP, userId: USER, sessionId: "s1" });
  return async function turn(newMessage, onEvent) {
    const events = [];
    try {
      for await (const event of runner.runAsync({ userId: USER, sessionId: "s1", newMessage })) {
        events.push(event);
        if (onEvent) onEvent(event);
      }
      return { events, error: null };
    } catch (error) {
      return { events, error };
    }
  };
}

// A user message answering the RequestInput `interruptId` with `value`, as a client sends it: a functionResponse
// named `callName` (the installed REQUEST_INPUT_FUNCTION_CALL_NAME) in the {result: value} envelope ADK unwraps.
export function answerMessage(callName, interruptId, value) {
  return { role: "user", parts: [{ functionResponse: { id: interruptId, name: callName, response: { result: value } } }] };
}

// The interrupt ids a turn's events asked the user to answer (their longRunningToolIds), sorted.
export function askedFor(events) {
  return [...new Set(events.flatMap((e) => e.longRunningToolIds ?? []))].sort();
}

// A turn whose branches take turns (`turns`): once every branch has arrived at its gate (all in flight
// together) the first turn opens; a branch that never arrived makes the probe vacuous (`arrived` says
// what arriving means). Resolves as runTurn does.
export async function runInTurns(agent, turns, { onEvent, state, arrived = "were in flight before the first write" } = {}) {
  const run = runTurn(agent, { onEvent, state });
  await settle();
  if (!turns.allArrived()) {
    turns.openAll();
    await run;
    throw new Vacuous(`only ${[...turns.arrived].join(",")} ${arrived}`);
  }
  turns.start();
  return run;
}

// An event from `agent` carrying one state delta.
export function deltaEvent(agent, ctx, delta) {
  return createEvent({ author: agent.name, invocationId: ctx.invocationId, branch: ctx.branch, actions: createEventActions({ stateDelta: delta }) });
}

// A ParallelAgent child without a model: writes `first`, notes what it does in `log`, parks on
// `hold` (in flight), then writes `then`; with `fail` it throws once `failAfter` resolves.
export class Step extends BaseAgent {
  constructor({ name, log, first, then, hold, holding, fail, failAfter }) {
    super({ name });
    Object.assign(this, { log, first, then, hold, holding, fail, failAfter });
  }
  async *runAsyncImpl(ctx) {
    if (this.fail) {
      await this.failAfter();
      this.log.push([this.name, "raised"]);
      throw new Error(`${this.name} failed`);
    }
    this.log.push([this.name, "started"]);
    yield deltaEvent(this, ctx, this.first);
    this.log.push([this.name, "holding"]);
    this.holding?.open();
    await this.hold.wait();
    this.log.push([this.name, "released"]);
    yield deltaEvent(this, ctx, this.then);
    this.log.push([this.name, "finished"]);
  }
  async *runLiveImpl() {
    throw new Error("no live runs in these probes");
  }
}

// The last thing `name` noted in the log.
export function fate(log, name) {
  const mine = log.filter(([who]) => who === name);
  return mine.length ? mine[mine.length - 1][1] : "never started";
}

// A ParallelAgent child without a model: waits for its turn, then emits one state delta, made by
// `delta(state)` from the session state it read when it started (a read-modify-write when it uses it).
export class GatedWriter extends BaseAgent {
  constructor({ name, turns, delta }) {
    super({ name });
    Object.assign(this, { turns, delta });
  }
  async *runAsyncImpl(ctx) {
    const read = { ...(ctx.session?.state ?? {}) };
    await this.turns.wait(this.name);
    yield deltaEvent(this, ctx, this.delta(read));
  }
  async *runLiveImpl() {
    throw new Error("no live runs in these probes");
  }
}

// The deterministic merge step after a ParallelAgent whose branches each wrote their own key
// (suites/adk/test_mitigations_parallel.py's Merge): branch b wrote `<prefix><b>`; folded in `authority`
// order, the first branch with a value provides it, every later one is kept with its provenance as an
// agreement or a conflict, a branch without a value is listed as missing. The record written to `target`
// depends only on the authority order, never on which branch finished first.
export class Merge extends BaseAgent {
  constructor({ name, authority, prefix, target }) {
    super({ name });
    Object.assign(this, { authority, prefix, target });
  }
  async *runAsyncImpl(ctx) {
    const state = ctx.session?.state ?? {};
    const record = { value: null, from: null, agrees: [], conflicts: [], missing: [] };
    for (const branch of this.authority) {
      const value = state[this.prefix + branch] ?? null;
      if (value === null) record.missing.push(branch);
      else if (record.from === null) Object.assign(record, { value, from: branch });
      else if (sameValue(value, record.value)) record.agrees.push(branch);
      else record.conflicts.push({ branch, value });
    }
    yield deltaEvent(this, ctx, { [this.target]: record });
  }
  async *runLiveImpl() {
    throw new Error("no live runs in these probes");
  }
}

// The branch writes (`branch: value`) a Merge record keeps, each with the branch it came from.
export function mergedWrites(writes, record) {
  const keeps = (branch, value) =>
    (record.from === branch && sameValue(record.value, value))
    || ((record.agrees ?? []).includes(branch) && sameValue(record.value, value))
    || (record.conflicts ?? []).some((c) => sameValue(c, { branch, value }));
  return Object.entries(writes).filter(([branch, value]) => keeps(branch, value)).map(([branch, value]) => `${branch}: ${value}`);
}

// After a ParallelAgent: folds each branch's own key `<prefix><branch>` into the object at `target`, in the
// order of `branches` (the sub-agent list), keeping what `target` held before.
export class Combine extends BaseAgent {
  constructor({ name, branches, prefix, target }) {
    super({ name });
    Object.assign(this, { branches, prefix, target });
  }
  async *runAsyncImpl(ctx) {
    const state = ctx.session?.state ?? {};
    const combined = { ...(state[this.target] ?? {}) };
    for (const branch of this.branches) {
      if ((state[this.prefix + branch] ?? null) !== null) combined[branch] = state[this.prefix + branch];
    }
    yield deltaEvent(this, ctx, { [this.target]: combined });
  }
  async *runLiveImpl() {
    throw new Error("no live runs in these probes");
  }
}

// A ParallelAgent branch that runs its one sub-agent and catches what it throws, recording a failure
// result {failed: <error name>} in `key` (the mitigation: every failure becomes this branch's result).
export class Guard extends BaseAgent {
  constructor({ name, key, child }) {
    super({ name, subAgents: [child] });
    this.key = key;
  }
  async *runAsyncImpl(ctx) {
    try {
      for await (const event of this.subAgents[0].runAsync(ctx)) yield event;
    } catch (error) {
      yield deltaEvent(this, ctx, { [this.key]: { failed: error?.name ?? "Error" } });
    }
  }
  async *runLiveImpl() {
    throw new Error("no live runs in these probes");
  }
}

// A Workflow node function that catches what `work(ctx)` throws and records {failed: <error name>} in
// state `<name>_result` (the same mitigation for a Workflow node). A failed node has no output: two
// terminal nodes with an output end a Workflow run with an error.
export function caught(name, work) {
  return async (ctx) => {
    try {
      return await work(ctx);
    } catch (error) {
      ctx.state.set(`${name}_result`, { failed: error?.name ?? "Error" });
      return undefined;
    }
  };
}

// The first turn, with `gate` opened once the runner yields the event asking for `interruptId` (the request is
// in the session); a gate still shut once the turn has gone idle is opened, and the order is vacuous.
export async function firstTurn(turn, gate, interruptId, text) {
  const onEvent = (event) => {
    if ((event.longRunningToolIds ?? []).includes(interruptId) && !gate.opened) gate.open();
  };
  const running = turn({ role: "user", parts: [{ text }] }, onEvent);
  await settle();
  const forced = !gate.opened;
  if (forced) gate.open();
  const result = await running;
  if (forced) throw new Vacuous(`the request for ${interruptId} never reached the runner while its siblings were in flight`);
  return result;
}

// A turn as the value shows it: "returned", or {raises: its error's name}.
export function turnShown(result) {
  return result.error ? { raises: result.error?.name ?? "Error" } : "returned";
}

// START -> Ask and Sib -> Join -> Collect, answered in a second turn: Sib finishes after Ask's request reached the
// runner (`sibFirst` false) or before Ask asks. With `endAtRequest` (the mitigation) Ask returns right after its
// RequestInput and acts only in the pass that has the answer. What each node ran, the join got, and Ask acted on.
export async function fanOutOrder(adk, sibFirst, endAtRequest) {
  const { FunctionNode, JoinNode, RequestInput, START, Workflow } = adk;
  const runs = {};
  const joinInputs = [];
  const afterYield = [];
  const actedOn = [];
  const finished = [];
  const asked = new Gate();
  const sibDone = new Gate();
  const count = (name) => (runs[name] = (runs[name] ?? 0) + 1);
  const ask = new FunctionNode("Ask", async function* (ctx) {
    count("Ask");
    const answer = ctx.resumeInputs?.q1;
    if (answer !== undefined) {
      actedOn.push(answer && typeof answer === "object" ? answer.result : answer);
      yield `answer=${actedOn.at(-1)}`;
      return;
    }
    if (sibFirst) {
      await sibDone.wait();
      await settle(); // Sib's output is handed on before Ask asks
    }
    finished.push("Ask asked");
    yield new RequestInput({ interruptId: "q1", message: "proceed?" });
    if (endAtRequest) return;
    afterYield.push("ran before the answer");
  }, { rerunOnResume: true });
  const sib = new FunctionNode("Sib", async () => {
    count("Sib");
    if (!sibFirst) await asked.wait();
    finished.push("Sib finished");
    sibDone.open();
    return "sib";
  });
  const collect = new FunctionNode("Collect", async (ctx, input) => {
    count("Collect");
    joinInputs.push(input);
    return "collected";
  });
  const join = new JoinNode({ name: "Join" });
  const turn = await sessionTurns(new Workflow({ name: "wf", edges: [[START, [ask, sib]], [ask, join], [sib, join], [join, collect]] }));
  const first = sibFirst ? await turn({ role: "user", parts: [{ text: "go" }] }) : await firstTurn(turn, asked, "q1", "go");
  const before = { ...runs };
  const collectedBefore = joinInputs.length;
  const ids = askedFor(first.events);
  const second = ids.length ? await turn(answerMessage(adk.REQUEST_INPUT_FUNCTION_CALL_NAME, "q1", "yes")) : { error: { name: "(nothing asked)" } };
  return {
    first_turn: turnShown(first),
    asked_for: ids,
    finish_order: finished,
    runs_before_answer: before,
    join_fired_before_answer: collectedBefore,
    after_yield: afterYield.slice(0, 1),
    acted_on: actedOn,
    resume: turnShown(second),
    runs_after_resume: Object.fromEntries(["Ask", "Sib", "Collect"].map((k) => [k, (runs[k] ?? 0) - (before[k] ?? 0)])),
    join_inputs: joinInputs,
  };
}

export const FAN_OUT_ORDERS = { "sib finishes after the request": false, "sib finishes before the request": true };
export const HITL_NEEDS = ["Workflow", "FunctionNode", "JoinNode", "RequestInput", "START", "REQUEST_INPUT_FUNCTION_CALL_NAME"];

// A run's exception as the scenarios report it: its own name, or its class's where it is a plain Error; null for none.
export function errorName(error) {
  if (!error) return null;
  return error.name && error.name !== "Error" ? error.name : error.constructor?.name ?? "Error";
}
