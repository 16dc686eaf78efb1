// Mastra's kit for fanin's Node probes: its workflow API (createWorkflow / createStep, `.parallel`, `.branch`)
// loaded from the installed package, one run started the way a user starts one, and whether this release
// gives a step workflow state at all. No model and no Mastra instance: a bare workflow has no storage,
// telemetry or observability exporter to reach, so nothing here opens a connection.
import { NotApplicable } from "../fanin_node.mjs";

// The workflow API as the installed release exports it; a release without it makes the probe n/a.
export async function workflows(obs) {
  const mod = await obs.need("@mastra/core/workflows", "createWorkflow", "createStep");
  const { z } = await import("zod");
  return { ...mod, any: z.any() };
}

// A step whose schemas accept anything: the probes test fan-in, not validation.
export function step(api, id, execute) {
  return api.createStep({ id, inputSchema: api.any, outputSchema: api.any, stateSchema: api.any, execute });
}

// A committed workflow of `build(workflow)`'s shape, with a state schema where the release has one.
export function workflow(api, id, build) {
  return build(api.createWorkflow({ id, inputSchema: api.any, outputSchema: api.any, stateSchema: api.any })).commit();
}

// One run, started as a user starts one: createRunAsync where the release has it (0.x; its createRun
// throws from 0.24), createRun in 1.x. The result carries the final state where the release can return
// it (outputOptions.includeState); a failed run resolves with status "failed", it does not reject.
export async function start(wf, initialState = {}) {
  const run = wf.createRunAsync ? await wf.createRunAsync() : await wf.createRun();
  return run.start({ inputData: {}, initialState, outputOptions: { includeState: true } });
}

// Whether a step of this release is given workflow state (`state` and `setState` in execute's argument):
// asked of the installed package by running a one-step workflow, never by its version number.
export async function stateReason(api) {
  let given = null;
  const probeStep = step(api, "state_check", async (args) => {
    given = typeof args.setState === "function";
    return {};
  });
  await start(workflow(api, "state_check", (w) => w.then(probeStep)));
  return given ? null : "a step's execute is given no setState: this release has no workflow state";
}

// The probe's n/a when the release has no workflow state.
export async function needState(api) {
  const reason = await stateReason(api);
  if (reason) throw new NotApplicable(reason);
}

// A step's writer the way a user writes one: setState with the whole state, this step's own writes over
// what it was handed (`state` is the object the engine gave the step; setState replaces or merges it).
export function writer(args) {
  const own = {};
  return {
    read: (key) => (key in own ? own[key] : (args.state?.[key] ?? null)),
    write: async (key, value) => {
      own[key] = value;
      await args.setState({ ...(args.state ?? {}), ...own });
    },
  };
}

// Two parallel steps `a`, `b` then a join, run once per forced finish order: each step runs `body(args,
// name)` up to its turn's work, the turn (scenario_kit's Turns: every step in flight before the first goes,
// vacuous if they never were) and `act(args, name)`, and hands the next turn on once the event loop has
// settled after it returned (Mastra folds a step's result into the run after the step's promise resolves).
// `join(args)` is the join's execute. Returns { [order]: { result, joined } } or throws Vacuous.
export async function inTurns(api, orders, { body = async () => {}, act, join = async () => ({}), initialState = {} }) {
  const { Turns } = await import("../scenario_kit.mjs");
  const { Vacuous, settle } = await import("../fanin_node.mjs");
  const runs = {};
  for (const order of orders) {
    const turns = new Turns(order);
    let joined = null;
    const branch = (name) =>
      step(api, name, async (args) => {
        const before = await body(args, name);
        await turns.wait(name);
        try {
          return (await act(args, name, before)) ?? {};
        } finally {
          settle().then(() => turns.done(name));
        }
      });
    const joinStep = step(api, "join", async (args) => {
      joined = args.inputData;
      return (await join(args)) ?? {};
    });
    const wf = workflow(api, "probe", (w) => w.parallel(order.toSorted().map(branch)).then(joinStep));
    const result = await start(wf, JSON.parse(JSON.stringify(initialState)));
    await settle();
    if (turns.vacuous) throw new Vacuous(turns.vacuous);
    runs[order.join(",")] = { result, joined };
  }
  return runs;
}
