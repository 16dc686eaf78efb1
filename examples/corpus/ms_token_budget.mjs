// Two writers share a token budget in workflow state: each reads what is left, awaits its model call and writes
// back the remainder. Both read the same budget, so one spend is lost (hazard: a read-modify-write of `budget`).
import { createStep, createWorkflow } from "@mastra/core/workflows";
import { z } from "zod";

const write = async (topic) => {
  await Promise.resolve(); // stands in for the model call
  return { text: `a section on ${topic}`, tokens: 120 };
};

const stateSchema = z.object({ budget: z.number() });

const intro = createStep({
  id: "write-intro",
  inputSchema: z.object({ topic: z.string() }),
  outputSchema: z.object({ text: z.string() }),
  stateSchema,
  execute: async (context) => {
    const left = context.state.budget;
    const { text, tokens } = await write(`${context.inputData.topic} (intro)`);
    await context.setState({ ...context.state, budget: left - tokens });
    return { text };
  },
});

const body = createStep({
  id: "write-body",
  inputSchema: z.object({ topic: z.string() }),
  outputSchema: z.object({ text: z.string() }),
  stateSchema,
  execute: async ({ inputData, state, setState }) => {
    const { budget } = state;
    const { text, tokens } = await write(`${inputData.topic} (body)`);
    await setState({ ...state, budget: budget - tokens });
    return { text };
  },
});

const assemble = createStep({
  id: "assemble",
  inputSchema: z.any(),
  outputSchema: z.object({ article: z.string() }),
  execute: async ({ inputData }) => ({ article: `${inputData["write-intro"].text}\n${inputData["write-body"].text}` }),
});

export const articleWorkflow = createWorkflow({ id: "article", inputSchema: z.object({ topic: z.string() }), outputSchema: z.any(), stateSchema })
  .parallel([intro, body])
  .then(assemble)
  .commit();
