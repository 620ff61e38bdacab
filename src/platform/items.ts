import type { z } from "zod";
import { ApiError } from "./errors";
import { parseItem } from "./validate";

export const MAX_ITEMS = 100;

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * A body that is a list sent as an object: no key is a field of the item schema and every value is
 * an object. PHP clients serialise lists that way (`{"0": {...}, "1": {...}}`) and the modelled
 * API's C# SDK wraps its item in its class name (`{"ProductUpdate": {...}}`). Returns the items
 * with their keys, in the object's order (integer keys ascending first, as JSON.parse keeps them).
 */
export function wrappedItems(body: unknown, fields: ReadonlySet<string>): [string, unknown][] | undefined {
  if (!isPlainObject(body)) return undefined;
  const entries = Object.entries(body);
  if (!entries.length) return undefined;
  for (const [key, value] of entries) if (fields.has(key) || !isPlainObject(value)) return undefined;
  return entries;
}

/**
 * The items of a body that is one object or an array of them (docs/products.md, "Products"): an array of more
 * than 100 is 413, an empty one 400. Array items' paths start with their position: `[1].sku`.
 * With `fields` (the item schema's field names), a wrapped list (see wrappedItems) is read as the
 * list of its values; their paths start with their key: `ProductUpdate.sku`, `0.sku`.
 */
export function bodyItems(
  body: unknown,
  noun: string,
  allowObject: boolean,
  fields?: ReadonlySet<string>,
): { value: unknown; prefix: string }[] {
  const wrapped = fields && wrappedItems(body, fields);
  if (wrapped) {
    if (wrapped.length > MAX_ITEMS) throw new ApiError(413, `at most ${MAX_ITEMS} ${noun}s per request`);
    return wrapped.map(([key, value]) => ({ value, prefix: key }));
  }
  if (Array.isArray(body)) {
    if (body.length === 0) throw new ApiError(400, `body must hold at least one ${noun}`);
    if (body.length > MAX_ITEMS) throw new ApiError(413, `at most ${MAX_ITEMS} ${noun}s per request`);
    return body.map((value, i) => ({ value, prefix: `[${i}]` }));
  }
  if (allowObject && body !== null && typeof body === "object") return [{ value: body, prefix: "" }];
  const a = /^[aeiou]/.test(noun) ? "an" : "a";
  throw new ApiError(
    400,
    allowObject ? `body must be ${a} ${noun} object or an array of them` : `body must be an array of ${noun}s`,
  );
}

/** The field names of an object schema, for bodyItems. */
export const fieldNames = (schema: { shape: Record<string, unknown> }): ReadonlySet<string> =>
  new Set(Object.keys(schema.shape));

export type ItemParse<T> = { index: number; prefix: string; notices: string[] } & (
  | { ok: true; data: T }
  | { ok: false; errors: string[] }
);

/** Validates each item on its own (see parseItem for how paths are placed), by `parse` when given. */
export function parseItems<S extends z.ZodType>(
  schema: S,
  items: { value: unknown; prefix: string }[],
  parse: typeof parseItem = parseItem,
) {
  return items.map(
    ({ value, prefix }, index): ItemParse<z.output<S>> => ({
      index,
      prefix,
      ...parse(schema, value, prefix),
    }),
  );
}
