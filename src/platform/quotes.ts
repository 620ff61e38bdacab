import swapModule from "./quotes.wasm";

// Large JSON answers that SQLite builds travel from D1 with their double quotes carried as
// backticks (src/docs/performance.md, "Quotes carried as backticks"). D1's binding hands the
// Worker each text inside its own JSON answer, where every `"` of the text is written `\"`;
// JSON.parse unescaping those was most of a large read's CPU (4.3 of 6.3 ms on the products page
// of 500 with 2.2 MB of answer). A backtick needs no escape there, and SQLite's JSON has none
// outside strings, so: SQLite writes the text's own backticks as `\u0060` (the same string in
// JSON) and its double quotes as backticks; the Worker turns them back while writing the answer's
// bytes, 16 at a time in WebAssembly (src/scripts/quotes-wasm.mjs): about 0.5 ms for 2.2 MB. A
// JavaScript loop did it as fast only once the JIT had compiled it: interpreted, 40 ms.

/** SQL: the JSON text `expr` as carried (double quotes as backticks, its backticks escaped). */
export const carriedSql = (expr: string) => `replace(replace(${expr}, char(96), '\\u0060'), char(34), char(96))`;

/** JSON text built in the Worker, made safe to join with carried text: its backticks escaped. */
export const escapeBackticks = (json: string) => (json.includes("`") ? json.replaceAll("`", "\\u0060") : json);

// Instantiated at the first answer: startup, and requests that answer no carried text, pay nothing.
let instance: WebAssembly.Instance | undefined;
let memory: WebAssembly.Memory;
let swap: (length: number) => void;
const encoder = new TextEncoder();
const PAGE = 65_536;

/**
 * The UTF-8 bytes of an answer joined from carried texts (and JSON whose backticks were escaped),
 * every backtick a double quote again.
 */
export function answerBytes(text: string): Uint8Array<ArrayBuffer> {
  if (!instance) {
    instance = new WebAssembly.Instance(swapModule);
    memory = instance.exports.memory as WebAssembly.Memory;
    swap = instance.exports.swap as (length: number) => void;
  }
  // UTF-8 takes at most 3 bytes per UTF-16 unit; the swap reads up to 15 bytes past the end.
  const room = text.length * 3 + 16;
  if (room > memory.buffer.byteLength) memory.grow(Math.ceil((room - memory.buffer.byteLength) / PAGE));
  const { written } = encoder.encodeInto(text, new Uint8Array(memory.buffer, 0, room));
  swap(written);
  return new Uint8Array(memory.buffer, 0, written).slice();
}

/** An answer's carried text as the JSON text it stands for (for tests and small reads). */
export const uncarried = (text: string) => new TextDecoder().decode(answerBytes(text));
