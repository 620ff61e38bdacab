import { createMiddleware } from "hono/factory";
import type { z } from "zod";
import type { AppEnv } from "../env";
import { ApiError } from "./errors";
import { parseItem } from "./fields";

// What a write request sends (docs/api.md, "Conventions"): its JSON body, the items in it, and how
// it prefers to be answered.

const MAX_BODY_BYTES = 1024 * 1024;
const MAX_DEPTH = 32;
const MAX_ITEMS = 100;

const tooLarge = () => new ApiError(413, "request body is larger than 1 MiB");

/**
 * Depth of the deepest array/object in JSON text, scanning only outside strings. Runs before
 * JSON.parse so a hostile body of a million '[' is refused in linear time, not by a stack overflow.
 */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 34) {
      // Most of a body is inside strings: jump to the closing quote natively, past escaped ones
      // (a quote after an odd number of backslashes).
      let end = text.indexOf('"', i + 1);
      while (end !== -1) {
        let slashes = 0;
        while (text.charCodeAt(end - 1 - slashes) === 92) slashes++;
        if (slashes % 2 === 0) break;
        end = text.indexOf('"', end + 1);
      }
      if (end === -1) return max;
      i = end;
    } else if (ch === 91 || ch === 123) {
      if (++depth > max) max = depth;
    } else if (ch === 93 || ch === 125) depth--;
  }
  return max;
}

/**
 * Bytes of an oversized body read and dropped before the 413 is sent. Answering while the client
 * is still sending leaves the rest of its body in the connection, which the local dev server
 * (and some proxies) cannot recover from: it answers 503 and drops requests sharing the
 * connection. Draining costs no memory (nothing is kept) and little CPU; past this bound the body
 * is cancelled instead, so an endless body still cannot hold the Worker.
 */
export const MAX_DRAIN_BYTES = 16 * 1024 * 1024;

/**
 * The body's bytes, refusing with 413 once more than MAX_BODY_BYTES have arrived. A body without
 * Content-Length (chunked) is read chunk by chunk (reading a large one so cost about 1.8 ms of CPU
 * for 700 KB in workerd, bench/README.md), so an endless or huge one never gets buffered
 * whole: `arrayBuffer()` would hold all of it in the isolate's memory before its size is known.
 */
async function readLimited(req: Request, declared: number): Promise<Uint8Array> {
  if (!req.body) return new Uint8Array();
  // A declared length is the framing the runtime enforces: such a body cannot pass it, so it is
  // read natively in one piece (a 700 KB sync arrives in dozens of chunks otherwise).
  if (Number.isSafeInteger(declared) && declared <= MAX_BODY_BYTES && req.headers.has("content-length")) {
    const whole = new Uint8Array(await req.arrayBuffer());
    if (whole.byteLength > MAX_BODY_BYTES) throw tooLarge();
    return whole;
  }
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await drain(reader, size);
      throw tooLarge();
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const ch of chunks) {
    out.set(ch, at);
    at += ch.byteLength;
  }
  return out;
}

/** Reads and drops the rest of an oversized body, up to MAX_DRAIN_BYTES in all; then cancels it. */
async function drain(reader: ReadableStreamDefaultReader<Uint8Array>, seen: number) {
  let size = seen;
  try {
    while (size <= MAX_DRAIN_BYTES) {
      const { done, value } = await reader.read();
      if (done) return;
      size += value.byteLength;
    }
  } catch {
    return; // the client went away: nothing left to drain
  }
  await reader.cancel().catch(() => {});
}

/**
 * Whether the parsed value `v` nests arrays and objects deeper than `max` levels. Iterative, as
 * V8's JSON.parse is: a body of half a million levels parses without a stack overflow, and is
 * walked so too.
 */
function nestedDeeper(v: unknown, max: number): boolean {
  const stack: unknown[] = [v];
  const depths: number[] = [1];
  // No array of values per object (a list of 2,048 entries is as many objects): their keys in place.
  const push = (y: unknown, d: number) => {
    if (typeof y === "object" && y !== null) {
      stack.push(y);
      depths.push(d + 1);
    }
  };
  while (stack.length) {
    const x = stack.pop() as Record<string, unknown>;
    const d = depths.pop() as number;
    if (d > max) return true;
    if (Array.isArray(x)) for (let i = 0; i < x.length; i++) push(x[i], d);
    else for (const k in x) push(x[k], d);
  }
  return false;
}

const tooDeep = () => new ApiError(400, `JSON is nested deeper than ${MAX_DEPTH} levels`);

/**
 * JSON text parsed under the rules of docs/api.md, "Conventions": nesting, then syntax (400).
 * Parsed first and its depth checked on the value: the scan of the text (jsonDepth) cost about
 * 1.5 ms of a 700 KB variant list; it now runs only on text that does not parse, to tell a body
 * too deep from one malformed.
 */
export function parseJson(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    if (jsonDepth(text) > MAX_DEPTH) throw tooDeep();
    throw new ApiError(400, "request body is not valid JSON");
  }
  if (nestedDeeper(value, MAX_DEPTH)) throw tooDeep();
  return value;
}

// One decoder for the isolate: decode() without `stream` starts afresh every call, a refused body
// included. In a worker that only decoded 700 KB, profiled, one made per call took 0.7 ms to this
// one's 0.2; in the bench's requests the difference is within noise (bench/README.md, "This
// round (ninth)").
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/**
 * Reads a JSON body under the rules of docs/api.md, "Conventions": media type (415), size (413), nesting (400),
 * syntax (400). The parsed value is `c.var.body`; routes then check its shape themselves because
 * array bodies are validated item by item.
 */
export const jsonBody = createMiddleware<AppEnv>(async (c, next) => {
  const type = c.req.header("content-type");
  if (type !== undefined) {
    const media = type.split(";")[0].trim().toLowerCase();
    if (media !== "application/json") {
      throw new ApiError(415, "Content-Type must be application/json");
    }
  }
  const declared = Number(c.req.header("content-length"));
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  const buf = await readLimited(c.req.raw, declared);
  let text: string;
  try {
    text = UTF8.decode(buf);
  } catch {
    throw new ApiError(400, "request body is not valid UTF-8");
  }
  c.set("body", parseJson(text));
  await next();
});

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

type ItemParse<T> = { index: number; prefix: string; notices: string[] } & (
  | { ok: true; data: T }
  | { ok: false; errors: string[] }
);

/** Validates each item on its own (see parseItem for how paths are placed). */
export function parseItems<S extends z.ZodType>(schema: S, items: { value: unknown; prefix: string }[]) {
  return items.map(
    ({ value, prefix }, index): ItemParse<z.output<S>> => ({ index, prefix, ...parseItem(schema, value, prefix) }),
  );
}

// The RFC 7240 `Prefer` header. A client that sends `Prefer: return=minimal` asks for a short
// answer to a write instead of the full representation (docs/design.md, "The CPU budget and how it
// is met": the full answer of a 2,048-variant product is about 1 MB of JSON, and presenting and
// serialising it is most of such a write's CPU). The route that honours it answers with
// `Preference-Applied: return=minimal` and `Vary: Prefer`, so a cache never hands one form to a
// client that asked for the other.

/**
 * The preferences of a Prefer header (one or more, comma-separated), names lower-cased, values
 * unquoted. Parameters after `;` are kept out: none of the preferences used here has any. Only the
 * first occurrence of a preference counts (RFC 7240, section 2).
 */
export function preferences(header: string | null | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!header) return out;
  for (const part of splitOutsideQuotes(header, ",")) {
    const [pref] = splitOutsideQuotes(part, ";");
    const eq = pref.indexOf("=");
    const name = (eq < 0 ? pref : pref.slice(0, eq)).trim().toLowerCase();
    if (!name || out.has(name)) continue;
    let value = eq < 0 ? "" : pref.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
      value = value.slice(1, -1).replace(/\\(.)/g, "$1");
    }
    out.set(name, value);
  }
  return out;
}

function splitOutsideQuotes(s: string, sep: string): string[] {
  const parts: string[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (quoted && ch === "\\") i++;
    else if (ch === '"') quoted = !quoted;
    else if (!quoted && ch === sep) {
      parts.push(s.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(s.slice(start));
  return parts;
}

/** Whether the request asks for `return=minimal` (values compare case-insensitively). */
export const prefersMinimal = (header: string | null | undefined) =>
  preferences(header).get("return")?.toLowerCase() === "minimal";

/** Headers of an answer that honoured return=minimal. */
export const MINIMAL_APPLIED = { "Preference-Applied": "return=minimal", Vary: "Prefer" } as const;

type ProductLike = {
  product_id: number;
  sku: string | null;
  updated_at: string;
  variants: { variant_id: number; sku: string | null }[];
};

/**
 * A product in a minimal write answer: what a client needs to address what it wrote next time
 * (the ids, SKUs and the new updated_at), not the whole product, which it can GET.
 */
export function minimalProduct(p: ProductLike) {
  const variants = new Array<{ variant_id: number; sku: string | null }>(p.variants.length);
  for (let i = 0; i < p.variants.length; i++) {
    const v = p.variants[i];
    variants[i] = { variant_id: v.variant_id, sku: v.sku };
  }
  return { product_id: p.product_id, sku: p.sku, updated_at: p.updated_at, variants };
}
