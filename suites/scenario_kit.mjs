// The Node side of the scenario protocol (docs/ADAPTERS.md), the counterpart of suites/scenario_kit.py:
// `Script` runs a scenario's branch steps inside a framework's branches with the forced order, `handle`
// and `serve` speak the messages (one JSON object a line), `observe` is a scenario probe's body.
// An adapter only builds and observes; the harness grades (fanin.model.scenarios, from node_cell).
import { accessSync, constants, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import { dirname, join } from "node:path";
import { Gate, settle } from "./fanin_node.mjs";

export const PROTOCOL = 1;
// As fanin.model.scenarios: the base primitives `declare` claims unless an adapter says why it cannot, then the
// later ones an adapter names itself (`also`), so a scenario needing one it has not named is n/a for it.
export const BASE_PRIMITIVES = ["turn", "then", "read", "write", "write.add", "raise", "return", "select", "join.all"];
export const PRIMITIVES = [...BASE_PRIMITIVES, "runs", "escalate", "thread", "stall", "together", "pause", "resume"];
// What an adapter's resume answers a paused branch (`resume`), the same in every framework.
export const ANSWER = "approved";
// How many settle() rounds (50 event-loop turns each) a run may take without returning before it counts as one
// that never returns: turns of the loop, never a timer.
const IDLE_ROUNDS = 20;
// A deadlock breaker only (the branches were never in flight together): it decides no order.
const PATIENCE_MS = 10000;

// The error a `raise` step throws: one name in every adapter, so `raises` compares across frameworks.
export class BranchFailed extends Error {
  constructor(message, branch) {
    super(message);
    this.name = "BranchFailed";
    this.branch = branch; // which branch threw it: `raises.from`
  }
}

// The branches whose BranchFailed `error` is or carries (an AggregateError's errors, a cause), in order.
export function carried(error) {
  const found = [];
  const stack = [error];
  const seen = new Set();
  while (stack.length) {
    const current = stack.shift();
    if (current === null || current === undefined || typeof current !== "object" || seen.has(current)) continue;
    seen.add(current);
    if (current instanceof BranchFailed && !found.includes(current.branch)) found.push(current.branch);
    stack.push(...(Array.isArray(current.errors) ? current.errors : []), current.cause);
  }
  return found;
}

// A branch's steps split at each `then`: one list per node of the branch, in sequence (fanin.model.scenarios.parts).
function parts(steps) {
  const found = [[]];
  for (const step of steps) {
    if (step === "then") found.push([]);
    else found.at(-1).push(step);
  }
  return found;
}

// "aborted" once the framework's AbortSignal aborts (never without one): a branch waiting at a gate stops there.
function aborted(signal) {
  return new Promise((resolve) => {
    if (signal?.aborted) resolve("aborted");
    signal?.addEventListener("abort", () => resolve("aborted"));
  });
}

// gates.Turns: every branch waits at its turn until all are in flight, then they go one at a time in `order`.
export class Turns {
  constructor(order) {
    this.order = [...order];
    this.arrived = [];
    this.acted = [];
    this.vacuous = null;
    this.gates = Object.fromEntries(this.order.map((name) => [name, new Gate()]));
  }

  async wait(name, signal) {
    this.arrived.push(name);
    if (this.order.every((n) => this.arrived.includes(n))) this.gates[this.order[0]].open();
    let timer;
    const patience = new Promise((resolve) => {
      timer = setTimeout(() => resolve("patience"), PATIENCE_MS);
    });
    const why = await Promise.race([this.gates[name].wait().then(() => "turn"), patience, aborted(signal)]);
    clearTimeout(timer);
    if (why === "patience") {
      const missing = this.order.filter((n) => !this.arrived.includes(n));
      this.vacuous = missing.length
        ? `branches ${JSON.stringify(missing)} were never in flight while ${name} waited`
        : `every branch was in flight, but ${name}'s predecessors never finished`;
      this.gates[name].open();
    }
    return why;
  }

  done(name) {
    this.acted.push(name);
    const next = this.order[this.order.indexOf(name) + 1];
    if (next !== undefined) this.gates[next].open();
  }
}

// One run of a scenario in one forced order. `branch(name, read, write, signal)` runs a branch's steps:
// `read(key)` and `write(key, value)` are the framework's (they may return promises); a branch whose
// `signal` (the framework's AbortSignal) aborts while it waits for its turn stops there: `cancelled`.
export class Script {
  constructor(scenario, order) {
    this.scenario = scenario;
    this.steps = Object.fromEntries(scenario.branches.map((b) => [b.name, parts(b.do)]));
    this.branches = scenario.branches.map((b) => b.name);
    this.turns = new Turns(order);
    this.ends = Object.fromEntries(this.branches.map((name) => [name, "unfinished"]));
    this.releases = [];
    this.joinRuns = 0; // the adapter counts each run of its join (`join.runs`)
    // The branches the fan-out starts: a conditional fan-out (`select`) routes to these only.
    this.selected = scenario.branches.filter((b) => b.selected ?? true).map((b) => b.name);
    this.returned = null; // set by untilIdle: did the run return to its caller?
    this.seen = Object.fromEntries(this.branches.map((name) => [name, {}]));
    this.vacuous = null; // an earlier run's (`again`): the gate could not force that run's order
    this.ran = Object.fromEntries(this.branches.map((name) => [name, 0])); // runs to its end, over every run
    this.resuming = false; // `resume`: the stopped run is being resumed (no order is forced in it)
    this.answers = {}; // what each paused branch was answered on resume
    this.paused = new Set(); // branches whose pause stopped them (the framework's interrupt thrown)
    this.raisedOnce = new Set(); // `once` raises already thrown: never again
    this.runNumber = 0; // `together`: which run this view of the script is (1, 2...), 0 for the script itself
  }

  // Whether the runs are in flight at once on the one stored thread (`together = true`), each through its own store
  // object on one backing store (two workers, one database), one gate over every run's branches.
  get together() {
    return this.scenario.together === true;
  }

  // Run `number` (1 for the first) of a `together` scenario, as scenario_kit.py's of_run: a view whose branches take
  // the turns `<number>.<branch>` of the one shared gate, with its own ends, reads and join count.
  ofRun(number) {
    const view = Object.assign(Object.create(Script.prototype), this);
    view.runNumber = number;
    view.ends = Object.fromEntries(this.branches.map((name) => [name, "unfinished"]));
    view.seen = Object.fromEntries(this.branches.map((name) => [name, {}]));
    view.joinRuns = 0;
    view.returned = null;
    return view;
  }

  // The gate's name for branch `name`: its own, or `<run>.<branch>` in a view of one run (`ofRun`).
  turn(name) {
    return this.runNumber ? `${this.runNumber}.${name}` : name;
  }

  // Whether the adapter resumes the stopped run once from the framework's store (`resume = true`).
  get resumes() {
    return this.scenario.resume === true;
  }

  // Before the adapter resumes the stopped run, as scenario_kit.py's resume(): the first run has settled; in the
  // resumed run no turn waits, a `once` raise passes; `join.runs` and `ran.<branch>` count over both runs.
  async resume() {
    await Promise.all(this.releases);
    await settle();
    this.vacuous = this.vacuous ?? this.turns.vacuous;
    this.resuming = true;
    this.ends = Object.fromEntries(this.branches.map((name) => [name, "unfinished"]));
    this.releases = [];
    this.returned = null;
  }

  // How many times the adapter runs the graph it built once (`runs`, 1 unless the scenario says).
  get runs() {
    return Number(this.scenario.runs ?? 1);
  }

  // Whether every run goes on one stored thread or session (`thread = "same"`), not a new one each.
  get sameThread() {
    return this.scenario.thread === "same";
  }

  // The next run of the same built graph (`runs`), with a fresh input (`state`), as scenario_kit.py's again():
  // once the previous run has settled, a new gate in the same order and fresh ends, reads and join count, so the
  // fields observe this run. What the framework kept of the previous run is what the scenario asks about.
  async again() {
    await Promise.all(this.releases);
    await settle();
    this.vacuous = this.vacuous ?? this.turns.vacuous;
    this.turns = new Turns(this.turns.order);
    this.ends = Object.fromEntries(this.branches.map((name) => [name, "unfinished"]));
    this.releases = [];
    this.joinRuns = 0;
    this.returned = null;
    this.seen = Object.fromEntries(this.branches.map((name) => [name, {}]));
  }

  // How many nodes branch `name` is, in sequence (its steps split at each `then`).
  parts(name) {
    return this.steps[name].length;
  }

  // Whether branch `name` ends asking the framework to stop the whole run (its last step, `escalate`): the
  // adapter makes that request the framework's way once the branch's steps have run.
  escalates(name) {
    return this.steps[name].at(-1).includes("escalate");
  }

  // The name of part `part` of branch `name`: the branch's own name, then `b.2`, `b.3`...
  node(name, part) {
    return part === 0 ? name : `${name}.${part + 1}`;
  }

  get state() {
    return JSON.parse(JSON.stringify(this.scenario.state));
  }

  // `pause(name)` asks for human input the framework's way (a `pause` step): it returns the answer once resumed,
  // or throws the framework's interrupt.
  async branch(name, read, write, signal, part = 0, pause = null) {
    const steps = this.walk(name, read, signal, false, part, pause);
    for (;;) {
      const { value, done } = await steps.next();
      if (done) return value;
      await write(...value);
    }
  }

  // The branch's steps as a generator that yields each write as [key, value] and returns what the branch
  // hands to the join: for a framework whose branches write by yielding (ADK's events), `branch` for the rest.
  // With `later`, a branch that ends normally hands on its turn only when the adapter calls handOn(name):
  // once the framework has taken what it returned (ADK: the event yielded with it was consumed).
  // `part` is which node of a branch split by `then` this is: the branch is done when its last part ends, and
  // the next branch's turn comes when the part holding this one's turn ends.
  async *walk(name, read, signal, later = false, part = 0, pause = null) {
    const seen = this.seen[name];
    let returned = null;
    const steps = this.steps[name][part];
    const holdsTurn = steps.includes("turn");
    const last = part === this.parts(name) - 1;
    try {
      for (const [index, step] of steps.entries()) {
        if (step === "turn" && this.resuming) continue; // the order was forced in the first run
        if (step === "pause") {
          if (pause === null) throw new Error(`branch ${name} pauses: the adapter gives branch/walk a pause`);
          try {
            this.answers[name] = await pause(name);
          } catch (error) {
            this.paused.add(name); // the framework's interrupt: the run stops here, to be resumed
            throw error;
          }
          continue;
        }
        if (step === "turn") {
          if ((await this.turns.wait(this.turn(name), signal)) === "aborted") {
            this.ends[name] = "cancelled";
            throw signal.reason ?? new Error("aborted");
          }
          continue;
        }
        if (step === "escalate") continue; // the adapter asks its framework to stop the run (a later primitive)
        if (step === "stall") {
          // A branch that never finishes: its turn handed on, then a gate nobody opens (its signal aborting ends it).
          this.handOn(name);
          if ((await Promise.race([new Gate().wait(), aborted(signal)])) === "aborted") {
            this.ends[name] = "cancelled";
            throw signal.reason ?? new Error("aborted");
          }
        }
        const [kind, argument] = Object.entries(step).find(([key]) => key !== "once");
        if (kind === "raise" && step.once) {
          if (this.raisedOnce.has(`${name}:${part}:${index}`)) continue; // raised the first time; the re-run goes on
          this.raisedOnce.add(`${name}:${part}:${index}`);
        }
        if (kind === "read") seen[argument] = await read(argument);
        else if (kind === "write") yield [argument.key, "add" in argument ? seen[argument.key] + argument.add : argument.value];
        else if (kind === "raise") {
          this.ends[name] = "raised";
          throw new BranchFailed(argument, name);
        } else if (kind === "return") returned = argument;
      }
      if (last) {
        this.ends[name] = "done";
        this.ran[name] += 1;
      }
      return returned;
    } finally {
      const stops =
        this.ends[name] === "raised" ||
        (this.ends[name] === "unfinished" && this.paused.has(name)) ||
        (this.ends[name] === "done" && !later && this.escalates(name));
      if (stops && this.turns.order.at(-1) !== this.turn(name)) {
        // The next branch's turn comes once the framework has reacted to the failure or the stop the branch
        // asked for (the loop settled): a sibling it cancels is cancelled at its gate, one it waits for goes on.
        this.releases.push(settle().then(() => this.turns.done(this.turn(name))));
      } else if (!(later && this.ends[name] === "done") && (holdsTurn || this.ends[name] !== "unfinished")) {
        this.handOn(name);
      }
    }
  }

  // The framework's run awaited: through untilIdle when the scenario observes `returned`, plainly otherwise.
  async run(promise) {
    return this.scenario.observe.includes("returned") ? this.untilIdle(promise) : promise;
  }

  // Await the run, or learn from the event loop that it never returns: still pending after IDLE_ROUNDS settles
  // (nothing it could wait for is a timer or I/O here), `returned` is false and null is returned. What it throws
  // is thrown, as from a plain await.
  async untilIdle(promise) {
    let state = "pending";
    let value;
    let failure;
    Promise.resolve(promise).then(
      (v) => {
        state = "done";
        value = v;
      },
      (e) => {
        state = "failed";
        failure = e;
      },
    );
    for (let round = 0; state === "pending" && round < IDLE_ROUNDS; round++) {
      await Promise.all(this.releases);
      await settle();
    }
    this.returned = state !== "pending";
    if (state === "failed") throw failure;
    return state === "done" ? value : null;
  }

  // The next branch's turn (once per branch).
  handOn(name) {
    if (!this.turns.acted.includes(this.turn(name))) this.turns.done(this.turn(name));
  }

  observed(ends, raises, final, saw, carries) {
    const found = {};
    for (const field of this.scenario.observe) {
      const [head, ...rest] = field.split(".");
      const key = rest.join(".");
      if (field === "raises") found[field] = raises;
      else if (field === "raises.from") found[field] = carries;
      else if (field === "join.saw") found[field] = saw ?? null;
      else if (field === "join.runs") found[field] = this.joinRuns;
      else if (field === "returned") {
        if (this.returned === null) throw new Error("the scenario observes `returned`: run the framework through untilIdle");
        found[field] = this.returned;
      }
      else if (head === "final") found[field] = final === null || final === undefined ? null : (final[key] ?? null);
      else if (head === "branch") found[field] = ends[key];
      else if (head === "ran") found[field] = this.ran[key];
      else if (head === "read") found[field] = this.seen[rest[0]][rest.slice(1).join(".")] ?? null;
    }
    return found;
  }

  // The run's answer, called as the run returns: branch ends as they were then, `final()` read once the
  // loop has settled; vacuous when the gate could not force the order. `error` is what the caller caught,
  // for `raises.from`.
  async answer({ raises, final, saw, error }) {
    const ends = { ...this.ends };
    await Promise.all(this.releases);
    await settle();
    const vacuous = this.vacuous ?? this.turns.vacuous;
    if (vacuous) return { vacuous };
    return { observed: this.observed(ends, raises, await final(), saw, carried(error)) };
  }
}

// A directory of its own for a run's store files (`together`: the one SQLite file every store object opens), where
// the harness puts a cell's scratch (fanin.run.memory: FANIN_SCRATCH_ROOT, else /dev/shm, else the temporary
// directory), named so the harness sweeps it if the process dies; `remove()` when the run is over.
export function storeDir() {
  let root = process.env.FANIN_SCRATCH_ROOT;
  if (!root) {
    try {
      accessSync("/dev/shm", constants.W_OK | constants.X_OK);
      root = "/dev/shm";
    } catch {
      root = tmpdir();
    }
  }
  const path = mkdtempSync(join(root, `fanin-scratch-${process.pid}-scenario-`));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

// A Node adapter's answer to start: every base primitive but those it names with the reason it cannot, and the
// later ones it names in `also` (one it does not name is n/a, "does not express": an older adapter stays valid).
export function declare(framework, version, cannot = {}, also = []) {
  const late = also.filter((p) => !PRIMITIVES.includes(p) || BASE_PRIMITIVES.includes(p));
  if (late.length) throw new Error(`also names primitives after the base ones, not ${late.join(", ")}`);
  const supports = [...BASE_PRIMITIVES, ...also].filter((p) => !(p in cannot));
  const answer = { framework, version, protocol: PROTOCOL, language: "javascript", supports };
  if (Object.keys(cannot).length) answer.cannot = cannot;
  return answer;
}

// An adapter is { capabilities(), run(scenario, order) }; the answer to one message (null for stop).
export async function handle(adapter, message) {
  if (message.cmd === "start") {
    if (message.protocol !== PROTOCOL) return { error: `this adapter speaks protocol ${PROTOCOL}, not ${message.protocol}` };
    return adapter.capabilities();
  }
  if (message.cmd === "stop") return null;
  if (message.cmd !== "run") return { error: `unknown command ${JSON.stringify(message.cmd)}` };
  const started = performance.now();
  let reply;
  try {
    reply = await adapter.run(message.scenario, [...message.order]);
  } catch (error) {
    reply = { error: `${error?.name ?? "Error"}: ${error?.message ?? error}` };
  }
  await settle();
  return { ...reply, took_s: Math.round(performance.now() - started) / 1000 };
}

// The adapter as a program: one JSON message a line on stdin, one answer a line on stdout, until stop.
// Standard output carries the protocol alone: whatever else is written there (a framework's console.warn,
// as @google/adk prints on import) goes to standard error, where the harness keeps it as the adapter's log.
export async function serve(adapter) {
  const answer = process.stdout.write.bind(process.stdout);
  process.stdout.write = process.stderr.write.bind(process.stderr);
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    if (!line.trim()) continue;
    const reply = await handle(adapter, JSON.parse(line));
    if (reply === null) break;
    answer(JSON.stringify(reply) + "\n");
  }
  lines.close();
}

// The installed version of a package, read from node_modules in the current directory (a package whose
// "exports" hides its package.json, as @google/adk before 2.0 does, is read as a file all the same).
export function packageVersion(name) {
  return JSON.parse(readFileSync(join(process.cwd(), "node_modules", name, "package.json"), "utf-8")).version;
}

// Whether a module is the program node runs (`node scenario_adapter.mjs`), not an import.
export function isMain(url) {
  return Boolean(process.argv[1]) && url === pathToFileURL(process.argv[1]).href;
}

// The scenarios, as the harness wrote them beside the copied suite (fanin.run.node_cell: scenarios.json).
function catalogue() {
  const here = dirname(fileURLToPath(import.meta.url));
  return JSON.parse(readFileSync(join(here, "scenarios.json"), "utf-8"));
}

// A message and its answer as the protocol carries them: JSON text both ways.
async function exchange(adapter, message) {
  const reply = await handle(adapter, JSON.parse(JSON.stringify(message)));
  return reply === null ? null : JSON.parse(JSON.stringify(reply));
}

// A scenario probe: start, every forced order the adapter can express, stop; node_cell grades the answers.
export async function observe(obs, adapter) {
  const { scenario, primitives } = catalogue()[obs.id.split("/")[2]];
  const capable = await exchange(adapter, { cmd: "start", protocol: PROTOCOL });
  const answers = {};
  if (primitives.every((p) => (capable?.supports ?? []).includes(p))) {
    for (const order of scenario.orders) answers[order.join(",")] = await exchange(adapter, { cmd: "run", scenario, order });
  }
  await exchange(adapter, { cmd: "stop" });
  if (obs.observation !== null) throw new Error(`${obs.id} recorded twice; a probe records exactly one observation`);
  obs.observation = { scenario: { capabilities: capable, answers } };
}
