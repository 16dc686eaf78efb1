// ADK for JavaScript's `pause` and `resume` for its scenario adapter (docs/ADAPTERS.md), the way ADK documents
// human input for a run: a long-running function call. A paused branch yields an event calling `fanin_ask`
// (its id in the event's longRunningToolIds) and ends its turn, as an LLM agent's turn ends at a long-running call;
// the user answers with a message carrying the matching functionResponse, on the same session. The Runner picks
// the agent that message goes to (determineAgentForResumption: the author of the call it answers, or, failing
// that, the root agent), with a ResumabilityConfig `{ isResumable: true }` where the release exports
// createResumabilityConfig (from 1.6.0 the answer is routed to its caller only when the runner is resumable). A
// failed run has nothing of its own to resume it: the session goes on with a new user message (ADK gives a run no
// other input), which the runner hands to the root agent.
import * as adk from "@google/adk";
import { ANSWER } from "../scenario_kit.mjs";

export const ASK = "fanin_ask"; // the long-running call a paused branch makes

// The call id of branch `name`'s pause, unique in the session.
const callId = (name) => `fanin-pause-${name}`;

// Thrown by the pause in a branch's first run: the branch yields its long-running call and ends its turn.
export class PauseHere extends Error {}

// The Runner's resumability where the release has it (undefined where it does not: 0.3.0-1.3.0).
export function resumability() {
  return typeof adk.createResumabilityConfig === "function" ? adk.createResumabilityConfig({ isResumable: true }) : undefined;
}

// The branch's pause inside its agent: the answer the session holds for its call, or PauseHere the first time.
export function pauser(ctx) {
  return async (name) => {
    for (const event of ctx.session?.events ?? []) {
      for (const part of event.content?.parts ?? []) {
        if (part.functionResponse?.id === callId(name)) return part.functionResponse.response?.result;
      }
    }
    throw new PauseHere(`branch ${name} asks for input`);
  };
}

// The event a paused branch yields: its long-running call, which the user answers on resume.
export function pauseEvent(agent, ctx, name) {
  const content = { role: "model", parts: [{ functionCall: { id: callId(name), name: ASK, args: { branch: name } } }] };
  return adk.createEvent({
    author: agent.name,
    invocationId: ctx.invocationId,
    branch: ctx.branch,
    content,
    longRunningToolIds: [callId(name)],
  });
}

// The message that resumes the stopped run: the answer to every paused branch's call, or (after a failure) a new
// user message on the session.
export function resumeMessage(script) {
  const paused = [...script.paused];
  if (!paused.length) return { role: "user", parts: [{ text: "go on" }] };
  const answer = (name) => ({ functionResponse: { id: callId(name), name: ASK, response: { result: ANSWER } } });
  return { role: "user", parts: paused.map(answer) };
}
