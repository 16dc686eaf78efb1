// Two researchers run at once and each writes its own state key (`notes`, `sources`), with no read of a key it
// writes. From 1.x the run's state merges both; before (0.20.2 to 0.24) a parallel step's setState replaced the
// run's state, so the first finisher's key was lost. At the newest release: no hazard.
import { createStep, createWorkflow } from "@mastra/core/workflows";
import { z } from "zod";

const search = async (query) => {
  await Promise.resolve(); // stands in for a search tool
  return [`${query} result 1`, `${query} result 2`];
};

const stateSchema = z.object({ notes: z.array(z.string()).optional(), sources: z.array(z.string()).optional() });

const takeNotes = createStep({
  id: "take-notes",
  inputSchema: z.object({ question: z.string() }),
  outputSchema: z.object({ count: z.number() }),
  stateSchema,
  execute: async ({ inputData, state, setState }) => {
    const found = await search(inputData.question);
    await setState({ ...state, notes: found.map((f) => `note: ${f}`) });
    return { count: found.length };
  },
});

const findSources = createStep({
  id: "find-sources",
  inputSchema: z.object({ question: z.string() }),
  outputSchema: z.object({ count: z.number() }),
  stateSchema,
  execute: async ({ inputData, state, setState }) => {
    const found = await search(`${inputData.question} citations`);
    await setState({ ...state, sources: found });
    return { count: found.length };
  },
});

const report = createStep({
  id: "report",
  inputSchema: z.any(),
  outputSchema: z.object({ summary: z.string() }),
  stateSchema,
  execute: async ({ state }) => ({ summary: `${state.notes?.length ?? 0} notes, ${state.sources?.length ?? 0} sources` }),
});

export const researchWorkflow = createWorkflow({ id: "research", inputSchema: z.object({ question: z.string() }), outputSchema: z.any(), stateSchema })
  .parallel([takeNotes, findSources])
  .then(report)
  .commit();
