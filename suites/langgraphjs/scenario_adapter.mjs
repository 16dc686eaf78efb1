// LangGraph.js's scenario adapter (docs/ADAPTERS.md): a scenario as a StateGraph.
// Every scenario key is a plain channel (`Annotation()`: no reducer), every branch a node fanned out from
// START (a branch of several parts, split by `then`, a chain of nodes, `b -> b.2`), the branches' last nodes
// joined by one node (`addEdge([...], "join")`: it waits for all), which counts its runs (`join.runs`). A
// conditional fan-out (`select`) is addConditionalEdges(START, ...) naming the selected branches. A branch reads its
// input state (or what it wrote itself) and writes by returning an update at its end; its `return` value
// goes to an appending channel the join reads (`join.saw`). A node that throws aborts its siblings through
// config.signal: a sibling waiting for its turn stops there (`cancelled`). The graph runs with a MemorySaver,
// so `final` is what getState shows after the run, raised or not (null when getState refuses). A branch that asks
// to stop the run (`escalate`) ends its last node with `new Command({ goto: END })`, a node's way to route to the
// end, and has no edge to the join (the join waits on the other branches only). With `runs`, the one compiled
// graph runs again with a fresh input on a thread of its own (a new conversation); with `thread`, on the first
// run's thread, its input the scenario's keys and an empty list of returns (reducer: appended), as in Python.
// With `resume` (scenario_resume.mjs), the stopped run is resumed on its thread: `Command({ resume })` after an
// `interrupt()` (`pause`), null after a failure.
// Run as a program from a directory where @langchain/langgraph is installed: `node scenario_adapter.mjs`.
import { Annotation, Command, END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Script, declare, isMain, packageVersion, serve } from "../scenario_kit.mjs";
import * as resuming from "./scenario_resume.mjs";

// Why two runs at once cannot each open a store object on one database here (none where a SQLite checkpointer is
// installed): @langchain/langgraph itself ships MemorySaver only, whose checkpoints live in the one object.
function noSharedStore() {
  const sqlite = "@langchain/langgraph-checkpoint-sqlite";
  if (existsSync(join(process.cwd(), "node_modules", sqlite, "package.json"))) return {};
  return {
    together: `${sqlite} is not installed in this cell, and @langchain/langgraph ships MemorySaver only, whose checkpoints live in the one object: a second saver opens no shared store`,
  };
}

// The channel the branches' `return` values are appended to, for the join to read.
const RETURNS = "fanin_returns";

async function run(scenario, order) {
  const script = new Script(scenario, order);
  const initial = script.state;
  const channels = Object.fromEntries(Object.keys(initial).map((key) => [key, Annotation()]));
  channels[RETURNS] = Annotation({ reducer: (left, right) => left.concat(right), default: () => [] });
  const State = Annotation.Root(channels);
  let saw = null;
  const branchNode = (name, part) => async (state, config) => {
    const update = {};
    const read = (key) => (key in update ? update[key] : state[key]);
    const write = (key, value) => {
      update[key] = value;
    };
    const returned = await script.branch(name, read, write, config?.signal, part, resuming.pause);
    if (returned !== null) update[RETURNS] = [returned];
    if (part === script.parts(name) - 1 && script.escalates(name)) return new Command({ update, goto: END });
    return update;
  };
  let builder = new StateGraph(State);
  const chains = script.branches.map((name) => Array.from({ length: script.parts(name) }, (_, part) => script.node(name, part)));
  script.branches.forEach((name, i) => chains[i].forEach((node, part) => (builder = builder.addNode(node, branchNode(name, part)))));
  builder = builder.addNode("join", async (state) => {
    script.joinRuns += 1;
    saw = [...state[RETURNS]];
    return {};
  });
  for (const chain of chains) {
    for (let i = 1; i < chain.length; i++) builder = builder.addEdge(chain[i - 1], chain[i]);
  }
  const firsts = chains.map((chain) => chain[0]);
  if (script.selected.length === script.branches.length) {
    for (const first of firsts) builder = builder.addEdge(START, first);
  } else {
    // A conditional fan-out: the router names the selected branches' first nodes.
    const chosen = script.selected.map((name) => firsts[script.branches.indexOf(name)]);
    builder = builder.addConditionalEdges(START, () => chosen, firsts);
  }
  const joined = chains.filter((_, i) => !script.escalates(script.branches[i])).map((chain) => chain.at(-1));
  builder = builder.addEdge(joined, "join").addEdge("join", END);
  const graph = builder.compile({ checkpointer: new MemorySaver() });
  let config;
  let raises = null;
  let caught = null;
  for (let number = 0; number < script.runs; number++) {
    // `runs`: the compiled graph run again, a fresh input on a new thread; `thread`: every run on the first's.
    if (number) {
      await script.again();
      saw = null; // the adapter's own record of the join, per run
    }
    config = { configurable: { thread_id: `scenario-${script.sameThread ? 1 : number + 1}` } };
    raises = null;
    caught = null;
    try {
      await script.run(graph.invoke({ ...initial, [RETURNS]: [] }, config));
    } catch (error) {
      caught = error;
      raises = error?.name && error.name !== "Error" ? error.name : error?.constructor?.name ?? "Error";
    }
  }
  if (script.resumes) {
    // `resume`: the stopped run resumed once on its thread, LangGraph.js's way.
    await script.resume();
    raises = null;
    caught = null;
    try {
      await script.run(graph.invoke(resuming.resumeInput(script), config));
    } catch (error) {
      caught = error;
      raises = error?.name && error.name !== "Error" ? error.name : error?.constructor?.name ?? "Error";
    }
  }
  // The state the caller can read after the run; null when getState itself refuses (it raises again what
  // the failed step's writes raised).
  const final = async () => {
    let snapshot;
    try {
      snapshot = await graph.getState(config);
    } catch {
      return null;
    }
    const { [RETURNS]: _, ...values } = snapshot.values ?? {};
    return Object.keys(values).length ? values : null;
  };
  return script.answer({ raises, final, saw, error: caught });
}

export const adapter = {
  capabilities: () =>
    declare("langgraphjs", packageVersion("@langchain/langgraph"), { ...noSharedStore(), ...resuming.cannot() }, [
      ...["runs", "thread", "escalate", "stall", "pause", "resume"],
    ]),
  run,
};

if (isMain(import.meta.url)) await serve(adapter);
