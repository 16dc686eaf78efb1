// fanin's kit for Node probes (suites/<framework>/*.test.mjs), the counterpart of fanin.probe.
// A probe is `probe({...strict JSON metadata...}, async function name(obs) {...});` at column 0
// (fanin.model.js_source reads the metadata and hashes the text; it never runs JavaScript).
// Each probe runs as one node:test test and writes one observation as JSON into
// $FANIN_NODE_OUT/<n>.json; fanin.run.node_cell turns those into the cell's result set.
import { test } from "node:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createRequire } from "node:module";
import { copyFileSync, mkdtempSync, readFileSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename } from "node:path";
import { execFile } from "node:child_process";

export class FrameworkRaised extends Error {}
export class NotApplicable extends Error {}
export class Vacuous extends Error {}

// Plain data only: a probe says what it saw as JSON-able values (Sets become sorted lists).
export function plain(value) {
  if (value instanceof Set) return [...value].map(plain).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
  if (Array.isArray(value)) return value.map(plain);
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  return value;
}

export class Observer {
  constructor(meta) {
    this.id = meta.id;
    this.observation = null;
  }

  record(value, { label, detail, hazard, outcome = "ok" }) {
    if (this.observation !== null) throw new Error(`${this.id} recorded twice; a probe records exactly one observation`);
    this.observation = { outcome, value: plain(value), label, detail, hazard };
  }

  // The framework's error is the answer: outcome raises:<class name>, its message in the detail only.
  raised(error, { value, hazard = "loud" } = {}) {
    const name = errorName(error);
    const payload = { exception: name };
    if (value !== undefined) payload.observed = value;
    const message = String(error?.message ?? error).split("\n")[0] || "(no message)";
    this.record(payload, { label: name, detail: `raises ${name}: ${message}`, hazard, outcome: `raises:${name}` });
  }

  // Run framework code whose rejection is the observation (like `with obs.framework():`).
  async framework(fn, { value, hazard = "loud" } = {}) {
    try {
      return await fn();
    } catch (error) {
      this.raised(error, { value: value ? value() : undefined, hazard });
      throw new FrameworkRaised(errorName(error));
    }
  }

  // What the installed package exports; a version without it makes the probe n/a with the reason.
  async need(module, ...names) {
    let mod;
    try {
      mod = await import(module);
    } catch (error) {
      throw new NotApplicable(`no module ${module} in this version (${errorName(error)})`);
    }
    for (const name of names) {
      if (!(name in mod)) throw new NotApplicable(`${module}.${name} does not exist in this version`);
    }
    return mod;
  }

  // Vacuous unless the writers ran in one superstep (LangGraph's metadata.langgraph_step).
  requireSameStep(steps, expected, what = "writers") {
    const values = Object.values(steps);
    if (values.length !== expected || new Set(values).size !== 1) {
      throw new Vacuous(`expected ${expected} ${what} in one superstep, saw ${JSON.stringify(steps)}`);
    }
  }
}

function errorName(error) {
  return (error && (error.name !== "Error" ? error.name : error.constructor?.name)) || "Error";
}

// A gate: an event only the probe sets. `await gate.wait()` parks a branch until `gate.open()`.
export class Gate {
  constructor() {
    this.opened = false;
    this.promise = new Promise((resolve) => (this.resolve = resolve));
  }
  open() {
    this.opened = true;
    this.resolve();
  }
  wait() {
    return this.promise;
  }
}

// Let every runnable promise callback and I/O-free task run (the event loop's "idle"), a bounded
// number of macrotask turns: read "has X happened yet" after it, never decide an order with a timer.
export async function settle(turns = 50) {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
}

// The installed version of a package, from its package.json in node_modules (recorded by the harness too).
export function installedVersion(name) {
  const require = createRequire(join(process.cwd(), "package.json"));
  return require(`${name}/package.json`).version;
}

// The release whose stores a live-thread probe resumes (fanin.probe's earlier_release; the contract's EARLIER_*):
// {version, node, dir}, `dir` its cell's npm ci directory. n/a where the run has none (the framework's first cell,
// `probe --here`); a version without its directory is the harness's defect, so the probe ends as probe-error.
export function earlierRelease(obs) {
  const version = process.env.FANIN_EARLIER_VERSION;
  if (!version) {
    const reason =
      "no earlier release to write the store: the first cell of its framework, or `probe --here` (one environment);" +
      " `fanin upgrade --from <yours>` runs it";
    // recorded here, with the flag compare.py reads (not covered, never a regression); probe() passes on an
    // observation recorded before a FrameworkRaised, as it does obs.raised's
    const value = { reason, needs_earlier_release: true };
    obs.record(value, { label: "n/a", detail: `n/a: ${reason}`, hazard: "n/a", outcome: "n/a" });
    throw new FrameworkRaised("n/a");
  }
  const dir = process.env.FANIN_EARLIER_NODE_DIR;
  const node = process.env.FANIN_EARLIER_NODE;
  if (!dir || !node) throw new Error(`the earlier release ${version} was named but its directory was not built (see the log)`);
  return { version, node, dir };
}

// This cell's own release in the same shape: the control, which writes and resumes its own store.
export function thisRelease(pkg) {
  // read as a file: an exports map may leave package.json out (@google/adk's does)
  const version = JSON.parse(readFileSync(join(process.cwd(), "node_modules", pkg, "package.json"), "utf-8")).version;
  return { version, node: process.execPath, dir: process.cwd() };
}

// Run `files[0]` (with the modules beside it it imports, `files[1..]`: paths or file: URLs) under `release`'s Node,
// its bare imports resolved to `release.dir`'s node_modules: the files are copied into a fresh folder beside a
// symlink to them, so Node's own resolution (realpaths) finds that release's packages and their dependencies, and
// neither cell's directory is written. Resolves to the last line of its stdout, parsed as JSON.
export function runWith(release, files, args = [], timeoutMs = 120000) {
  const folder = mkdtempSync(join(tmpdir(), "fanin-writer-"));
  symlinkSync(join(release.dir, "node_modules"), join(folder, "node_modules"), "dir");
  const paths = files.map((f) => (String(f).startsWith("file:") ? new URL(f).pathname : String(f)));
  for (const path of paths) copyFileSync(path, join(folder, basename(path)));
  const script = join(folder, basename(paths[0]));
  return new Promise((resolve, reject) => {
    // the timeout only ends a writer that hangs (a broken release); it decides nothing
    execFile(release.node, [script, ...args], { cwd: folder, timeout: timeoutMs, maxBuffer: 1 << 24 }, (error, stdout, stderr) => {
      if (error) {
        reject(new Error(`the writer (${release.node}, ${release.version}) failed: ${String(stderr || error.message).slice(-2000)}`));
        return;
      }
      const lines = stdout.trim().split("\n");
      resolve(JSON.parse(lines[lines.length - 1]));
    });
  });
}

// Where the PostgreSQL the harness runs for a probe whose metadata names `"services": ["postgres"]` listens (the
// contract's POSTGRES_DSN, a libpq string: host is the socket's directory): {host, port, user}, the fields every
// Node driver (pg, mikro-orm) takes. A run without it is the harness's defect, never an n/a: probe-error.
export function postgresServer() {
  const dsn = process.env.FANIN_POSTGRES_DSN;
  if (!dsn) throw new Error("no PostgreSQL server in this run (FANIN_POSTGRES_DSN is unset); run the cell through ./noxw");
  const fields = Object.fromEntries(dsn.trim().split(/\s+/).map((pair) => pair.split("=", 2)));
  return { host: fields.host, port: Number(fields.port ?? 5432), user: fields.user };
}

// A database name unique to one observation and to the cell run (the tag: cells share a matrix run's server).
export function databaseName(id) {
  const slug = id.toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_+|_+$/g, "").slice(0, 36);
  const tag = (process.env.FANIN_POSTGRES_TAG ?? "").replace(/[^a-z0-9]/gi, "").toLowerCase().slice(0, 12);
  return `fanin_${slug}_${tag || "local"}`;
}

// The labels every live-thread probe can end with (suites/live_kit.py's; tests/test_node_earlier.py compares them),
// each within the result schema's 40 characters: a longer one would make the observation a probe-error.
export const live = {
  same: (store) => `resumes as a ${store} it wrote itself`,
  raised: (what, name) => (`${what} raised ${name}`.length <= 40 ? `${what} raised ${name}` : `${what} raised`),
  unlike: (store) => `resumes unlike a ${store} it wrote`,
};

let written = 0;

export function probe(meta, fn) {
  test(meta.id, async () => {
    const obs = new Observer(meta);
    try {
      await fn(obs);
      if (obs.observation === null) obs.observation = probeError("the probe returned without recording an observation");
    } catch (error) {
      if (error instanceof NotApplicable) {
        obs.observation = { outcome: "n/a", value: { reason: error.message }, label: "n/a", detail: `n/a: ${error.message}`, hazard: "n/a" };
      } else if (error instanceof Vacuous) {
        obs.observation = { outcome: "vacuous", value: { reason: error.message }, label: "vacuous", detail: `vacuous: ${error.message}`, hazard: "n/a" };
      } else if (!(error instanceof FrameworkRaised)) {
        const where = String(error?.stack ?? "").split("\n").find((l) => l.includes(".test.mjs")) ?? "?";
        obs.observation = probeError(`${errorName(error)}: ${error?.message ?? error}`, where.trim().replace(/^at .*\//, "").replace(/\)$/, ""));
      }
    }
    const out = process.env.FANIN_NODE_OUT;
    if (out) {
      mkdirSync(out, { recursive: true });
      written += 1;
      writeFileSync(join(out, `${process.pid}-${written}.json`), JSON.stringify({ id: meta.id, ...obs.observation }));
    }
    if (obs.observation.outcome === "probe-error") throw new Error(obs.observation.detail);
  });
}

function probeError(message, where) {
  const value = where ? { error: message, where } : { error: message };
  return { outcome: "probe-error", value, label: "probe-error", detail: `probe-error: ${message}`, hazard: "n/a" };
}

// The legend's order of harm (fanin.model.compare.harm; tests/test_kits.py checks they agree); n/a ranks with safe.
const HARM = { safe: 0, "order-coupled": 1, loud: 2, nondeterministic: 2, hangs: 3, silent: 4 };

export function harm(hazard) {
  return HARM[hazard] ?? 0;
}

// The first of the most harmful (Python's max(..., key=harm)).
function worst(hazards) {
  return hazards.reduce((found, h) => (harm(h) > harm(found) ? h : found));
}

// Plain data compared as Python compares it: dict key order does not matter.
function canonicalJson(value) {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

export function sameValue(a, b) {
  return canonicalJson(plain(a)) === canonicalJson(plain(b));
}

// How a mitigation probe judges what it saw: suites/mitigation.py's judge, for Node probes (the same value
// and hazard for the same runs; tests/test_kits.py runs both). `variants[variant][run]` is
// {made, kept, result, wrong?, observed?}, {raises: Name}, {hangs: what}, or a variant {"n/a": reason}.
export function judge(variants) {
  const made = [];
  const kept = [];
  const lost = [];
  const wrong = [];
  const shown = {};
  const hazards = {};
  const many = Object.keys(variants).length > 1;
  for (const [variant, runs] of Object.entries(variants)) {
    if ("n/a" in runs) {
      shown[variant] = runs;
      continue;
    }
    const found = ["safe"];
    const results = [];
    const several = Object.keys(runs).length > 1;
    for (const [run, seen] of Object.entries(runs)) {
      const stopped = "raises" in seen ? "loud" : "hangs" in seen ? "hangs" : null;
      if (stopped) {
        found.push(stopped);
        results.push(seen);
        continue;
      }
      const tag = [...(many ? [variant] : []), ...(several ? [run] : [])].join(" | ");
      const named = (w) => (tag ? `${tag} | ${w}` : w);
      const missing = seen.made.filter((w) => !seen.kept.includes(w)).map(named);
      made.push(...seen.made.map(named));
      kept.push(...seen.made.filter((w) => seen.kept.includes(w)).map(named));
      lost.push(...missing);
      wrong.push(...(seen.wrong ?? []).map(named));
      found.push(missing.length || (seen.wrong ?? []).length ? "silent" : "safe");
      results.push(seen.result);
    }
    const same = results.every((r) => sameValue(r, results[0]));
    if (!same) found.push("order-coupled");
    hazards[variant] = worst(found);
    shown[variant] = {
      hazard: hazards[variant],
      ...(several ? { order_independent: same } : {}),
      runs: Object.fromEntries(
        Object.entries(runs).map(([run, seen]) => [run, "raises" in seen || "hangs" in seen ? seen : { result: seen.result, ...(seen.observed ?? {}) }]),
      ),
    };
  }
  const hazard = Object.keys(hazards).length ? worst(Object.values(hazards)) : "n/a";
  return [plain({ writes: { made, kept }, lost, wrong, variants: shown }), hazard];
}

// A mitigation probe's observation: its variants judged, worded and recorded (every -mitigated probe ends so).
export function recordJudged(obs, variants, safe = null) {
  const [value, hazard] = judge(variants);
  const [label, detail] = words(value, hazard, safe);
  obs.record(value, { label, detail, hazard });
}

// A label (at most 40 characters) and a detail line for a judged mitigation (suites/mitigation.py's words;
// the detail shows results as JSON).
export function words(value, hazard, safe = null) {
  const variants = Object.fromEntries(Object.entries(value.variants).filter(([, v]) => !("n/a" in v)));
  const total = value.writes.made.length;
  const keptCount = value.writes.kept.length;
  let label;
  if (hazard === "safe") {
    const compared = Object.values(variants).some((v) => "order_independent" in v);
    label = safe ?? "every write kept" + (compared ? ", order-independent" : "");
  } else if (Object.keys(variants).length === 1) {
    label = {
      "order-coupled": "all kept, order-coupled",
      loud: "raises",
      hangs: "never ends",
      silent: `lost ${total - keptCount} of ${total}, ${value.wrong.length} wrong`,
    }[hazard] ?? hazard;
  } else {
    const unsafe = Object.entries(variants).filter(([, v]) => v.hazard !== "safe").map(([name, v]) => `${name.split(/\s+/)[0]}: ${v.hazard}`);
    label = unsafe.join("; ") + (unsafe.length < Object.keys(variants).length ? "; rest safe" : "");
  }
  label = [...label].length <= 40 ? label : [...label].slice(0, 39).join("") + "…";
  let detail = `${keptCount} of ${total} writes kept` + (value.wrong.length ? `; wrong: ${JSON.stringify(value.wrong)}` : "") + "; ";
  detail += Object.entries(value.variants)
    .map(([name, v]) => ("n/a" in v ? `${name}: n/a (${v["n/a"]})` : `${name}: ${v.hazard}, results ${JSON.stringify(Object.values(v.runs).map((r) => ("result" in r ? r.result : r)))}`))
    .join("; ");
  return [label, detail];
}

// Why a cell's lock has no `pkg` (a storage companion none of whose releases by the cell's date accepts its tree:
// fanin.versions.npm_storage writes the reason into the cell's package.json), or null where it was not left out.
// `dir` is a cell's directory: this cell's (the default) or an earlier release's (earlierRelease(obs).dir).
export function leftOut(pkg, dir = process.cwd()) {
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf-8"));
  return manifest.fanin?.left_out?.[pkg] ?? null;
}
