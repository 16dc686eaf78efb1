// Upgrading with live sessions (suites/adk/test_live_session.py's port): a session left mid-fan-out by the release
// before, resumed by this one, on the same DatabaseSessionService store (PostgreSQL: the harness's server, through
// the mikro-orm driver 0.6.1-1.6.0 install as a required peer). The earlier release (the contract's EARLIER_*: the
// matrix cell before this one, `upgrade --from`'s release, a bisect's good end) writes with its own node_modules
// (live.mjs, run by fanin_node.mjs's runWith); this release answers b's call. The same write made by this release
// (live.mjs under this cell's node_modules, a database of its own) is the control: the probe grades the difference
// between the two resumes, so what it reports is what the upgrade changed, not what a resume does anyway.
import { NotApplicable, Vacuous, databaseName, earlierRelease, live, postgresServer, probe, runWith, thisRelease } from "../fanin_node.mjs";
import { missing, resume } from "./live.mjs";

const WRITER = new URL("./live.mjs", import.meta.url);

function vacuous(reason) {
  throw new Vacuous(reason);
}

function notApplicable(reason) {
  throw new NotApplicable(reason);
}

// Write the session with `release`'s packages (a subprocess), then resume it here.
async function observed(release, store) {
  const written = await runWith(release, [WRITER], ["write", JSON.stringify(store), "live"]);
  if (written.missing) return { missing: written.missing };
  if (written.adk !== release.version) throw new Error(`the writer ran @google/adk ${written.adk}, not ${release.version}`);
  if (written.stuck.length) vacuous(written.stuck[0]);
  if (written.raised) vacuous(`the writer's run of @google/adk ${written.adk} raised ${written.raised.slice(0, 300)}`);
  if (written.pending.join() !== "ask_human" || written.runs.a !== 1 || written.state.a_out !== "a-done") {
    vacuous(`the writer did not leave the session with a done and b waiting: ${JSON.stringify(written)}`);
  }
  const resumed = await resume(store, "live");
  return { ...resumed, written_state: written.state, written_runs: written.runs };
}

// What the resume did, without what the writer left.
function graded(resumed) {
  const final = resumed.final ?? {};
  return {
    raises: resumed.raises,
    read_raises: resumed.read_raises,
    runs_on_resume: resumed.runs_on_resume,
    a_kept: final.a_out === "a-done",
    b_answered: final.b_out === "b:approved",
    joined: final.joined === "a-done+b:approved",
    pending_after: resumed.pending_after,
  };
}

// The label and hazard: what differs between the resume across releases and the same release's.
function reading(across, same) {
  const now = graded(across);
  const then = graded(same);
  if (JSON.stringify(now) === JSON.stringify(then)) return [live.same("session"), "safe"];
  const failed = now.raises || now.read_raises;
  if (failed && !(then.raises || then.read_raises)) return [live.raised("the resume", failed), "loud"];
  if (now.runs_on_resume.a > then.runs_on_resume.a) return ["a's run again", "silent"];
  if (then.a_kept && !now.a_kept) return ["a's write lost", "silent"];
  if (then.b_answered && !now.b_answered) return ["b's answer lost", "silent"];
  if (now.runs_on_resume.join < then.runs_on_resume.join || (then.joined && !now.joined)) return ["the join never ran", "silent"];
  return [live.unlike("session"), "silent"];
}

function said(resumed) {
  const failed = ["raises", "read_raises"].filter((k) => resumed[k]).map((k) => `${k.replace("_", " ")} ${resumed[k]}: ${resumed.errors[k].slice(0, 160)}`);
  return failed.length ? failed.join("; ") : `ran ${JSON.stringify(resumed.runs_on_resume)}, final ${JSON.stringify(resumed.final)}`;
}

probe({
  "id": "adkjs/upgrade/live-session",
  "title": "A session paused mid-fan-out (a done, b waiting on a long-running call) by the release before, resumed by this one on the same DatabaseSessionService store (PostgreSQL): does it resume as a session this release wrote itself?",
  "claim": {
    "text": "DatabaseSessionService is ADK's persistent session store: a session it wrote survives the application's restart, so one written by the release before is read by the next, and answering a paused branch's long-running call resumes it as it resumes a session the same release wrote (the finished branch's output kept and not run again, the answer stored, the agent after the fan-out run).",
    "source": "https://google.github.io/adk-docs/sessions/session/#sessionservice-implementations",
    "expect": {"hazard": "safe"}
  },
  "sources": ["https://github.com/google/adk-js/blob/main/core/src/sessions/database_session_service.ts"],
  "services": ["postgres"]
}, async function liveSession(obs) {
  const earlier = earlierRelease(obs);
  const here = thisRelease("@google/adk");
  const lacking = await missing();
  if (lacking) notApplicable(lacking);
  const base = databaseName("adkjs/upgrade/live-session");
  const server = postgresServer();
  const across = await observed(earlier, { ...server, dbName: `${base}_e` });
  if (across.missing) notApplicable(`the earlier release cannot write the store: ${across.missing}`);
  const same = await observed(here, { ...server, dbName: `${base}_s` });
  const [label, hazard] = reading(across, same);
  obs.record(
    { across, same_release: same },
    { label, detail: `written by ${earlier.version}, resumed here: ${said(across)}; written and resumed here: ${said(same)}`, hazard },
  );
});
