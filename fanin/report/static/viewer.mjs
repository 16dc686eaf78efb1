// viewer.html: your `probe --here` result set beside the reference, read in the browser, never uploaded.
//
// A port of what the page needs from fanin/model/compare.py (classify, its direction and label, whether
// it gates; standing), fanin/project/here.py (nearest and newer_neighbour: which reference cells to compare
// with; not covered here)
// and Observation.behaviour. The order of harm and the change words are not copied: they come from the
// page's data (the `rules` fanin wrote from the same definitions). tests/test_viewer.py holds this port
// to the Python classifier on every pair of adjacent reference cells.

const COMPARED = ["outcome", "hazard", "value"];
const NA = "n/a";

/** JSON with sorted keys, as json.dumps(..., sort_keys=True) compares values. */
export function canonical(value) {
  if (Array.isArray(value)) return "[" + value.map(canonical).join(",") + "]";
  if (value !== null && typeof value === "object") {
    return "{" + Object.keys(value).sort().map((k) => JSON.stringify(k) + ":" + canonical(value[k])).join(",") + "}";
  }
  return JSON.stringify(value);
}

/** Observation.behaviour: outcome, hazard, value (an n/a's reason is wording). */
export function behaviour(o) {
  return o.outcome === NA ? canonical([o.outcome, o.hazard]) : canonical([o.outcome, o.hazard, o.value]);
}

function differs(a, b, name) {
  return name === "value" ? canonical(a.value) !== canonical(b.value) : a[name] !== b[name];
}

/** compare.classify, with Change.direction, .label, .gates and .is_breaking. */
export function classify(id, before, after, rules) {
  if (!before && !after) throw new Error("nothing to compare");
  if (!before) return change(id, "new", null, after, [], rules);
  if (!after) return change(id, "missing", before, null, [], rules);
  let fields = [...COMPARED, "label", "detail"].filter((name) => differs(before, after, name));
  if (before.hazard === after.hazard && after.hazard === "nondeterministic") {
    fields = fields.filter((name) => name !== "detail"); // its detail carries the counts of its own repeats
  }
  let kind = "same";
  if (fields.length) kind = behaviour(before) !== behaviour(after) ? "behaviour" : "wording";
  return change(id, kind, before, after, fields, rules);
}

function direction(kind, before, after, rules) {
  if (kind === "missing") return "regression";
  if (kind !== "behaviour" || !before || !after) return null;
  const beforeNa = before.outcome === NA;
  const afterNa = after.outcome === NA;
  if (beforeNa && !afterNa) return "new coverage";
  if (afterNa && !beforeNa) return "regression";
  if (before.outcome === after.outcome) {
    const moved = subcases(before.value, after.value);
    if (moved !== null) return moved;
  }
  const old = rules.harm[before.hazard];
  const now = rules.harm[after.hazard];
  if (old === undefined || now === undefined || old === now) return "changed";
  return now > old ? "regression" : "fix";
}

/** compare._not_applicable: a sub-case the version cannot run, `{"n/a": reason}` or `"n/a: reason"`. */
function notApplicable(value) {
  if (value !== null && typeof value === "object" && !Array.isArray(value)) return Object.hasOwn(value, NA);
  return typeof value === "string" && (value === NA || value.startsWith(NA + ":"));
}

/** compare.subcases: new coverage when every difference is a sub-case n/a before and observed now, a regression
 * when every one is a sub-case observed before and n/a now; null when anything else differs. */
function subcases(before, after) {
  const moves = new Set();
  const isDict = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
  function alike(b, a) {
    if (canonical(b) === canonical(a)) return true;
    if (notApplicable(b) !== notApplicable(a)) {
      moves.add(notApplicable(b) ? "new coverage" : "regression");
      return true;
    }
    if (isDict(b) && isDict(a)) {
      const keys = Object.keys(b).sort();
      const other = Object.keys(a).sort();
      if (canonical(keys) !== canonical(other)) return false;
      return keys.every((key) => alike(b[key], a[key]));
    }
    if (Array.isArray(b) && Array.isArray(a) && b.length === a.length) return b.every((x, i) => alike(x, a[i]));
    return false;
  }
  return alike(before, after) && moves.size === 1 ? [...moves][0] : null;
}

function change(id, kind, before, after, fields, rules) {
  const moved = direction(kind, before, after, rules);
  return {
    id,
    kind,
    before,
    after,
    fields,
    direction: moved,
    label: moved ?? kind,
    gates: moved === "regression" || moved === "changed",
    breaking: kind === "behaviour" || kind === "missing",
  };
}

/** here.not_covered: a change this environment made (a registered companion not installed), not the framework. */
export function notCovered(c, here) {
  const needed = (here.environment && here.environment.not_installed) || {};
  return c.breaking && c.after !== null && c.after.outcome !== "ok" && Object.hasOwn(needed, c.id);
}

/** A version's release numbers, for ordering (1.2.10 after 1.2.9); a pre-release sorts before its release. */
export function versionKey(version) {
  const match = /^v?(\d+(?:\.\d+)*)(.*)$/.exec(version.trim()) || [null, "0", version];
  const parts = match[1].split(".").map(Number);
  while (parts.length > 1 && parts[parts.length - 1] === 0) parts.pop();
  return { parts, final: match[2] === "" || /^\.post/.test(match[2]) };
}

export function compareVersions(a, b) {
  const x = versionKey(a);
  const y = versionKey(b);
  for (let i = 0; i < Math.max(x.parts.length, y.parts.length); i += 1) {
    const d = (x.parts[i] ?? 0) - (y.parts[i] ?? 0);
    if (d) return d < 0 ? -1 : 1;
  }
  return x.final === y.final ? 0 : x.final ? 1 : -1;
}

/** here.nearest: the same version and Python, else the same version, else the newest older on the default Python, else the oldest. */
export function nearest(cells, framework, version, python, defaultPython) {
  const own = cells.filter((c) => c.framework === framework);
  if (!own.length) return null;
  const same = own.filter((c) => compareVersions(c.version, version) === 0);
  const exact = same.find((c) => c.python === python);
  if (exact) return { cell: exact, why: "the reference cell of this very version and Python" };
  if (same.length) return { cell: same[0], why: `the reference cell of this version (on Python ${same[0].python})` };
  const older = own.filter((c) => compareVersions(c.version, version) < 0 && c.python === defaultPython);
  if (older.length) return { cell: older[older.length - 1], why: "the nearest older version" };
  return { cell: own[0], why: "no reference cell this old; the oldest one" };
}

/** here.newer_neighbour: the oldest reference cell newer than `version` on the baseline's Python, when the baseline
 * is older than it (the version lies between two cells); null at a reference version, or past the newest cell. */
export function newerNeighbour(cells, baseline, version) {
  if (compareVersions(baseline.version, version) >= 0) return null;
  const newer = cells.filter(
    (c) => c.framework === baseline.framework && c.python === baseline.python && compareVersions(c.version, version) > 0,
  );
  newer.sort((a, b) => compareVersions(a.version, b.version));
  return newer[0] ?? null;
}

/** compare.standing: why a behaviour change is not the installed version's own (a module this environment lacks,
 * a timeout here, or the same as the newer neighbour cell); null when it is. Its words come from the page's data. */
export function standing(c, newer, newerCell, rules) {
  const after = c.after;
  if (!c.breaking || after === null) return null;
  const value = after.value !== null && typeof after.value === "object" && !Array.isArray(after.value) ? after.value : {};
  const s = rules.standing;
  if (after.outcome === s.probeError && value[s.missingModule]) {
    return { word: s.notCovered, reason: `needs the module ${value[s.missingModule]}, not installed in this environment` };
  }
  if (after.outcome === s.notApplicable && value[s.needsEarlier]) return { word: s.notCovered, reason: s.needsEarlierReason };
  if (after.outcome === s.timeout) return { word: s.couldNotJudge, reason: "timed out here: run it again" };
  if (newer && behaviour(newer) === behaviour(after)) {
    return { word: s.asNewer, reason: `the same as the newer reference cell ${newerCell}` };
  }
  return null;
}

/** Every observation id of either set, classified, then judged as probe --here judges it (`standing`, against the
 * newer neighbour's result set where the version lies between two cells); the gate's order, then by id. */
export function compareSets(reference, here, rules, newer = null) {
  const ids = [...new Set([...Object.keys(reference.observations), ...Object.keys(here.observations)])].sort();
  const rows = ids.map((id) => {
    const c = classify(id, reference.observations[id] ?? null, here.observations[id] ?? null, rules);
    const aside = notCovered(c, here);
    const judged = aside ? null : standing(c, newer ? (newer.observations[id] ?? null) : null, newer?.cell ?? "", rules);
    if (judged === null) return { ...c, aside, standing: null, reason: "" };
    return { ...c, aside, label: judged.word, gates: false, standing: judged.word, reason: judged.reason };
  });
  const order = (label) => (rules.order.includes(label) ? rules.order.indexOf(label) : rules.order.length);
  return rows.sort((a, b) => order(a.label) - order(b.label) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

// ---- the page (only in a browser) ----

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text; // text, never markup: the file is the user's, not ours
  if (cls) node.className = cls;
  return node;
}

function said(o, words) {
  return o ? `${words[o.hazard] ?? o.hazard}: ${o.label}` : "not observed";
}

function start() {
  const data = JSON.parse(document.getElementById("fanin-viewer-data").textContent);
  const { cells, rules, defaultPython } = data;
  const $ = (id) => document.getElementById(id);
  let here = null;
  let reference = null;
  let newer = null; // the newer neighbour cell's result set, where your version lies between two cells

  const status = (text) => {
    $("status").textContent = text;
  };

  function show() {
    const body = $("rows");
    body.replaceChildren();
    if (!here || !reference) return;
    const rows = compareSets(reference, here, rules, newer);
    const only = $("only").checked;
    const counts = {};
    for (const row of rows) {
      if (row.kind === "same") continue;
      const key = row.aside ? "not covered here" : row.label;
      counts[key] = (counts[key] ?? 0) + 1;
    }
    for (const row of rows) {
      if (only && row.kind === "same") continue;
      const tr = el("tr", undefined, row.gates && !row.aside ? "gates" : "");
      tr.append(el("td", row.id, "id"), el("td", said(row.before, rules.hazardWords), "h-" + (row.before?.hazard ?? "none").replace("/", "")));
      tr.append(el("td", said(row.after, rules.hazardWords), "h-" + (row.after?.hazard ?? "none").replace("/", "")));
      const verdict = row.aside
        ? "not covered here (a companion is not installed)"
        : row.standing
          ? `${row.label} (${row.reason})`
          : row.label + (row.fields.length ? ` (${row.fields.join(", ")})` : "");
      tr.append(el("td", verdict));
      body.append(tr);
    }
    const gating = rows.filter((r) => r.gates && !r.aside).length;
    const tally = Object.entries(counts).map(([k, n]) => `${n} ${k}`).join(", ") || "no change";
    $("verdict").textContent =
      `${here.framework} ${here.version} (yours) against ${reference.cell} (reference): ${tally} in ${rows.length} observations; ` +
      (gating ? `probe --here would exit 1 (${gating} regression or changed value).` : "probe --here would exit 0.");
  }

  /** A reference cell's published result set, from data/results/ beside the page: the page's only request. */
  async function readCell(cell) {
    const answer = await fetch(cell.results);
    if (!answer.ok) throw new Error(`HTTP ${answer.status}`);
    return answer.json();
  }

  async function pick(cellId) {
    reference = null;
    newer = null;
    show();
    const cell = cells.find((c) => c.id === cellId);
    const neighbour = here ? newerNeighbour(cells, cell, here.version) : null;
    let lost = "";
    if (neighbour) {
      try {
        newer = await readCell(neighbour);
      } catch (error) {
        newer = null; // without it every difference is judged against the older cell alone, and the status says so
        lost = `; the newer neighbour ${neighbour.id} could not be read (${error.message}), so a difference it shows is not set aside`;
      }
    }
    try {
      reference = await readCell(cell);
      const beside = newer ? ` and its newer neighbour ${neighbour.id} (a difference it shows too is as the newer reference)` : "";
      status(`reference ${cell.id} read from ${cell.results}${beside}${lost}`);
    } catch (error) {
      status(`could not read ${cell.results} beside this page (${error.message}); pick the reference's result set below`);
      $("theirs-row").hidden = false;
    }
    show();
  }

  $("yours").addEventListener("change", async (event) => {
    const file = event.target.files[0];
    if (!file) return;
    try {
      here = JSON.parse(await file.text());
      if (!here || typeof here.observations !== "object" || !here.framework || !here.version) {
        throw new Error("not a fanin result set (no framework, version or observations)");
      }
    } catch (error) {
      here = null;
      status(`${file.name}: ${error.message}`);
      show();
      return;
    }
    const python = String(here.environment?.python ?? "").split(".").slice(0, 2).join(".");
    const found = nearest(cells, here.framework, here.version, python, defaultPython);
    if (!found) {
      status(`${file.name}: the reference has no ${here.framework} cell`);
      return;
    }
    const select = $("cell");
    select.replaceChildren(...cells.filter((c) => c.framework === here.framework).map((c) => {
      const option = el("option", c.id);
      option.value = c.id;
      option.selected = c.id === found.cell.id;
      return option;
    }));
    status(`${file.name}: ${here.framework} ${here.version}; comparing with ${found.cell.id}: ${found.why}`);
    await pick(found.cell.id);
  });
  $("cell").addEventListener("change", (event) => pick(event.target.value));
  $("theirs").addEventListener("change", async (event) => {
    const file = event.target.files[0];
    if (!file) return;
    reference = JSON.parse(await file.text());
    status(`reference ${reference.cell} read from ${file.name}`);
    show();
  });
  $("only").addEventListener("change", show);
}

if (typeof document !== "undefined") start();
