// ADK for JavaScript's scenario adapter (docs/ADAPTERS.md): a scenario as a ParallelAgent of custom agents.
// Every branch is a BaseAgent child of one ParallelAgent, followed by a `join` agent (a SequentialAgent of the
// two), run through ADK's Runner on an InMemorySessionService; a branch of several parts (split by `then`) is a
// SequentialAgent of one custom agent per part (`b`, `b_2`: agent names are identifiers). A branch reads the session state (or what it
// wrote itself) and writes by yielding an event with a state delta; its `return` value is an event's text,
// and `join.saw` is those texts in the order the join finds them in the session's events. `final` is the
// state the session service stores after the run, raised or not; `join.runs` counts the join agent's runs. ADK cannot cancel a child: a sibling the
// run abandons stays `unfinished`. A branch that asks to stop the run (`escalate`) ends with an event whose actions
// escalate (`createEventActions({ escalate: true })`), ADK's way, as the Python adapter does. With `runs`, the one
// agent tree runs again on a new session seeded with the scenario's state; with `thread`, again on the first run's
// session, its input a new user message (ADK gives a run no other), as the Python adapter does. With `resume`, a
// branch pauses with a long-running function call and the run is resumed on its session by the answer to it, or
// after a failure by a new message (scenario_resume.mjs).
// Run as a program from a directory where @google/adk is installed: `node scenario_adapter.mjs`.
import { BaseAgent, InMemorySessionService, ParallelAgent, Runner, SequentialAgent, createEvent, createEventActions } from "@google/adk";
import { Script, declare, isMain, packageVersion, serve } from "../scenario_kit.mjs";
import { APP, USER, deltaEvent, errorName } from "./kit.mjs";
import { PauseHere, pauseEvent, pauser, resumability, resumeMessage } from "./scenario_resume.mjs";
import { noSharedStore } from "./scenario_together.mjs";

// A ParallelAgent child that runs the branch's steps: each write is an event with one state delta.
class Branch extends BaseAgent {
  constructor(name, script, branch = name, part = 0) {
    super({ name });
    Object.assign(this, { script, branch, part });
  }
  async *runAsyncImpl(ctx) {
    const own = {};
    const read = (key) => (key in own ? own[key] : ctx.session?.state?.[key] ?? null);
    const steps = this.script.walk(this.branch, read, undefined, true, this.part, this.script.resumes ? pauser(ctx) : null);
    for (;;) {
      let next;
      try {
        next = await steps.next();
      } catch (error) {
        if (!(error instanceof PauseHere)) throw error;
        // A pause: the branch's long-running call, and its turn ends there (the kit has marked it paused).
        yield pauseEvent(this, ctx, this.branch);
        return;
      }
      const { value, done } = next;
      if (done) {
        if (value !== null) {
          const content = { role: "model", parts: [{ text: JSON.stringify(value) }] };
          yield createEvent({ author: this.name, invocationId: ctx.invocationId, branch: ctx.branch, content });
        }
        if (this.part === this.script.parts(this.branch) - 1 && this.script.escalates(this.branch)) {
          // Ask ADK to stop the run: an event whose actions escalate, as the Python ADK adapter does.
          const actions = createEventActions({ escalate: true });
          yield createEvent({ author: this.name, invocationId: ctx.invocationId, branch: ctx.branch, actions });
        }
        // Resumed: ADK has taken the branch's last event, so the branch has finished as far as ADK can tell.
        this.script.handOn(this.branch);
        return;
      }
      const [key, written] = value;
      own[key] = written;
      yield deltaEvent(this, ctx, { [key]: written });
    }
  }
  async *runLiveImpl() {
    throw new Error("no live runs in scenarios");
  }
}

// After the ParallelAgent: what the branches handed on, in the order the session's events hold them.
class Join extends BaseAgent {
  constructor(branches, joined, script) {
    super({ name: "join" });
    Object.assign(this, { branches, joined, script });
  }
  async *runAsyncImpl(ctx) {
    this.script.joinRuns += 1;
    const texts = (ctx.session?.events ?? [])
      .filter((e) => this.branches.includes(e.author) && e.content?.parts?.[0]?.text !== undefined)
      .map((e) => JSON.parse(e.content.parts[0].text));
    this.joined.saw = texts;
  }
  async *runLiveImpl() {
    throw new Error("no live runs in scenarios");
  }
}

// The agent tree for `script`: the fan-out, then the join, which records what it saw in `joined`.
function tree(script) {
  const joined = {};
  const agentName = (name, part) => (part === 0 ? name : `${name}_${part + 1}`);
  const child = (name) => {
    if (script.parts(name) === 1) return new Branch(name, script);
    const chain = Array.from({ length: script.parts(name) }, (_, part) => new Branch(agentName(name, part), script, name, part));
    return new SequentialAgent({ name: `${name}_chain`, subAgents: chain });
  };
  const authors = script.branches.flatMap((name) => Array.from({ length: script.parts(name) }, (_, part) => agentName(name, part)));
  const fanout = new ParallelAgent({ name: "fanout", subAgents: script.branches.map(child) });
  const root = new SequentialAgent({ name: "scenario", subAgents: [fanout, new Join(authors, joined, script)] });
  return { root, joined };
}

async function run(scenario, order) {
  const script = new Script(scenario, order);
  const { root, joined } = tree(script);
  const sessionService = new InMemorySessionService();
  // `resume`: a resumable runner where the release has one (scenario_resume.mjs); every other scenario as before.
  const resumable = script.resumes ? { resumabilityConfig: resumability() } : {};
  const runner = new Runner({ appName: APP, agent: root, sessionService, ...resumable });
  let sessionId;
  let error = null;
  for (let number = 0; number < script.runs; number++) {
    // `runs`: the one agent tree run again, a new session each seeded with the scenario's state (`thread`: one).
    sessionId = script.sameThread ? "s1" : `s${number + 1}`;
    if (number) {
      await script.again();
      delete joined.saw; // the adapter's own record of the join, per run
    }
    if (!number || !script.sameThread) await sessionService.createSession({ appName: APP, userId: USER, sessionId, state: script.state });
    error = await script.run(turn(runner, sessionId));
  }
  if (script.resumes) {
    // The stopped run resumed once on its session: the paused branch answered, or, after a failure, a new message.
    await script.resume();
    error = await script.run(turn(runner, sessionId, resumeMessage(script)));
  }
  const raises = errorName(error);
  const final = async () => ({ ...((await sessionService.getSession({ appName: APP, userId: USER, sessionId }))?.state ?? {}) });
  return script.answer({ raises, final, saw: joined.saw ?? null, error });
}

// One run of the agent tree on session `sessionId`, its input a user message (ADK gives a run no other; the runner
// picks the agent it goes to): resolves to what the run threw, or null.
async function turn(runner, sessionId, newMessage = { role: "user", parts: [{ text: "go" }] }) {
  try {
    for await (const _ of runner.runAsync({ userId: USER, sessionId, newMessage }));
    return null;
  } catch (caught) {
    return caught;
  }
}

export const adapter = {
  capabilities: () =>
    declare("adkjs", packageVersion("@google/adk"), {
      select: "a ParallelAgent runs every sub-agent: ADK has no conditional fan-out to a join",
      ...noSharedStore(),
    }, ["escalate", "runs", "thread", "stall", "together", "pause", "resume"]),
  run,
};

if (isMain(import.meta.url)) await serve(adapter);
