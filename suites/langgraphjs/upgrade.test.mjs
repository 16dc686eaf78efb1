// Upgrading with live threads (suites/langgraph/test_live_thread.py's port): a thread left mid-fan-out by the release
// before, resumed by this one, on the same PostgresSaver store (@langchain/langgraph-checkpoint-postgres, the cell's
// storage companion, on the harness's PostgreSQL). The earlier release (the contract's EARLIER_*: the matrix cell
// before this one, `upgrade --from`'s release, a bisect's good end) writes with its own node_modules (live.mjs, run by
// fanin_node.mjs's runWith); this release answers b's interrupt. The same write made by this release (live.mjs under
// this cell's node_modules, a database of its own) is the control: the probe grades the difference between the two
// resumes, so what it reports is what the upgrade changed, not what a resume does anyway.
import { NotApplicable, Vacuous, databaseName, earlierRelease, leftOut, live, postgresServer, probe, runWith, thisRelease } from "../fanin_node.mjs";
import { SAVER, createDatabase, resume } from "./live.mjs";

const WRITER = new URL("./live.mjs", import.meta.url);

function vacuous(reason) {
  throw new Vacuous(reason);
}

function notApplicable(reason) {
  throw new NotApplicable(reason);
}

// Write the thread with `release`'s packages (a subprocess), then resume it here.
async function observed(release, store) {
  await createDatabase(store);
  const written = await runWith(release, [WRITER], ["write", JSON.stringify(store), "live"]);
  if (written.langgraph !== release.version) throw new Error(`the writer ran @langchain/langgraph ${written.langgraph}, not ${release.version}`);
  if (written.stuck.length) vacuous(written.stuck[0]);
  if (written.raised) vacuous(`the writer's run of @langchain/langgraph ${written.langgraph} raised ${written.raised.slice(0, 300)}`);
  if (written.next.join() !== "b" || written.runs.a !== 1) {
    vacuous(`the writer did not leave the thread with a done and b waiting: ${JSON.stringify(written)}`);
  }
  return { ...(await resume(store, "live")), writer: { saver: written.saver, runs: written.runs } };
}

// What the resume did, without what the writer was or the errors' wording.
function graded(resumed) {
  const { raises, read_raises, runs_on_resume, final, next } = resumed;
  return { raises, read_raises, runs_on_resume, final, next };
}

// The label and hazard: what differs between the resume across releases and the same release's.
function reading(across, same) {
  const now = graded(across);
  const then = graded(same);
  if (JSON.stringify(now) === JSON.stringify(then)) return [live.same("thread"), "safe"];
  const failed = now.raises || now.read_raises;
  if (failed && !(then.raises || then.read_raises)) return [live.raised("the resume", failed), "loud"];
  if (now.runs_on_resume.a > then.runs_on_resume.a) return ["the finished branch ran again", "silent"];
  if (now.runs_on_resume.join < then.runs_on_resume.join) return ["the join never ran", "silent"];
  if ((now.final ?? []).length < (then.final ?? []).length) return ["a write was lost", "silent"];
  return [live.unlike("thread"), "silent"];
}

function said(resumed) {
  const failed = ["raises", "read_raises"].filter((k) => resumed[k]).map((k) => `${k.replace("_", " ")} ${resumed[k]}: ${resumed.errors[k].slice(0, 160)}`);
  return failed.length ? failed.join("; ") : `ran ${JSON.stringify(resumed.runs_on_resume)}, final ${JSON.stringify(resumed.final)}`;
}

probe({
  "id": "langgraphjs/upgrade/live-thread",
  "title": "A thread interrupted mid-fan-out (a done, b waiting for input) by the release before, resumed by this one on the same PostgresSaver store: does it resume as a thread this release wrote itself?",
  "claim": {
    "text": "A checkpoint written by one release is read by the next: a thread interrupted inside a parallel superstep keeps its finished branch's pending write, and the resume with a Command answers the interrupt and runs the join, as it does on a thread the same release wrote (PostgresSaver).",
    "source": "https://docs.langchain.com/oss/javascript/langgraph/persistence#pending-writes",
    "expect": {"hazard": "safe"}
  },
  "sources": ["https://github.com/langchain-ai/langgraphjs/blob/main/libs/checkpoint-postgres/src/index.ts"],
  "services": ["postgres"]
}, async function liveThread(obs) {
  const earlier = earlierRelease(obs);
  const lacking = leftOut(SAVER);
  if (lacking) notApplicable(lacking);
  const before = leftOut(SAVER, earlier.dir);
  if (before) notApplicable(`the earlier release ${earlier.version} cannot write the store: ${before}`);
  const here = thisRelease("@langchain/langgraph");
  const base = databaseName("langgraphjs/upgrade/live-thread");
  const server = postgresServer();
  const across = await observed(earlier, { ...server, database: `${base}_e` });
  const same = await observed(here, { ...server, database: `${base}_s` });
  const [label, hazard] = reading(across, same);
  const savers = `(${SAVER} ${across.writer.saver} then ${same.writer.saver})`;
  obs.record(
    { across: graded(across), same_release: graded(same) },
    { label, detail: `written by ${earlier.version} ${savers}, resumed here: ${said(across)}; written and resumed here: ${said(same)}`, hazard },
  );
});
