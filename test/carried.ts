import { answerBytes } from "../src/platform/d1";

// Carried answers (src/platform/d1.ts) read back as the JSON text they stand for: the Worker
// never does this (it answers the bytes), so these live with the tests.

/** An answer's carried text as the JSON text it stands for. */
export const uncarried = (text: string) => new TextDecoder().decode(answerBytes(text));

/** The JSON texts of an ownJson or minimalJson result (src/products/present.ts), in order. */
export const textsOf = (r: D1Result<Record<string, unknown>>) => r.results.map((row) => uncarried(row.json as string));
