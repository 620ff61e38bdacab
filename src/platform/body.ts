import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { ApiError } from "./errors";

export const MAX_BODY_BYTES = 1024 * 1024;
export const MAX_DEPTH = 32;

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
 * The body's bytes, refusing with 413 once more than `limit` have arrived. A body without
 * Content-Length (chunked) is read chunk by chunk (reading a large one so cost about 1.8 ms of CPU
 * for 700 KB in workerd, bench/README.md), so an endless or huge one never gets buffered
 * whole: `arrayBuffer()` would hold all of it in the isolate's memory before its size is known.
 */
async function readLimited(req: Request, limit: number, declared: number): Promise<Uint8Array> {
  if (!req.body) return new Uint8Array();
  // A declared length is the framing the runtime enforces: such a body cannot pass it, so it is
  // read natively in one piece (a 700 KB sync arrives in dozens of chunks otherwise).
  if (Number.isSafeInteger(declared) && declared <= limit && req.headers.has("content-length")) {
    const whole = new Uint8Array(await req.arrayBuffer());
    if (whole.byteLength > limit) throw new ApiError(413, "request body is larger than 1 MiB");
    return whole;
  }
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await drain(reader, size);
      throw new ApiError(413, "request body is larger than 1 MiB");
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

/** JSON text parsed under the rules of docs/api.md, "Conventions": nesting, then syntax (400). */
export function parseJson(text: string): unknown {
  if (jsonDepth(text) > MAX_DEPTH) throw new ApiError(400, `JSON is nested deeper than ${MAX_DEPTH} levels`);
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError(400, "request body is not valid JSON");
  }
}

/**
 * A product body's variant list kept as its text (src/products/raw-list.ts): which list, its text,
 * and the whole body's text, which the request falls back to when the list is not taken as it is.
 */
export type RawList = {
  key: "sync" | "add" | "update";
  text: string;
  full: string;
  /** The body's size in UTF-8 bytes, a bound of the list's own (no need to measure it again). */
  bytes: number;
};

/**
 * Bodies below this size are parsed whole: a list kept as text pays off only when it is long. At
 * 32 KiB an update of 2,048 variants by id (about 60 KB) goes as text: medians of 7.7 and 10.0 ms
 * became 4.5 and 5.2, with no more D1 time (bench/README.md, "This round (seventh)").
 */
export const RAW_LIST_MIN_CHARS = 32 * 1024;
const LIST_START = /"variants"\s*:\s*\{\s*"(sync|add|update)"\s*:\s*\[/;
const SPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

/** Index of the last character of `text` before `from` that is not JSON whitespace. */
function lastNonSpace(text: string, from: number) {
  let i = from;
  while (i >= 0 && SPACE.has(text.charCodeAt(i))) i--;
  return i;
}

/**
 * The body with its variant list left out, when the list is the body's last value
 * (`{..., "variants": {"sync": [...]}}`): the rest parsed as usual with the list standing empty,
 * and the list's text. Where the list starts and ends is found in the text, then proven: a
 * one-time token put in its place must come out of JSON.parse as the body's `variants.<list>`, and
 * SQLite takes the list only if it is one JSON array on its own (src/products/raw-list.ts), so a
 * body that is not so shaped is parsed whole (undefined here).
 */
export function splitList(
  text: string,
  bytes = text.length * 3,
): { body: Record<string, unknown>; list: RawList } | undefined {
  if (text.length < RAW_LIST_MIN_CHARS) return undefined;
  const m = LIST_START.exec(text);
  if (!m) return undefined;
  const start = m.index + m[0].length - 1;
  const body = lastNonSpace(text, text.length - 1);
  const variants = lastNonSpace(text, body - 1);
  const end = lastNonSpace(text, variants - 1);
  if (text[body] !== "}" || text[variants] !== "}" || text[end] !== "]" || end <= start) return undefined;
  const token = `\u0001list ${crypto.randomUUID()}`;
  const rest = `${text.slice(0, start)}${JSON.stringify(token)}${text.slice(end + 1)}`;
  if (jsonDepth(rest) > MAX_DEPTH) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(rest);
  } catch {
    return undefined;
  }
  const key = m[1] as RawList["key"];
  const lists = (parsed as { variants?: unknown } | null)?.variants;
  if (typeof lists !== "object" || lists === null || (lists as Record<string, unknown>)[key] !== token) {
    return undefined;
  }
  (lists as Record<string, unknown>)[key] = [];
  return {
    body: parsed as Record<string, unknown>,
    list: { key, text: text.slice(start, end + 1), full: text, bytes },
  };
}

// One decoder for the isolate: decode() without `stream` starts afresh every call, a refused body
// included. In a worker that only decoded 700 KB, profiled, one made per call took 0.7 ms to this
// one's 0.2; in the bench's requests the difference is within noise (bench/README.md, "This
// round (ninth)").
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/**
 * Reads a JSON body under the rules of docs/api.md, "Conventions": media type (415), size (413), nesting (400),
 * syntax (400). The parsed value is `c.var.body`; routes then check its shape themselves because
 * array bodies are validated item by item. With `lists`, a long product body's variant list may
 * be kept as text (splitList): `c.var.rawList`, the list standing empty in `c.var.body`; the route
 * must then either write it as text or parse `rawList.full`.
 */
const readBody = (lists: boolean) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const type = c.req.header("content-type");
    if (type !== undefined) {
      const media = type.split(";")[0].trim().toLowerCase();
      if (media !== "application/json") {
        throw new ApiError(415, "Content-Type must be application/json");
      }
    }
    const declared = Number(c.req.header("content-length"));
    if (declared > MAX_BODY_BYTES) throw new ApiError(413, "request body is larger than 1 MiB");
    const buf = await readLimited(c.req.raw, MAX_BODY_BYTES, declared);
    let text: string;
    try {
      text = UTF8.decode(buf);
    } catch {
      throw new ApiError(400, "request body is not valid UTF-8");
    }
    // An Idempotency-Key's hash is of the parsed body (src/platform/idempotency.ts): parsed whole.
    const split = lists && c.req.header("idempotency-key") === undefined ? splitList(text, buf.byteLength) : undefined;
    if (split) {
      c.set("body", split.body);
      c.set("rawList", split.list);
    } else c.set("body", parseJson(text));
    await next();
  });

export const jsonBody = readBody(false);
/** jsonBody for the product writes, which can take a long variant list as text. */
export const productBody = readBody(true);
