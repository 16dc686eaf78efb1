// LangGraph.js's `pause` and `resume` for its scenario adapter (docs/ADAPTERS.md), as suites/langgraph's
// scenario_resume.py: a branch pauses with `interrupt()` (which throws GraphInterrupt in the node the first time
// and returns the resume value when the node runs again), and the stopped run is resumed on its checkpointer's
// thread: `invoke(new Command({ resume: answer }), config)` after a pause, `invoke(null, config)` after a failure.
import * as langgraph from "@langchain/langgraph";
import { ANSWER } from "../scenario_kit.mjs";

// Why this version cannot pause, read from the installed package (empty when it can).
export function cannot() {
  return typeof langgraph.interrupt === "function"
    ? {}
    : { pause: "@langchain/langgraph exports no interrupt() (a node cannot ask for input and be resumed)" };
}

// A branch asks for human input: LangGraph.js's interrupt(), whose value is the answer once resumed.
export function pause(name) {
  return langgraph.interrupt({ branch: name });
}

// What the resumed run is given: the answer for the pause, or nothing (run on from the checkpoint).
export function resumeInput(script) {
  return script.paused.size ? new langgraph.Command({ resume: ANSWER }) : null;
}
