// A live thread across releases (suites/langgraph/lg_live.py's port): one release leaves a thread mid-fan-out in a
// PostgresSaver store (@langchain/langgraph-checkpoint-postgres on the harness's PostgreSQL), another resumes it.
//
// `node live.mjs write STORE THREAD` (STORE: JSON {host, port, user, database}) runs under an earlier release
// (fanin_node.mjs runWith: its node_modules), or under this cell's own for the same-release control, and prints one
// JSON line. The graph is START -> `a` and `b` in parallel -> `join` (a list edge): `a` returns, `b` waits until a's
// write is saved (a gate on the saver's putWrites, never a clock) and then asks for input with `interrupt()`; the
// writer returns once the run has stopped there. `resume` (in the probe's process) builds the same graph (same node
// names, so the same task ids) on the same store and answers with `new Command({ resume })`. Both sides count their
// own node runs. It imports @langchain/langgraph, the saver, pg and Node alone, the saver and pg only when called
// (a cell without them still loads the probe's file): copied beside another release's node_modules, that release is
// what it runs.
import { Annotation, Command, END, START, StateGraph, interrupt } from "@langchain/langgraph";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const SAVER = "@langchain/langgraph-checkpoint-postgres";
export const ANSWER = "approved";
const GATE_MS = 10000; // only a hang guard: b is released by a's saved write

// An installed package's version, read where this file's imports resolve (the nearest node_modules up from it).
export function versionOf(name) {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const found = join(dir, "node_modules", ...name.split("/"), "package.json");
    if (existsSync(found)) return JSON.parse(readFileSync(found, "utf-8")).version;
    if (dirname(dir) === dir) return null;
  }
}

// The graph both sides build; `holdB` (the writer's) runs in `b` before its interrupt, on b's first run only.
export function builder(runs, holdB) {
  const count = (name) => (runs[name] = (runs[name] ?? 0) + 1);
  const State = Annotation.Root({ items: Annotation({ reducer: (left, right) => left.concat(right), default: () => [] }) });
  return new StateGraph(State)
    .addNode("a", async () => {
      count("a");
      return { items: ["a"] };
    })
    .addNode("b", async () => {
      if (count("b") === 1 && holdB) await holdB();
      const answer = interrupt("approve b?");
      return { items: [`b:${answer}`] };
    })
    .addNode("join", async () => {
      count("join");
      return { items: ["join"] };
    })
    .addEdge(START, "a")
    .addEdge(START, "b")
    .addEdge(["a", "b"], "join")
    .addEdge("join", END);
}

// A saver on `store`'s database (a pool of the pg the saver depends on); `onWrites` sees each saved putWrites.
async function saver(store, onWrites) {
  const { PostgresSaver } = await import(SAVER);
  const { default: pg } = await import("pg");
  const saved = new PostgresSaver(new pg.Pool(store));
  await saved.setup();
  if (onWrites) {
    const put = saved.putWrites.bind(saved);
    saved.putWrites = async (config, writes, taskId) => {
      await put(config, writes, taskId);
      onWrites(writes);
    };
  }
  return saved;
}

// The database the probe writes into, made on the server (the pg of the release the probe runs).
export async function createDatabase(store) {
  const { default: pg } = await import("pg");
  const client = new pg.Client({ ...store, database: "postgres" });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${store.database}"`);
    await client.query(`CREATE DATABASE "${store.database}"`);
  } finally {
    await client.end();
  }
}

function nameOf(error) {
  return error?.name && error.name !== "Error" ? error.name : error?.constructor?.name ?? "Error";
}

// Run until b asks for input with a done and saved; what the run did, as plain data.
export async function write(store, thread) {
  const runs = {};
  const stuck = [];
  let aSaved = false;
  let release;
  const saved = new Promise((resolve) => (release = resolve));
  const onWrites = (writes) => {
    if (writes.some(([channel, value]) => channel === "items" && JSON.stringify(value) === '["a"]')) {
      aSaved = true;
      release();
    }
  };
  const holdB = async () => {
    let timer;
    const guard = new Promise((resolve) => (timer = setTimeout(() => resolve("stuck"), GATE_MS)));
    if ((await Promise.race([saved, guard])) === "stuck") stuck.push(`a's write was not saved within ${GATE_MS / 1000} s while b waited`);
    clearTimeout(timer);
  };
  const config = { configurable: { thread_id: thread } };
  const checkpointer = await saver(store, onWrites);
  let raised = null;
  let next = null;
  try {
    const graph = builder(runs, holdB).compile({ checkpointer });
    try {
      await graph.invoke({ items: [] }, config);
    } catch (error) {
      raised = `${nameOf(error)}: ${String(error?.message ?? error).split("\n")[0]}`;
    }
    next = [...((await graph.getState(config)).next ?? [])].sort();
  } finally {
    await checkpointer.end();
  }
  return { langgraph: versionOf("@langchain/langgraph"), saver: versionOf(SAVER), runs, next, a_saved: aSaved, raised, stuck };
}

// Answer b's interrupt on the stored thread; what this process ran and what the thread holds after.
export async function resume(store, thread) {
  const runs = {};
  const config = { configurable: { thread_id: thread } };
  const errors = {};
  let raises = null;
  let readRaises = null;
  let final = null;
  let next = null;
  const checkpointer = await saver(store, null);
  try {
    const graph = builder(runs, null).compile({ checkpointer });
    try {
      await graph.invoke(new Command({ resume: ANSWER }), config);
    } catch (error) {
      raises = nameOf(error);
      errors.raises = String(error?.message ?? error).split("\n")[0];
    }
    try { // a saver that cannot load the stored checkpoint fails here too: that is its answer, not a defect
      const snapshot = await graph.getState(config);
      final = [...(snapshot.values?.items ?? [])];
      next = [...(snapshot.next ?? [])].sort();
    } catch (error) {
      readRaises = nameOf(error);
      errors.read_raises = String(error?.message ?? error).split("\n")[0];
    }
  } finally {
    await checkpointer.end();
  }
  const ran = Object.fromEntries(["a", "b", "join"].map((k) => [k, runs[k] ?? 0]));
  return { raises, read_raises: readRaises, runs_on_resume: ran, final, next, errors };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href && process.argv[2] === "write") {
  const [store, thread] = process.argv.slice(3);
  console.log(JSON.stringify(await write(JSON.parse(store), thread)));
  process.exit(0); // a pool the release leaves open must not keep the writer alive
}
