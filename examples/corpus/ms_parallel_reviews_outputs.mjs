// The reviewers of ms_parallel_reviews_shared_verdict, done as Mastra's docs advise: each returns its verdict
// as its output, the step after .parallel reads both (keyed by step id) and writes state once. No hazard.
import { createStep, createWorkflow } from "@mastra/core/workflows";
import { z } from "zod";

const review = async (draft, reviewer) => {
  await Promise.resolve(); // stands in for the model call
  return `${reviewer}: ${draft.length > 10 ? "approve" : "revise"}`;
};

const draftSchema = z.object({ draft: z.string() });
const verdictSchema = z.object({ verdict: z.string() });
const stateSchema = z.object({ verdicts: z.array(z.string()).optional() });

const styleReview = createStep({
  id: "style-review",
  inputSchema: draftSchema,
  outputSchema: verdictSchema,
  execute: async ({ inputData }) => ({ verdict: await review(inputData.draft, "style") }),
});

const factReview = createStep({
  id: "fact-review",
  inputSchema: draftSchema,
  outputSchema: verdictSchema,
  execute: async ({ inputData }) => ({ verdict: await review(inputData.draft, "facts") }),
});

const collect = createStep({
  id: "collect",
  inputSchema: z.any(),
  outputSchema: z.object({ approved: z.boolean() }),
  stateSchema,
  execute: async ({ inputData, state, setState }) => {
    const verdicts = [inputData["style-review"].verdict, inputData["fact-review"].verdict];
    await setState({ ...state, verdicts });
    return { approved: verdicts.every((v) => v.endsWith("approve")) };
  },
});

export const reviewWorkflow = createWorkflow({ id: "review-outputs", inputSchema: draftSchema, outputSchema: z.any(), stateSchema })
  .parallel([styleReview, factReview])
  .then(collect)
  .commit();
