import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import swapModule from "./quotes.wasm";

// Large JSON answers that SQLite builds travel from D1 with their double quotes carried as
// backticks (docs/design.md, "Answers from D1"). D1's binding hands the
// Worker each text inside its own JSON answer, where every `"` of the text is written `\"`;
// JSON.parse unescaping those was most of a large read's CPU (4.3 of 6.3 ms on the products page
// of 500 with 2.2 MB of answer). A backtick needs no escape there, and SQLite's JSON has none
// outside strings, so: SQLite writes the text's own backticks as `\u0060` (the same string in
// JSON) and its double quotes as backticks; the Worker turns them back while writing the answer's
// bytes, 16 at a time in WebAssembly (src/scripts/quotes-wasm.mjs): about 0.5 ms for 2.2 MB. A
// JavaScript loop did it as fast only once the JIT had compiled it: interpreted, 40 ms.

/** SQL: the JSON text `expr` as carried (double quotes as backticks, its backticks escaped). */
export const carriedSql = (expr: string) => `replace(replace(${expr}, char(96), '\\u0060'), char(34), char(96))`;

/** The value of a carried JSON text, for the rare answer that mixes it with presented values. */
export const uncarried = (text: string): unknown => JSON.parse(text.replaceAll("`", '"'));

/** JSON text built in the Worker, made safe to join with carried text: its backticks escaped. */
export const escapeBackticks = (json: string) => (json.includes("`") ? json.replaceAll("`", "\\u0060") : json);

// Instantiated at the first answer: startup, and requests that answer no carried text, pay nothing.
let instance: WebAssembly.Instance | undefined;
let memory: WebAssembly.Memory;
/** Every backtick of the first `length` bytes a double quote. */
let swap: (length: number) => void;
const encoder = new TextEncoder();
const PAGE = 65_536;

/** Memory of at least `bytes`: growing detaches earlier views, never the bytes written. */
function ensure(bytes: number) {
  if (bytes > memory.buffer.byteLength) memory.grow(Math.ceil((bytes - memory.buffer.byteLength) / PAGE));
}

/**
 * Writes `texts`, one after another, as UTF-8 into the module's memory and turns their backticks
 * into double quotes: their byte count. Texts joined in JavaScript would be flattened into one copy first (a megabyte
 * for a large product, allocated and written only to be encoded).
 */
function encoded(texts: readonly string[]): number {
  if (!instance) {
    instance = new WebAssembly.Instance(swapModule);
    memory = instance.exports.memory as WebAssembly.Memory;
    swap = instance.exports.swap as typeof swap;
  }
  let units = 0;
  for (const t of texts) units += t.length;
  // Memory only grows, for the isolate's life: sized for ASCII first (a byte per UTF-16 unit),
  // and for the rest at UTF-8's worst (3 bytes a unit) only where the text stops fitting. A
  // pass reads up to 15 bytes past the end: room for 16 more.
  ensure(units + 16);
  let written = 0;
  for (let i = 0; i < texts.length; i++) {
    const text = texts[i];
    units -= text.length; // what the texts after this one still need, at a byte a unit
    const r = encoder.encodeInto(text, new Uint8Array(memory.buffer, written, text.length));
    written += r.written;
    if (r.read < text.length) {
      const rest = text.length - r.read;
      ensure(written + rest * 3 + units + 16);
      written += encoder.encodeInto(text.slice(r.read), new Uint8Array(memory.buffer, written, rest * 3)).written;
    }
  }
  swap(written);
  return written;
}

/**
 * The UTF-8 bytes of an answer joined from carried texts (and JSON whose backticks were escaped),
 * every backtick a double quote again. Given as its parts, in order (each a whole text: none ends
 * inside a character's UTF-16 pair), it is never joined. The bytes are a view of the module's
 * memory, good until the next text is encoded: a Response copies its body's bytes when built (as
 * the Fetch standard says, and test/quotes.test.ts holds), so carriedJson hands them over at once
 * and no megabyte is copied out first.
 */
export function answerBytes(text: string | readonly string[]): Uint8Array<ArrayBuffer> {
  const texts = typeof text === "string" ? [text] : text;
  const bytes = encoded(texts); // first: it may instantiate or grow the memory
  return new Uint8Array(memory.buffer, 0, bytes);
}

/** A JSON answer of carried text: its bytes (answerBytes) with the JSON media type. */
export const carriedJson = (
  c: Context,
  text: string | readonly string[],
  status: ContentfulStatusCode = 200,
  headers: Record<string, string> = {},
) => c.body(answerBytes(text), status, { "Content-Type": "application/json", ...headers });

/** Bytes of memory the swap holds (for tests: an ASCII answer must not reserve UTF-8's worst case). */
export const answerMemoryBytes = () => (instance ? memory.buffer.byteLength : 0);
