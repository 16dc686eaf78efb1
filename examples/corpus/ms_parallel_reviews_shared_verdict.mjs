// Two reviewers run at once in one .parallel and each records its verdict in workflow state under one key:
// the run keeps whichever finished last (hazard: parallel steps set one workflow state key, `verdict`).
import { createStep, createWorkflow } from "@mastra/core/workflows";
import { z } from "zod";

const review = async (draft, reviewer) => {
  await Promise.resolve(); // stands in for the model call
  return `${reviewer}: ${draft.length > 10 ? "approve" : "revise"}`;
};

const draftSchema = z.object({ draft: z.string() });
const stateSchema = z.object({ verdict: z.string().optional() });

const styleReview = createStep({
  id: "style-review",
  inputSchema: draftSchema,
  outputSchema: z.object({ ok: z.boolean() }),
  stateSchema,
  execute: async ({ inputData, state, setState }) => {
    const verdict = await review(inputData.draft, "style");
    await setState({ ...state, verdict });
    return { ok: verdict.endsWith("approve") };
  },
});

const factReview = createStep({
  id: "fact-review",
  inputSchema: draftSchema,
  outputSchema: z.object({ ok: z.boolean() }),
  stateSchema,
  execute: async ({ inputData, state, setState }) => {
    const verdict = await review(inputData.draft, "facts");
    await setState({ ...state, verdict });
    return { ok: verdict.endsWith("approve") };
  },
});

const publish = createStep({
  id: "publish",
  inputSchema: z.any(),
  outputSchema: z.object({ published: z.boolean() }),
  stateSchema,
  execute: async ({ inputData }) => ({ published: inputData["style-review"].ok && inputData["fact-review"].ok }),
});

export const reviewWorkflow = createWorkflow({ id: "review", inputSchema: draftSchema, outputSchema: z.any(), stateSchema })
  .parallel([styleReview, factReview])
  .then(publish)
  .commit();
