// Mastra's `pause` and `resume` for its scenario adapter (docs/ADAPTERS.md). A branch pauses with the `suspend()`
// its step's execute is handed (the step returns `suspend(payload)`; resumed, execute runs again with
// `resumeData`), and the stopped run is resumed the way Mastra resumes a stored run: `run.resume({ step,
// resumeData })`, which reads the run's snapshot from the Mastra instance's storage, so the workflow is registered
// on a `Mastra` with the in-memory store Mastra offers (`InMemoryStore`, @mastra/core/storage). A failed run is
// resumed the same way: Mastra has nothing else that goes on with a stored run from where it stopped.
import { ANSWER } from "../scenario_kit.mjs";

// Thrown by pause() in the first run: the step catches it and returns suspend() (Mastra's way to pause).
export class Suspend extends Error {}

// The branch's pause inside a step's execute: the answer once resumed, or Suspend to make the step suspend.
export function pauser(args) {
  return async () => {
    if (args.resumeData !== undefined && args.resumeData !== null) return args.resumeData;
    if (typeof args.suspend !== "function") throw new Error("a step's execute is handed no suspend()");
    throw new Suspend("suspended");
  };
}

// A Mastra instance holding the workflow with the in-memory store, or the reason this release has none.
export async function registered(wf) {
  let Mastra;
  let InMemoryStore;
  try {
    ({ Mastra } = await import("@mastra/core"));
    ({ InMemoryStore } = await import("@mastra/core/storage"));
  } catch (error) {
    return { reason: `@mastra/core has no Mastra or @mastra/core/storage no InMemoryStore: ${error?.message}` };
  }
  if (typeof Mastra !== "function" || typeof InMemoryStore !== "function") {
    return { reason: "@mastra/core exports no Mastra, or @mastra/core/storage no InMemoryStore: no store to resume from" };
  }
  const mastra = new Mastra({ workflows: { scenario: wf }, storage: new InMemoryStore(), logger: false });
  return { workflow: mastra.getWorkflow("scenario") };
}

// The stopped run resumed once: the paused step answered, or (after a failure) the failed branch's step asked to
// go on; what resume() refuses is what the caller sees.
export async function resume(run, script, stepId) {
  const paused = [...script.paused];
  const failed = script.branches.filter((name) => [...script.raisedOnce].some((key) => key.startsWith(`${name}:`)));
  const name = paused[0] ?? failed[0] ?? script.branches[0];
  return run.resume({ step: stepId(name, 0), resumeData: ANSWER, outputOptions: { includeState: true } });
}
