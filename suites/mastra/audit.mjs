// What `fanin audit FILE.mjs[:export]` sees in a Mastra workflow: which steps one `.parallel([...])` runs at once,
// and what each writes to workflow state, read from its execute source. Run by fanin.project.audit under the
// Node release the newest Mastra cell names, in a project whose node_modules holds @mastra/core (the harness
// never imports a framework): `node audit.mjs PROJECT FILE EXPORT RESULT`; it writes one JSON object to RESULT
// in the shape audit_inspect.py writes for the Python inspectors.
//
// A workflow is an object of @mastra/core's Workflow class (by class name, no import of the package). Its
// `stepGraph` (1.x; `stepFlow` before) lists entries: {type: "step", step}, {type: "parallel", steps: [...]},
// conditional, loop, foreach. A step's execute is given `state` (the object the engine handed it at its start)
// and `setState`; the probes observe that two parallel steps' setState of one key keep the last one folded in
// (mastra/scenario/same-key-two-writers), that a step reading a key and writing it back loses a sibling's update
// whether or not an await lies between (the step reads the state it started with: mastra/scenario/sibling-
// visibility, mastra/workflow-state/read-modify-write), and that distinct keys survive from 1.x on only
// (mastra/workflow-state/own-keys). Outputs returned by parallel steps reach the next step keyed by step id
// (mastra/join/input-keyed): no finding. `.branch` conditions, foreach concurrency and nested workflows are
// not read here: a nested workflow in a .parallel is a writer the audit names unknown, as is a step handing its
// argument or setState on; a helper handed `state` itself and changing it in place is not seen.
import { writeFileSync, readFileSync, existsSync } from "node:fs";
import { register } from "node:module";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { spawnSync } from "node:child_process";

const PACKAGE = "@mastra/core";
const NO_DRY_RUN = "the Mastra audit reads the workflow's step graph and its steps' execute source under Node; it has no dry run";
const MUTATORS = "push|pop|shift|unshift|splice|sort|reverse|fill|set|add|delete|clear";

// createStep keeps `params.execute.bind(params)` (1.x), whose text is `function () { [native code] }`: bind is
// wrapped, in this process only and before the target is imported, to remember each bound function's target,
// so the step's own execute can be read.
const boundFrom = new WeakMap();
const bind = Function.prototype.bind;
Function.prototype.bind = function remembered(...args) {
  const bound = bind.apply(this, args);
  boundFrom.set(bound, this);
  return bound;
};

function own(fn) {
  let seen = fn;
  while (boundFrom.has(seen)) seen = boundFrom.get(seen);
  return seen;
}

function isWorkflow(value) {
  if (!value || typeof value !== "object") return false;
  for (let proto = Object.getPrototypeOf(value); proto; proto = Object.getPrototypeOf(proto)) {
    if (proto.constructor?.name === "Workflow") return Array.isArray(value.stepGraph ?? value.stepFlow);
  }
  return false;
}

// --- reading a step's execute source (text, not a parser: enough for the shapes steps are written in) ---

function stripComments(src) {
  let out = "";
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c === '"' || c === "'" || c === "`") {
      const end = skipString(src, i);
      out += src.slice(i, end);
      i = end - 1;
    } else if (c === "/" && src[i + 1] === "/") {
      while (i < src.length && src[i] !== "\n") i++;
      out += "\n";
    } else if (c === "/" && src[i + 1] === "*") {
      const end = src.indexOf("*/", i + 2);
      out += " ".repeat((end < 0 ? src.length : end + 2) - i);
      i = end < 0 ? src.length : end + 1;
    } else out += c;
  }
  return out;
}

function skipString(src, i) {
  const quote = src[i];
  for (let j = i + 1; j < src.length; j++) {
    if (src[j] === "\\") j++;
    else if (src[j] === quote) return j + 1;
  }
  return src.length;
}

// The index just past the bracket closing the one at `open`.
function closing(src, open) {
  let depth = 0;
  for (let i = open; i < src.length; i++) {
    const c = src[i];
    if (c === '"' || c === "'" || c === "`") i = skipString(src, i) - 1;
    else if ("([{".includes(c)) depth++;
    else if (")]}".includes(c) && --depth === 0) return i + 1;
  }
  return src.length;
}

function splitTop(text) {
  const parts = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"' || c === "'" || c === "`") i = skipString(text, i) - 1;
    else if ("([{".includes(c)) depth++;
    else if (")]}".includes(c)) depth--;
    else if (c === "," && depth === 0) {
      parts.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(text.slice(start).trim());
  return parts.filter(Boolean);
}

const escape = (s) => s.replace(/[$]/g, "\\$");
// A local variable's name, not a property of the same name (`inputData.state` is no workflow state).
const local_ = (name) => `(?<![.\\w$])${escape(name)}\\b`;

// How execute names state and setState: [state patterns, setState patterns, the argument's name or null, why unknown].
function names(src) {
  const single = src.match(/^\s*(?:async\s+)?([A-Za-z_$][\w$]*)\s*=>/);
  const open = src.indexOf("(");
  if (single) return { state: [`\\b${escape(single[1])}\\s*\\??\\.\\s*state\\b`], set: [`\\b${escape(single[1])}\\s*\\??\\.\\s*setState\\b`], arg: single[1], body: single.index + single[0].length };
  if (open < 0) return { state: [], set: [], arg: null, body: 0, unknown: "its execute's argument could not be read" };
  const end = closing(src, open);
  const param = src.slice(open + 1, end - 1).trim();
  if (!param) return { state: [], set: [], arg: null, body: end };
  if (param.startsWith("{")) {
    const state = [];
    const set = [];
    let unknown;
    for (const part of splitTop(param.slice(1, closing(param, 0) - 1))) {
      if (part.startsWith("...")) unknown = `its execute's argument is spread into ${part.slice(3)}`;
      const [key, alias] = part.split("=")[0].split(":").map((s) => s.trim());
      const local = alias || key;
      if (key === "state" && /^[\w$]+$/.test(local)) state.push(local_(local));
      else if (key === "state") unknown = "its execute destructures state further";
      if (key === "setState") set.push(local_(local));
    }
    return { state, set, arg: null, body: end, unknown };
  }
  const arg = param.split(/[=,:]/)[0].trim();
  return { state: [`\\b${escape(arg)}\\s*\\??\\.\\s*state\\b`], set: [`\\b${escape(arg)}\\s*\\??\\.\\s*setState\\b`], arg, body: end };
}

function positions(pattern, text) {
  return [...text.matchAll(new RegExp(pattern, "g"))];
}

// One step's reads and writes of state keys, in source order, and its awaits.
export function readStep(execute) {
  const src = stripComments(String(execute));
  if (/\{\s*\[native code\]\s*\}\s*$/.test(src)) return { reads: {}, writes: {}, awaits: [], unknown: "its execute's source cannot be read (a native or bound function)" };
  const said = names(src);
  const body = src.slice(said.body);
  const offset = said.body;
  const reads = {};
  const writes = {};
  const calls = [];
  let unknown = said.unknown ?? null;
  if (said.arg) {
    for (const m of positions(`\\{([^{}]*)\\}\\s*=\\s*${escape(said.arg)}\\b`, body)) {
      for (const part of splitTop(m[1])) {
        const [key, alias] = part.split(":").map((s) => s.trim());
        if (key === "state") said.state.push(local_(alias || key));
        if (key === "setState") said.set.push(local_(alias || key));
      }
    }
    const handed = positions(`\\b${escape(said.arg)}\\b(?!\\s*\\??\\.)`, body).filter((m) => !/\}\s*=\s*$/.test(body.slice(0, m.index)));
    if (handed.length) unknown = `its execute hands its whole argument (${said.arg}) on`;
  }
  for (const pattern of said.set) {
    for (const m of positions(pattern, body)) {
      const after = body.slice(m.index + m[0].length);
      const paren = after.match(/^\s*\(/);
      if (!paren) {
        unknown = "its execute hands setState on"; // to a helper, in an object, or kept: its writes are not read
        continue;
      }
      const open = m.index + m[0].length + paren[0].length - 1;
      const end = closing(body, open);
      const argument = body.slice(open + 1, end - 1).trim();
      calls.push([m.index, end]);
      if (!argument.startsWith("{") || closing(argument, 0) !== argument.length) {
        unknown = `a setState whose argument is not an object literal (${argument.slice(0, 40)})`;
        continue;
      }
      for (const part of splitTop(argument.slice(1, -1))) {
        if (part.startsWith("...")) continue;
        const key = part.match(/^["']?([\w$]+)["']?\s*(?::|\(|$)/);
        if (!key) unknown = `a setState with a computed key (${part.slice(0, 30)})`;
        else writes[key[1]] ??= { at: offset + m.index, end: offset + end, kind: "set" };
      }
    }
  }
  for (const pattern of said.state) {
    for (const m of positions(`${pattern}\\s*(?:\\??\\.\\s*([\\w$]+)|\\[\\s*["']([\\w$]+)["']\\s*\\])`, body)) {
      const key = m[1] ?? m[2];
      const after = body.slice(m.index + m[0].length);
      const assigned = /^\s*(?:[-+*/|&]?=(?!=)|\+\+|--)/.test(after);
      const mutated = new RegExp(`^\\s*\\??\\.\\s*(?:${MUTATORS})\\s*\\(`).test(after);
      if (assigned || mutated) writes[key] ??= { at: offset + m.index, end: offset + m.index + m[0].length, kind: "mutate" };
      if (!assigned) reads[key] ??= offset + m.index;
    }
    for (const m of positions(`\\{([^{}]*)\\}\\s*=\\s*${pattern}`, body)) {
      for (const part of splitTop(m[1])) reads[part.split(":")[0].trim()] ??= offset + m.index;
    }
  }
  const awaits = positions("\\bawait\\b", body)
    .filter((m) => !calls.some(([start]) => /^\s*$/.test(body.slice(m.index + 5, start)) && start > m.index))
    .map((m) => offset + m.index);
  return { reads, writes, awaits, unknown };
}

// --- the workflow ---

function stepsOf(entry) {
  if (entry.type === "step") return [entry.step];
  return (entry.steps ?? []).flatMap((e) => (e.type === "step" ? [e.step] : []));
}

function inspectWorkflow(wf) {
  const graph = wf.stepGraph ?? wf.stepFlow ?? [];
  const parallel = [];
  const writes = {};
  const unknown = [];
  const findings = [];
  graph.forEach((entry, index) => {
    if (entry.type !== "parallel") return;
    const steps = stepsOf(entry);
    if (steps.length < 2) return;
    const ids = steps.map((s) => s.id);
    parallel.push(ids);
    const read = {};
    for (const step of steps) {
      if (isWorkflow(step) || typeof step.execute !== "function") {
        unknown.push(step.id);
        writes[step.id] = { keys: [], how: "unknown" };
        continue;
      }
      read[step.id] = readStep(own(step.execute));
      if (read[step.id].unknown) unknown.push(step.id);
      writes[step.id] = { keys: Object.keys(read[step.id].writes).sort(), how: read[step.id].unknown ? "unknown" : "source" };
    }
    const place = `.parallel([${ids.join(", ")}]) of workflow ${wf.id} (entry ${index + 1})`;
    const keys = [...new Set(Object.values(read).flatMap((r) => Object.keys(r.writes)))].sort();
    for (const key of keys) {
      const writers = Object.keys(read).filter((id) => key in read[id].writes);
      if (writers.length < 2) continue;
      const rmw = writers.filter((id) => read[id].reads[key] !== undefined && read[id].reads[key] < read[id].writes[key].end);
      const across = rmw.filter((id) => read[id].awaits.some((a) => a > read[id].reads[key] && a < read[id].writes[key].at));
      const where = [`${writers.join(", ")} (${place})`, `state key \`${key}\``];
      if (rmw.length) {
        findings.push({
          pattern: "parallel steps read-modify-write one workflow state key",
          where,
          probes: ["mastra/workflow-state/read-modify-write", "mastra/scenario/read-await-write"],
          certainty: "source",
          how: `read from the steps' execute source: ${rmw.join(" and ")} ${rmw.length > 1 ? "each read" : "reads"} \`${key}\` and ${rmw.length > 1 ? "write" : "writes"} it back${across.length ? ` (across an await in ${across.join(", ")})` : ""}; ${writers.join(" and ")} all write it`,
          precondition: `${writers.join(" and ")} run at once in one .parallel; a step that reads \`${key}\` before its sibling's setState is applied (at its start, or before an await) and writes it back drops the sibling's update with no error; no await between the read and the write is needed for it, as both steps start before either writes`,
        });
      } else {
        findings.push({
          pattern: "parallel steps set one workflow state key",
          where,
          probes: ["mastra/scenario/same-key-two-writers"],
          certainty: "source",
          how: `read from the steps' execute source: ${writers.join(" and ")} each write \`${key}\` (${writers.map((w) => read[w].writes[key].kind).join(", ")})`,
          precondition: `${writers.join(" and ")} run at once in one .parallel; the run keeps one of their writes (the probe saw the last finisher's) and drops the other with no error`,
        });
      }
    }
    const writers = Object.keys(read).filter((id) => Object.keys(read[id].writes).length);
    const distinct = keys.some((k) => writers.some((id) => !(k in read[id].writes)));
    if (writers.length >= 2 && distinct) {
      findings.push({
        pattern: "parallel steps setState distinct workflow state keys",
        where: [`${writers.join(", ")} (${place})`, `state keys ${keys.map((k) => `\`${k}\``).join(", ")}`],
        probes: ["mastra/workflow-state/own-keys"],
        only_if: { value_has: '_done": null' }, // the releases where the probe saw the first finisher's key lost
        certainty: "source",
        how: `read from the steps' execute source: ${writers.map((w) => `${w} writes ${Object.keys(read[w].writes).join(", ")}`).join("; ")}`,
        precondition: "in the releases where a parallel step's setState replaces the run's state as it is folded in, the first finisher's keys are lost",
      });
    }
  });
  return {
    framework: "mastra",
    kind: "Workflow",
    workflow: wf.id,
    steps: graph.map((e) => (e.type === "parallel" ? `parallel(${stepsOf(e).map((s) => s.id).join(", ")})` : `${e.type}${e.step ? `(${e.step.id})` : ""}`)),
    parallel,
    writes,
    unknown_writers: unknown,
    no_dry_run: NO_DRY_RUN,
    findings,
  };
}

function version(project) {
  const file = join(project, "node_modules", ...PACKAGE.split("/"), "package.json");
  return existsSync(file) ? JSON.parse(readFileSync(file, "utf-8")).version : null;
}

function describe(error, file) {
  const frames = String(error?.stack ?? "").split("\n").filter((l) => l.includes(file)).slice(-5).map((l) => l.trim());
  return { type: error?.name ?? "Error", message: String(error?.message ?? error), causes: error?.cause ? [String(error.cause)] : [], chain: frames };
}

async function main() {
  const [project, file, name, result] = process.argv.slice(2);
  if (/\.[mc]?tsx?$/.test(file) && !process.execArgv.includes("--experimental-strip-types")) {
    // TypeScript: Node 22.13 imports it with its type annotations stripped, behind a flag (no compiler here).
    const again = ["--experimental-strip-types", "--no-warnings", fileURLToPath(import.meta.url), ...process.argv.slice(2)];
    process.exitCode = spawnSync(process.execPath, again, { stdio: "inherit" }).status ?? 1;
    return;
  }
  register(new URL("../audit_resolve.mjs", import.meta.url), { data: { project: pathToFileURL(join(project, "/")).href } });
  const answer = { versions: { mastra: version(project) }, inspected: [], kind: "module" };
  let module;
  try {
    module = await import(pathToFileURL(file).href);
  } catch (error) {
    writeFileSync(result, JSON.stringify({ ...answer, load_error: describe(error, file) }));
    return;
  }
  let targets = Object.values(module);
  if (name) {
    const attribute = name.replace(/\(\)$/, "");
    if (!(attribute in module)) {
      const exported = Object.keys(module).join(", ") || "nothing";
      writeFileSync(result, JSON.stringify({ ...answer, load_error: { type: "LoadError", message: `${file} exports no ${attribute} (it exports ${exported})` } }));
      return;
    }
    let value = module[attribute];
    if (name.endsWith("()")) value = await value();
    targets = [value];
    answer.kind = value?.constructor?.name ?? typeof value;
  }
  answer.inspected = [...new Set(targets.filter(isWorkflow))].map(inspectWorkflow);
  writeFileSync(result, JSON.stringify(answer));
}

await main();
