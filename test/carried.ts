import { answerBytes } from "../src/platform/quotes";
import { type KeyedShape, keyedOf } from "../src/products/json-sql";

// Carried answers (src/platform/quotes.ts) read back as the JSON text they stand for: the Worker
// never does this (it answers the bytes), so these live with the tests.

/** An answer's carried text as the JSON text it stands for. */
export const uncarried = (text: string) => new TextDecoder().decode(answerBytes(text));

/**
 * The JSON texts of an ownJson or publicJson result (src/products/own-json.ts; `shape`: ownShape of
 * its view) or of a minimalJson one (no shape), in order.
 */
export const textsOf = (r: D1Result<Record<string, unknown>>, shape?: KeyedShape) =>
  r.results.map((row) =>
    new TextDecoder().decode(answerBytes(row.json as string, shape && keyedOf(shape, Number(row.variants)))),
  );
