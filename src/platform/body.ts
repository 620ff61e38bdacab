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
  if (declared > MAX_BODY_BYTES) throw new ApiError(413, "request body is larger than 1 MiB");
  const buf = await readLimited(c.req.raw, MAX_BODY_BYTES, declared);
  let text: string;
  try {
    text = UTF8.decode(buf);
  } catch {
    throw new ApiError(400, "request body is not valid UTF-8");
  }
  c.set("body", parseJson(text));
  await next();
});
