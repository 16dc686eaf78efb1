// A live session across releases (suites/adk/adk_live.py's port): one release leaves a session mid-fan-out in a
// DatabaseSessionService store on PostgreSQL, another resumes it.
//
// `node live.mjs write STORE SESSION` (STORE: JSON {host, port, user, dbName}) runs under an earlier release (fanin_node.mjs runWith: its node_modules), or
// under this cell's own for the same-release control, and prints one JSON line. The tree is SequentialAgent
// `pipeline` = ParallelAgent `fanout` (`a`, `b`) -> `join`, agents without a model: `a` writes a_out; `b` waits
// until a's event is in the store (a gate on the session service's appendEvent, never a clock), then asks the user
// with a long-running function call (its id in the event's longRunningToolIds: how ADK pauses for human input) and
// ends its turn; answered, it writes b_out; `join` writes what it read of both. `resume` (in the probe's process)
// answers b's call with a functionResponse on the stored session, as a client would, and reads the session back
// through a fresh service. Both sides count their own agents' runs. It imports @google/adk, its mikro-orm
// PostgreSQL driver and Node alone: copied beside another release's node_modules, that release is what it runs.
import * as adk from "@google/adk";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const APP = "fanin";
export const USER = "probe";
export const ASK = "ask_human";
export const CALL = "fanin-live-b";
export const ANSWER = "approved";
const GATE_MS = 10000; // only a hang guard: b is released by a's stored event

// The installed @google/adk's version, read where this file's imports resolve (the nearest node_modules up from
// it, as Node looks: its exports map does not export package.json, so it is read as a file).
export function adkVersion() {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const found = join(dir, "node_modules", "@google", "adk", "package.json");
    if (existsSync(found)) return JSON.parse(readFileSync(found, "utf-8")).version;
    if (dirname(dir) === dir) return "not installed";
  }
}

// Why this release cannot keep a session on PostgreSQL (null: it can): read from the package, never its version.
export async function missing() {
  if (typeof adk.DatabaseSessionService !== "function") return `@google/adk ${adkVersion()} exports no DatabaseSessionService`;
  try {
    await driver();
  } catch (error) {
    return `@google/adk ${adkVersion()}: no @mikro-orm/postgresql installed (${error.code ?? error.name}), the driver its postgres:// store loads`;
  }
  return null;
}

// mikro-orm's PostgreSQL driver, the one a postgres:// store loads (an options object names it: the harness's server
// listens on a socket, which mikro-orm's URL parsing has no way to say).
async function driver() {
  return (await import("@mikro-orm/postgresql")).PostgreSqlDriver;
}

async function service(store) {
  return new adk.DatabaseSessionService({ ...store, driver: await driver() });
}

function answered(ctx) {
  for (const event of ctx.session?.events ?? []) {
    for (const part of event.content?.parts ?? []) {
      if (part.functionResponse?.id === CALL) return part.functionResponse.response?.result ?? null;
    }
  }
  return undefined;
}

function delta(agent, ctx, stateDelta) {
  return adk.createEvent({
    author: agent.name, invocationId: ctx.invocationId, branch: ctx.branch,
    actions: adk.createEventActions({ stateDelta }),
  });
}

// The tree both sides build (same names, same call); `holdB` (the writer's) runs before b asks.
export function tree(runs, holdB) {
  const count = (name) => (runs[name] = (runs[name] ?? 0) + 1);
  class A extends adk.BaseAgent {
    async *runAsyncImpl(ctx) {
      count("a");
      yield delta(this, ctx, { a_out: "a-done" });
    }
    async *runLiveImpl() {}
  }
  class B extends adk.BaseAgent {
    async *runAsyncImpl(ctx) {
      count("b");
      const answer = answered(ctx);
      if (answer !== undefined) {
        yield delta(this, ctx, { b_out: `b:${answer}` });
        return;
      }
      if (holdB) await holdB();
      const content = { role: "model", parts: [{ functionCall: { id: CALL, name: ASK, args: {} } }] };
      yield adk.createEvent({ author: this.name, invocationId: ctx.invocationId, branch: ctx.branch, content, longRunningToolIds: [CALL] });
    }
    async *runLiveImpl() {}
  }
  class Join extends adk.BaseAgent {
    async *runAsyncImpl(ctx) {
      count("join");
      const state = ctx.session?.state ?? {};
      yield delta(this, ctx, { joined: `${state.a_out}+${state.b_out}` });
    }
    async *runLiveImpl() {}
  }
  const fanout = new adk.ParallelAgent({ name: "fanout", subAgents: [new A({ name: "a" }), new B({ name: "b" })] });
  return new adk.SequentialAgent({ name: "pipeline", subAgents: [fanout, new Join({ name: "join" })] });
}

// The calls of b no later event answers.
export function pending(events) {
  const done = new Set(events.flatMap((e) => (e.content?.parts ?? []).filter((p) => p.functionResponse).map((p) => p.functionResponse.id)));
  return events.flatMap((e) =>
    (e.content?.parts ?? [])
      .filter((p) => p.functionCall && (e.longRunningToolIds ?? []).includes(p.functionCall.id) && !done.has(p.functionCall.id))
      .map((p) => ({ event: e, call: p.functionCall })),
  );
}

function stateOf(session) {
  return Object.fromEntries(["a_out", "b_out", "joined"].map((k) => [k, session?.state?.[k] ?? null]));
}

async function closed(service) {
  await service.orm?.close?.(true);
}

async function drive(runner, sessionId, newMessage) {
  for await (const _ of runner.runAsync({ userId: USER, sessionId, newMessage })) void _;
}

// Run until b waits for input with a done and stored; what the run did and left, as plain data.
export async function write(store, sessionId) {
  const runs = {};
  const stuck = [];
  let storedA;
  const aStored = new Promise((resolve) => (storedA = resolve));
  const holdB = async () => {
    let timer;
    const guard = new Promise((resolve) => (timer = setTimeout(() => resolve("stuck"), GATE_MS)));
    if ((await Promise.race([aStored, guard])) === "stuck") stuck.push(`a's event was not stored within ${GATE_MS / 1000} s while b waited`);
    clearTimeout(timer);
  };
  const sessions = await service(store);
  const append = sessions.appendEvent.bind(sessions);
  sessions.appendEvent = async (args) => {
    const stored = await append(args);
    if (args.event.author === "a" && "a_out" in (args.event.actions?.stateDelta ?? {})) storedA();
    return stored;
  };
  let raised = null;
  let session;
  try {
    await sessions.createSession({ appName: APP, userId: USER, sessionId });
    try {
      await drive(new adk.Runner({ appName: APP, agent: tree(runs, holdB), sessionService: sessions }), sessionId, { role: "user", parts: [{ text: "go" }] });
    } catch (error) {
      raised = `${error?.name ?? "Error"}: ${String(error?.message ?? error).split("\n")[0]}`;
    }
    session = await sessions.getSession({ appName: APP, userId: USER, sessionId });
  } finally {
    await closed(sessions);
  }
  return { adk: adkVersion(), runs, raised, pending: pending(session?.events ?? []).map((p) => p.call.name), state: stateOf(session), stuck };
}

function firstLine(error) {
  return String(error?.message ?? error).trim().split("\n")[0] || "(no message)";
}

// Answer b's pending call on the stored session; what this process ran and what the store holds after.
export async function resume(store, sessionId) {
  const runs = {};
  const errors = {};
  let raises = null;
  let readRaises = null;
  let sessions = await service(store);
  try {
    const session = await sessions.getSession({ appName: APP, userId: USER, sessionId });
    const calls = pending(session?.events ?? []);
    if (!calls.length) throw new RangeError("the stored session holds no pending long-running call");
    const { call } = calls[calls.length - 1];
    const message = { role: "user", parts: [{ functionResponse: { id: call.id, name: call.name, response: { result: ANSWER } } }] };
    await drive(new adk.Runner({ appName: APP, agent: tree(runs, null), sessionService: sessions }), sessionId, message);
  } catch (error) {
    raises = error?.name && error.name !== "Error" ? error.name : error?.constructor?.name ?? "Error";
    errors.raises = firstLine(error);
  } finally {
    await closed(sessions);
  }
  let final = null;
  let left = null;
  sessions = await service(store); // a fresh service reads what the store holds
  try {
    const stored = await sessions.getSession({ appName: APP, userId: USER, sessionId });
    final = stateOf(stored);
    left = pending(stored?.events ?? []).length;
  } catch (error) {
    readRaises = error?.name && error.name !== "Error" ? error.name : error?.constructor?.name ?? "Error";
    errors.read_raises = firstLine(error);
  } finally {
    await closed(sessions);
  }
  const ran = Object.fromEntries(["a", "b", "join"].map((k) => [k, runs[k] ?? 0]));
  return { raises, read_raises: readRaises, runs_on_resume: ran, final, pending_after: left, errors };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href && process.argv[2] === "write") {
  const [store, sessionId] = process.argv.slice(3);
  const reason = await missing();
  console.log(JSON.stringify(reason ? { adk: adkVersion(), missing: reason } : await write(JSON.parse(store), sessionId)));
  process.exit(0); // a pool the release leaves open must not keep the writer alive
}
