// Shared pieces of the ADK for JavaScript probes (hashed into each probe that uses them, by name).
// Only the model is replaced: FakeLlm is a BaseLlm subclass that yields one scripted reply, so
// LlmAgent's own output_key code path stores it; runs go through ADK's Runner and InMemorySessionService.
import { BaseAgent, BaseLlm, InMemorySessionService, Runner, createEvent, createEventActions } from "@google/adk";
import { Gate } from "../fanin_node.mjs";

export const APP = "fanin";
export const USER = "u";

// The model: one canned text reply, after `before()` (a gate) resolves; never touches the network.
export class FakeLlm extends BaseLlm {
  constructor(reply, before) {
    super({ model: "fake-model" });
    this.reply = reply;
    this.before = before;
  }
  async *generateContentAsync() {
    if (this.before) await this.before();
    yield { content: { role: "model", parts: [{ text: this.reply }] } };
  }
  async connect() {
    throw new Error("FakeLlm has no live connection");
  }
}

// Branches take turns in a given order: each waits at wait(name); start() opens the first turn once
// every branch has arrived (the proof they are in flight together); done(name) opens the next.
export class Turns {
  constructor(order) {
    this.order = order;
    this.gates = Object.fromEntries(order.map((name) => [name, new Gate()]));
    this.arrived = new Set();
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

// A ParallelAgent child without a model: writes `first`, notes what it does in `log`, parks on
// `hold` (in flight), then writes `then`; with `fail` it throws once `failAfter` resolves.
export class Step extends BaseAgent {
  constructor({ name, log, first, then, hold, holding, fail, failAfter }) {
    super({ name });
    Object.assign(this, { log, first, then, hold, holding, fail, failAfter });
  }
  event(ctx, delta) {
    return createEvent({ author: this.name, invocationId: ctx.invocationId, branch: ctx.branch, actions: createEventActions({ stateDelta: delta }) });
  }
  async *runAsyncImpl(ctx) {
    if (this.fail) {
      await this.failAfter();
      this.log.push([this.name, "raised"]);
      throw new Error(`${this.name} failed`);
    }
    this.log.push([this.name, "started"]);
    yield this.event(ctx, this.first);
    this.log.push([this.name, "holding"]);
    this.holding?.open();
    await this.hold.wait();
    this.log.push([this.name, "released"]);
    yield this.event(ctx, this.then);
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
    yield createEvent({ author: this.name, invocationId: ctx.invocationId, branch: ctx.branch, actions: createEventActions({ stateDelta: this.delta(read) }) });
  }
  async *runLiveImpl() {
    throw new Error("no live runs in these probes");
  }
}
