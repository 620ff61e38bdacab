import type { z } from "zod";
import { ApiError } from "./errors";
import { parseItem } from "./validate";

export const MAX_ITEMS = 100;

/**
 * The items of a body that is one object or an array of them (contract 4, 5): an array of more
 * than 100 is 413, an empty one 400. Array items' paths start with their position: `[1].sku`.
 */
export function bodyItems(body: unknown, noun: string, allowObject: boolean): { value: unknown; prefix: string }[] {
  if (Array.isArray(body)) {
    if (body.length === 0) throw new ApiError(400, `body must hold at least one ${noun}`);
    if (body.length > MAX_ITEMS) throw new ApiError(413, `at most ${MAX_ITEMS} ${noun}s per request`);
    return body.map((value, i) => ({ value, prefix: `[${i}]` }));
  }
  if (allowObject && body !== null && typeof body === "object") return [{ value: body, prefix: "" }];
  throw new ApiError(
    400,
    allowObject ? `body must be a ${noun} object or an array of them` : `body must be an array of ${noun}s`,
  );
}

export type ItemParse<T> = { index: number; prefix: string; notices: string[] } & (
  | { ok: true; data: T }
  | { ok: false; errors: string[] }
);

/** Validates each item on its own (see parseItem for how paths are placed). */
export function parseItems<S extends z.ZodType>(schema: S, items: { value: unknown; prefix: string }[]) {
  return items.map(
    ({ value, prefix }, index): ItemParse<z.output<S>> => ({
      index,
      prefix,
      ...parseItem(schema, value, prefix),
    }),
  );
}
