// Mitigations of the LangGraph.js hazards (the counterparts of suites/langgraph/test_mitigations_*.py).
// Every probe id is its hazard probe's id plus `-mitigated`; reference/mitigations.toml names it. Each probe
// is its hazard probe's scenario with the fix applied, run again under another fold order (the writers'
// node names swapped, the Send list reversed, the other branch finishing first): every write must be kept
// and the result the same in every order (suites/fanin_node.mjs's judge, the Python probes' verdict).
import { Annotation, START, StateGraph } from "@langchain/langgraph";
import { Gate, Vacuous, probe, recordJudged, settle } from "../fanin_node.mjs";
import { NAMINGS, appendKey, attempt, byKey, joined, keptOf, stepOf } from "./kit.mjs";

// The two fixes both same-key probes apply: a reducer that keeps each writer's value under its task id,
// or a key per writer. Each: the state, its input, a writer's update, and the items the final state holds.
const MERGE_BY_ID = {
  state: () => Annotation.Root({ value: Annotation({ reducer: (current, update) => ({ ...current, ...update }), default: () => ({}) }) }),
  init: { value: {} },
  update: (role) => ({ value: { [`task-${role}`]: role } }),
  items: (final) => Object.values(final.value),
};

const OWN_KEYS = {
  state: () => Annotation.Root({ value_A: Annotation(), value_B: Annotation() }),
  init: { value_A: "init", value_B: "init" },
  update: (role) => ({ [`value_${role}`]: role }),
  items: (final) => [final.value_A, final.value_B],
};

probe({
  "id": "langgraphjs/same-key/no-reducer-mitigated",
  "title": "no-reducer, mitigated: the two writers of `value` with a reducer on it (concatenate; merge-by-id), or each with its own key; both namings",
  "claim": {
    "text": "Give every key that parallel nodes write a reducer, or give each branch its own key: then neither parallel write is lost.",
    "source": "https://docs.langchain.com/oss/javascript/langgraph/errors/INVALID_CONCURRENT_GRAPH_UPDATE",
    "expect": {"value.lost": []}
  }
}, async function noReducerMitigated(obs) {
  const schemes = {
    "concatenate reducer": {
      state: () => Annotation.Root({ value: appendKey() }),
      init: { value: [] },
      update: (role) => ({ value: [role] }),
      items: (final) => final.value,
    },
    "merge-by-id reducer": MERGE_BY_ID,
    "own key per branch": OWN_KEYS,
  };
  const variants = {};
  for (const [scheme, { state, init, update, items }] of Object.entries(schemes)) {
    variants[scheme] = {};
    for (const [naming, roles] of Object.entries(NAMINGS)) {
      const steps = {};
      let builder = new StateGraph(state());
      for (const [name, role] of Object.entries(roles)) {
        builder = builder.addNode(name, (s, config) => {
          steps[name] = stepOf(config);
          return update(role);
        }).addEdge(START, name);
      }
      const outcome = await attempt(() => builder.compile().invoke(init));
      if ("raises" in outcome) {
        variants[scheme][naming] = outcome;
        continue;
      }
      obs.requireSameStep(steps, 2, "writers");
      variants[scheme][naming] = {
        made: Object.entries(roles).map(([n, r]) => `${n}:${r}`),
        kept: keptOf(roles, items(outcome.returned)),
        result: outcome.returned,
      };
    }
  }
  recordJudged(obs, variants);
});

probe({
  "id": "langgraphjs/same-key/across-supersteps-mitigated",
  "title": "across-supersteps, mitigated: the two nodes in sequence write `value` through a merge-by-id reducer, or each its own key; both namings (which node writes first)",
  "claim": {
    "text": "When the earlier step's value must survive, give the key a reducer that keeps each writer's value (merge by id) or give each step its own key: the later step no longer replaces the earlier one, whichever runs first.",
    "source": "https://docs.langchain.com/oss/javascript/langgraph/graph-api#reducers",
    "expect": {"hazard": "safe"}
  }
}, async function acrossSuperstepsMitigated(obs) {
  const schemes = {
    "merge-by-id reducer": MERGE_BY_ID,
    "own key per step": OWN_KEYS,
  };
  const variants = {};
  for (const [scheme, { state, init, update, items }] of Object.entries(schemes)) {
    variants[scheme] = {};
    for (const [naming, roles] of Object.entries(NAMINGS)) {
      const steps = {};
      const writer = (name) => (s, config) => {
        steps[name] = stepOf(config);
        return update(roles[name]);
      };
      const graph = new StateGraph(state()).addNode("a", writer("a")).addNode("b", writer("b")).addEdge(START, "a").addEdge("a", "b").compile();
      const outcome = await attempt(() => graph.invoke(init));
      if ("raises" in outcome) {
        variants[scheme][naming] = outcome;
        continue;
      }
      if (!(steps.a < steps.b)) throw new Vacuous(`the writers did not run in two supersteps, a before b: ${JSON.stringify(steps)}`);
      variants[scheme][naming] = {
        made: Object.entries(roles).map(([n, r]) => `${n}:${r}`),
        kept: keptOf(roles, items(outcome.returned)),
        result: outcome.returned,
        observed: { writer_steps: steps },
      };
    }
  }
  recordJudged(obs, variants);
});

probe({
  "id": "langgraphjs/reducers/add-mitigated",
  "title": "add, mitigated: the two concatenating writers store a task id with their item; the reading node (a list edge after both) sorts by it; both namings",
  "claim": {
    "text": "Treat the folded list as unordered: sorted by a key the graph stores with each item, the result no longer depends on the fold order.",
    "source": "https://docs.langchain.com/oss/javascript/langgraph/graph-api#reducers",
    "expect": {"hazard": "safe"}
  }
}, async function addMitigated(obs) {
  const State = Annotation.Root({ items: appendKey(), ordered: Annotation() });
  const taskIds = { A: "task-1", B: "task-2" };
  const runs = {};
  for (const [naming, roles] of Object.entries(NAMINGS)) {
    const steps = {};
    let builder = new StateGraph(State);
    for (const [name, item] of Object.entries(roles)) {
      builder = builder.addNode(name, (s, config) => {
        steps[name] = stepOf(config);
        return { items: [{ key: taskIds[item], item }] };
      }).addEdge(START, name);
    }
    builder = builder.addNode("read", (s) => ({ ordered: byKey(s.items) })).addEdge(Object.keys(roles), "read");
    const outcome = await attempt(() => builder.compile().invoke({ items: [], ordered: [] }));
    if ("raises" in outcome) {
      runs[naming] = outcome;
      continue;
    }
    obs.requireSameStep(steps, 2, "writers");
    const ordered = outcome.returned.ordered;
    runs[naming] = { made: Object.entries(roles).map(([n, i]) => `${n}:${i}`), kept: keptOf(roles, ordered), result: ordered };
  }
  recordJudged(obs, { "sorted by task id": runs });
});

probe({
  "id": "langgraphjs/send/order-mitigated",
  "title": "order, mitigated: each Send payload carries the job's index, the join sorts results by it; the Send list refactored (reversed, other target first) and finishing orders forced by gates",
  "claim": {
    "text": "Results sorted by the job index carried in the Send payload come back in job order whatever the Send list order, the finishing order or the target node names.",
    "source": "https://docs.langchain.com/oss/javascript/langgraph/graph-api#send",
    "expect": {"hazard": "safe"}
  }
}, async function sendOrderMitigated(obs) {
  const { Send } = await obs.need("@langchain/langgraph", "Send");
  const State = Annotation.Root({ items: appendKey(), ordered: Annotation() });

  // `sends`: [target node, job, the job's index]; `finish`: the jobs in the order their workers finish.
  async function run(sends, finish) {
    const gates = Object.fromEntries(sends.map(([, x]) => [x, new Gate()]));
    const started = [];
    const finished = [];
    const worker = async (payload) => {
      started.push(payload.x);
      await gates[payload.x].wait();
      finished.push(payload.x);
      return { items: [{ key: payload.index, item: payload.x }] };
    };
    const targets = [...new Set(sends.map(([node]) => node))].sort();
    let builder = new StateGraph(State).addNode("plan", () => ({ items: [] }));
    for (const node of targets) builder = builder.addNode(node, worker);
    builder = builder.addNode("join", (s) => ({ ordered: byKey(s.items) }));
    for (const node of targets) builder = builder.addEdge(node, "join");
    builder = builder
      .addEdge(START, "plan")
      .addConditionalEdges("plan", () => sends.map(([node, x, index]) => new Send(node, { x, index })), targets);
    const running = attempt(() => builder.compile().invoke({ items: [], ordered: [] }));
    await settle();
    if (started.length !== sends.length) throw new Vacuous(`not every worker was in flight: ${JSON.stringify(started)}`);
    for (const x of finish) {
      gates[x].open();
      await settle();
    }
    const outcome = await running;
    if ("raises" in outcome) return outcome;
    if (finished.join() !== finish.join()) throw new Vacuous(`the workers finished ${JSON.stringify(finished)}, not ${JSON.stringify(finish)}`);
    const made = Object.fromEntries(sends.map(([node, x]) => [`${node}(${x})`, x]));
    const ordered = outcome.returned.ordered;
    return { made: Object.entries(made).map(([n, x]) => `${n}:${x}`), kept: keptOf(made, ordered), result: ordered };
  }

  const jobs = [["worker", "a", 0], ["worker", "b", 1], ["worker", "c", 2]];
  const two = [["zeta", "z1", 0], ["alpha", "a1", 1]];
  const variants = {
    "three jobs, one target": {
      "forward, finish c, b, a": await run(jobs, ["c", "b", "a"]),
      "Send list reversed, finish a, b, c": await run([...jobs].reverse(), ["a", "b", "c"]),
    },
    "two jobs, two targets": {
      "zeta sent first, finish a1, z1": await run(two, ["a1", "z1"]),
      "alpha sent first, finish z1, a1": await run([...two].reverse(), ["z1", "a1"]),
    },
  };
  recordJudged(obs, variants);
});

probe({
  "id": "langgraphjs/join/separate-edges-mitigated",
  "title": "separate-edges, mitigated: `a` and `b -> b2` fan in to `join` through addEdge([\"a\", \"b2\"], \"join\"), or through the separate edges with { defer: true } on `join`",
  "claim": {
    "text": "A list edge waits for all its start nodes, and a deferred join waits for all pending tasks: either way the join after branches of unequal length runs once and sees every branch's write.",
    "source": "https://langchain-ai.github.io/langgraphjs/how-tos/defer-node-execution",
    "expect": {"hazard": "safe"}
  }
}, async function separateEdgesMitigated(obs) {
  const State = Annotation.Root({ items: appendKey() });

  async function run(wiring) {
    const joinRuns = [];
    let builder = new StateGraph(State);
    for (const name of ["a", "b", "b2"]) builder = builder.addNode(name, () => ({ items: [name] }));
    builder = builder
      .addNode("join", (s) => {
        joinRuns.push([...s.items]);
        return {};
      }, wiring === "defer" ? { defer: true } : {})
      .addEdge(START, "a")
      .addEdge(START, "b")
      .addEdge("b", "b2");
    builder = wiring === "list edge" ? builder.addEdge(["a", "b2"], "join") : builder.addEdge("a", "join").addEdge("b2", "join");
    const outcome = await attempt(() => builder.compile().invoke({ items: [] }));
    return "raises" in outcome ? outcome : joined(["a", "b", "b2"], joinRuns);
  }

  const variants = {
    "list edge [a, b2] -> join": { run: await run("list edge") },
    "separate edges, defer: true on join": { run: await run("defer") },
  };
  recordJudged(obs, variants, "join runs once, sees every write");
});

probe({
  "id": "langgraphjs/errors/async-sibling-cancelled-mitigated",
  "title": "async-sibling-cancelled, mitigated: both nodes catch their own errors and return a failure result (`failing_result`), or `slow` passes config.signal on to what it awaits and checks signal.aborted before it writes; `failing` throws while `slow` awaits a gate, then `slow` finishes before `failing` throws",
  "claim": {
    "text": "A node that catches its own error and returns a failure result does not abort its siblings: invoke waits for `slow` and keeps every write, the failure included, in either order. A sibling that passes config.signal on stops when a node throws: invoke still rejects, and nothing of `slow` runs on after the rejection.",
    "source": "https://github.com/langchain-ai/langgraphjs/blob/main/libs/langgraph/src/pregel/runner.ts",
    "expect": {"value.variants.caught in each node.hazard": "safe", "value.variants.signal passed on, checked before writing.runs.failing first.ran_on_after_invoke_ended": []}
  }
}, async function asyncSiblingCancelledMitigated(obs) {
  const State = Annotation.Root({ items: appendKey(), failing_result: Annotation() });
  // What a node does with an error it catches: return it as its own key's failure result.
  const caught = (key, body) => async (state, config) => {
    try {
      return await body(state, config);
    } catch (error) {
      return { [key]: { failed: error.name } };
    }
  };
  // An await that gives up when the signal aborts (what passing the signal on to a fetch or a client does).
  const until = (promise, signal) => new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
    promise.then(resolve, reject);
  });

  async function run(fix, first) {
    const log = [];
    const started = new Gate();
    const hold = new Gate();
    const slowBody = async (state, config) => {
      log.push("slow started");
      config?.signal?.addEventListener("abort", () => log.push("slow signal aborted"));
      started.open();
      if (fix === "signal") {
        await until(hold.wait(), config?.signal);
        if (config?.signal?.aborted) throw config.signal.reason;
      } else {
        await hold.wait();
      }
      log.push("slow finished");
      return { items: ["slow"] };
    };
    const failingBody = async () => {
      await started.wait();
      if (first === "slow") {
        hold.open();
        await settle();
      }
      log.push("failing threw");
      throw new Error("failing node");
    };
    const graph = new StateGraph(State)
      .addNode("slow", fix === "caught" ? caught("slow_result", slowBody) : slowBody)
      .addNode("failing", fix === "caught" ? caught("failing_result", failingBody) : failingBody)
      .addEdge(START, "slow")
      .addEdge(START, "failing")
      .compile();
    let ended = false;
    let atEnd = [];
    const running = attempt(() => graph.invoke({ items: [] })).then((outcome) => {
      ended = true;
      atEnd = [...log];
      return outcome;
    });
    let endedBeforeRelease = null;
    if (first === "failing") {
      await settle();
      endedBeforeRelease = ended;
      hold.open();
    }
    const outcome = await running;
    await settle();
    const inFlight = log.indexOf("slow started") === 0 && log.indexOf("failing threw") > 0;
    const finishedFirst = log.includes("slow finished") && log.indexOf("slow finished") < log.indexOf("failing threw");
    if (!inFlight || finishedFirst !== (first === "slow")) throw new Vacuous(`not the order ${first} first with slow in flight: ${JSON.stringify(log)}`);
    const observed = { log, ran_on_after_invoke_ended: log.slice(atEnd.length), ...(endedBeforeRelease === null ? {} : { invoke_ended_before_slow_released: endedBeforeRelease }) };
    if ("raises" in outcome) return { raises: outcome.raises, ...observed };
    const final = outcome.returned;
    const writes = { items: ["slow"], failing_result: { failed: "Error" } };
    const kept = Object.entries(writes).filter(([k, v]) => JSON.stringify(final[k] ?? null) === JSON.stringify(v));
    return {
      made: Object.entries(writes).map(([k, v]) => `${k}: ${JSON.stringify(v)}`),
      kept: kept.map(([k, v]) => `${k}: ${JSON.stringify(v)}`),
      result: Object.fromEntries(Object.keys(writes).map((k) => [k, final[k] ?? null])),
      observed,
    };
  }

  const variants = {};
  for (const [fix, name] of [["caught", "caught in each node"], ["signal", "signal passed on, checked before writing"]]) {
    variants[name] = { "failing first": await run(fix, "failing"), "slow first": await run(fix, "slow") };
  }
  recordJudged(obs, variants, "run completes, every result kept");
});
