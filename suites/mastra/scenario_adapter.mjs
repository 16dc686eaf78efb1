// Mastra's scenario adapter (docs/ADAPTERS.md): a scenario as one workflow, `.parallel([...branches]).then(join)`
// (a conditional fan-out, `select`, is `.branch([[condition, step], ...])`), started with run.start. A branch is
// a step; a branch of several parts (split by `then`) is a nested workflow of one step per part (`b`, `b_2`:
// step ids are identifiers). A step reads the workflow state it is handed and writes with setState (the whole
// state, its own writes over what it was handed: kit.writer); `return` is the step's output, and `join.saw`
// is the join's input, which Mastra keys by step id, in that object's order. `final` is the state the run's
// result carries (outputOptions.includeState). A failed run resolves with status "failed" and the error
// rather than rejecting: that error is what `raises` names (the caller reads it from the result). A branch that
// asks to stop the run (`escalate`) returns `bail(output)` from its last step, Mastra's way for a step to end the
// workflow early with success (a release whose execute has no bail answers n/a).
// With `runs`, the one committed workflow is started again: a new run (createRun), a fresh initial state.
// With `resume` (scenario_resume.mjs), a branch pauses with suspend(), and the workflow, registered on a Mastra with
// an InMemoryStore, is resumed once with run.resume({ step, resumeData }).
// Releases without workflow state (before 0.20.2) cannot express a read or a write: n/a with the reason.
// Run as a program from a directory where @mastra/core is installed: `node scenario_adapter.mjs`.
import { Script, declare, isMain, packageVersion, serve } from "../scenario_kit.mjs";
import { start, stateReason, step, workflow, workflows, writer } from "./kit.mjs";
import * as resuming from "./scenario_resume.mjs";

const obs = {
  async need(module, ...names) {
    const mod = await import(module);
    for (const name of names) if (!(name in mod)) throw new Error(`${module}.${name} does not exist in this version`);
    return mod;
  },
};

async function api() {
  return workflows(obs);
}

function errorName(error) {
  if (!error) return null;
  return error.name && error.name !== "Error" ? error.name : (error.constructor?.name ?? "Error");
}

async function run(scenario, order) {
  const mastra = await api();
  const script = new Script(scenario, order);
  let noBail = null; // set when an escalating step finds no bail() in its execute's argument
  const stepId = (name, part) => (part === 0 ? name : `${name}_${part + 1}`);
  const part = (name, index) =>
    step(mastra, stepId(name, index), async (args) => {
      const { read, write } = writer(args);
      let returned;
      try {
        returned = await script.branch(name, read, write, args.abortSignal, index, resuming.pauser(args));
      } catch (error) {
        if (error instanceof resuming.Suspend) return args.suspend({ branch: name });
        throw error;
      }
      if (index === script.parts(name) - 1 && script.escalates(name)) {
        if (typeof args.bail !== "function") noBail = "a step's execute is handed no bail(): a step cannot end the run";
        else return args.bail(returned ?? {});
      }
      return returned ?? {};
    });
  const branch = (name) => {
    if (script.parts(name) === 1) return part(name, 0);
    return workflow(mastra, `${name}_chain`, (w) => {
      let chain = w;
      for (let index = 0; index < script.parts(name); index++) chain = chain.then(part(name, index));
      return chain;
    });
  };
  const returns = new Map();
  const steps = script.branches.map((name) => {
    const built = branch(name);
    returns.set(built.id, name);
    return built;
  });
  let saw = null;
  const join = step(mastra, "join", async ({ inputData }) => {
    script.joinRuns += 1;
    saw = Object.entries(inputData ?? {})
      .filter(([id, value]) => returns.has(id) && value !== undefined && value !== null && !(typeof value === "object" && Object.keys(value).length === 0))
      .map(([, value]) => value);
    return {};
  });
  const selecting = scenario.branches.some((b) => b.selected === false);
  const wf = workflow(mastra, "scenario", (w) =>
    (selecting ? w.branch(steps.map((s) => [async () => script.selected.includes(returns.get(s.id)), s])) : w.parallel(steps)).then(join),
  );
  let result;
  if (script.resumes) {
    // `resume`: the run started on a Mastra with an in-memory store, then resumed once from its snapshot.
    const { workflow: stored, reason } = await resuming.registered(wf);
    if (reason) return { not_applicable: reason };
    const first = stored.createRunAsync ? await stored.createRunAsync() : await stored.createRun();
    await script.run(first.start({ inputData: {}, initialState: script.state, outputOptions: { includeState: true } }));
    await script.resume();
    try {
      result = await script.run(resuming.resume(first, script, stepId));
    } catch (error) {
      result = { status: "failed", error }; // resume() refused: the caller sees what it threw
    }
    const failed = result?.status === "failed" ? result.error : null;
    return script.answer({ raises: errorName(failed), final: () => result?.state ?? null, saw, error: failed });
  }
  for (let number = 0; number < script.runs; number++) {
    // `runs`: the one committed workflow started again, a new run with a fresh initial state.
    if (number) {
      await script.again();
      saw = null; // the adapter's own record of the join, per run
    }
    result = await script.run(start(wf, script.state));
  }
  if (noBail) return { not_applicable: noBail };
  const failed = result?.status === "failed" ? result.error : null;
  return script.answer({ raises: errorName(failed), final: () => result?.state ?? null, saw, error: failed });
}

export const adapter = {
  async capabilities() {
    const cannot = {};
    const reason = await stateReason(await api());
    if (reason) Object.assign(cannot, { read: reason, write: reason, "write.add": reason });
    // Read from @mastra/core's Run._start: a run's state is its initialState, validated, and nothing stored; a
    // stored run (its snapshot) goes on only through resume() of a suspended step. Memory threads are an Agent's.
    cannot.thread =
      "a workflow has no stored thread a new run joins: run.start() takes its state from initialState alone, and a" +
      " stored run goes on only by resume() of a suspended step (Memory threads belong to agents, not workflows)";
    // Two runs at once on one stored thread need that thread first: each run's state is its own initialState.
    cannot.together = cannot.thread;
    return declare("mastra", packageVersion("@mastra/core"), cannot, ["escalate", "runs", "thread", "stall", "together", "pause", "resume"]);
  },
  run,
};

if (isMain(import.meta.url)) await serve(adapter);
