// The token budget of ms_token_budget spent by steps in sequence (.then, .then): each reads, awaits and writes
// `budget`, but never at the same time as the other. No hazard.
import { createStep, createWorkflow } from "@mastra/core/workflows";
import { z } from "zod";

const write = async (topic) => {
  await Promise.resolve(); // stands in for the model call
  return { text: `a section on ${topic}`, tokens: 120 };
};

const stateSchema = z.object({ budget: z.number() });
const topic = z.object({ topic: z.string() });

const intro = createStep({
  id: "write-intro",
  inputSchema: topic,
  outputSchema: topic,
  stateSchema,
  execute: async ({ inputData, state, setState }) => {
    const left = state.budget;
    const { tokens } = await write(`${inputData.topic} (intro)`);
    await setState({ ...state, budget: left - tokens });
    return inputData;
  },
});

const body = createStep({
  id: "write-body",
  inputSchema: topic,
  outputSchema: topic,
  stateSchema,
  execute: async ({ inputData, state, setState }) => {
    const left = state.budget;
    const { tokens } = await write(`${inputData.topic} (body)`);
    await setState({ ...state, budget: left - tokens });
    return inputData;
  },
});

export const articleWorkflow = createWorkflow({ id: "article-sequential", inputSchema: topic, outputSchema: z.any(), stateSchema })
  .then(intro)
  .then(body)
  .commit();
