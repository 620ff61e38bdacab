import { getTableColumns } from "drizzle-orm";
import { type DrizzleD1Database, drizzle } from "drizzle-orm/d1";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { products, staleReads } from "../db/schema";
import type { AppEnv } from "../env";
import { sqlNames } from "./columns";
import { ApiError, changedMeanwhile } from "./errors";
import swapModule from "./quotes.wasm";

// D1 for every resource: Drizzle over the request's session, and the statements written as text;
// at the end, the JSON text SQLite builds, carried from D1 into the answer.

/**
 * Drizzle over one request's D1 session (docs/operations.md, "Read replicas"). `$client` runs the
 * raw statements below in that same session; `$binding` is the D1 binding itself, the stable key
 * for what an isolate keeps across requests.
 */
export type DB = DrizzleD1Database & { $client: D1Database | D1DatabaseSession; $binding: D1Database };

// One Drizzle wrapper per D1 binding object for callers without a session (the cron): building it
// is cheap but not free, and a Worker isolate serves many requests with the same binding.
const cache = new WeakMap<D1Database, DB>();

export function getDb(d1: D1Database, session?: D1DatabaseSession): DB {
  if (session) return Object.assign(drizzle(session as unknown as D1Database), { $binding: d1 }) as DB;
  let db = cache.get(d1);
  if (!db) {
    db = Object.assign(drizzle(d1), { $binding: d1 }) as DB;
    cache.set(d1, db);
  }
  return db;
}

export const BOOKMARK_HEADER = "x-d1-bookmark";

// What D1 issues: four dash-separated hex groups (8-8-8-32). Anything else was not sent by us, and
// a session opened on it would fail inside D1 or silently promise nothing.
const BOOKMARK = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;

/**
 * One D1 session per /v1 request (docs/operations.md, "Read replicas"). Reads start where the
 * client's `x-d1-bookmark` says (data at least that fresh), or at any replica when it sends none;
 * writes go to the primary. The answer carries the session's latest bookmark, which the client
 * sends back to read its own writes.
 */
export const d1Session = createMiddleware<AppEnv>(async (c, next) => {
  const sent = c.req.header(BOOKMARK_HEADER)?.trim();
  if (sent !== undefined && !BOOKMARK.test(sent)) {
    throw new ApiError(400, `invalid ${BOOKMARK_HEADER} header: send back one this service answered with`);
  }
  const read = c.req.method === "GET" || c.req.method === "HEAD";
  const session = c.env.DB.withSession(read ? (sent ?? "first-unconstrained") : "first-primary");
  c.set("db", getDb(c.env.DB, session));
  await next();
  // A request answered before any query (a validation error) hands back what it was given.
  const bookmark = session.getBookmark?.() ?? sent;
  if (bookmark) c.res.headers.set(BOOKMARK_HEADER, bookmark);
});

// The write paths batch INSERT/UPDATE ... SELECT FROM json_each(?) statements, which Drizzle's
// D1 batch cannot carry (it only batches its own builders), so they go to D1 directly and their
// rows are mapped back to the Drizzle row types here.

export const stmt = (db: DB, text: string, ...params: unknown[]) => db.$client.prepare(text).bind(...params);

export async function runBatch(db: DB, stmts: D1PreparedStatement[]) {
  return db.$client.batch<Record<string, unknown>>(stmts);
}

/** Maps a raw D1 row (snake_case column names) to the table's Drizzle row type. */
export function rowMapper<T extends SQLiteTable>(table: T) {
  const entries = Object.entries(getTableColumns(table));
  const names = entries.map(([, col]) => col.name);
  const keys = entries.map(([key]) => key);
  return (row: Record<string, unknown>) => {
    const out: Record<string, unknown> = {};
    for (let i = 0; i < keys.length; i++) out[keys[i]] = row[names[i]];
    return out as T["$inferSelect"];
  };
}

// D1 reports a failed constraint as an Error whose message carries SQLite's text. A batch that
// fails this way was rolled back whole (a batch is one transaction), so it is safe to plan again.
export function isConstraintError(e: unknown): boolean {
  return (
    e instanceof Error && /constraint failed/i.test(`${e.message} ${String((e as { cause?: unknown }).cause ?? "")}`)
  );
}

const S = sqlNames(staleReads);
const P = sqlNames(products);

/**
 * Fails the batch it is in when any of `read` (products with the updated_at the request saw) has
 * changed or gone since, through the always-false CHECK of stale_reads (src/db/schema/catalog.ts).
 */
export const STALE_READ_GUARD = `
  INSERT INTO ${S.$} (${S.productId})
  SELECT j.value->>'id' FROM json_each(?1) AS j LEFT JOIN ${P.$} AS p ON p.${P.id} = j.value->>'id'
  WHERE p.${P.id} IS NULL OR p.${P.updatedAt} <> j.value->>'updated_at'`;

/**
 * D1 refuses a string value over 1,000,000 bytes, and a request of many lines or variants can bind
 * more JSON than that. Rows go as JSON arrays of at most MAX_JSON_BYTES each, one statement per
 * chunk: one chunk (so a constant number of statements) for all but the largest requests.
 */
export const MAX_JSON_BYTES = 900_000;

const NON_ASCII = /[\u0080-\uffff]/;
const UTF8 = new TextEncoder();
/** UTF-8 bytes of a text, as D1 and SQLite's length(CAST(... AS BLOB)) count them. */
export const utf8Length = (s: string) => (NON_ASCII.test(s) ? UTF8.encode(s).length : s.length);

/**
 * Whether a JSON text can be bound as one value (see MAX_JSON_BYTES); `atMost`, a known bound of
 * its UTF-8 size, spares measuring it.
 */
export const fitsOneValue = (json: string, atMost = Number.POSITIVE_INFINITY) =>
  atMost <= MAX_JSON_BYTES || json.length <= MAX_JSON_BYTES / 3 || utf8Length(json) <= MAX_JSON_BYTES;

export const jsonChunks = (rows: readonly unknown[], max = MAX_JSON_BYTES): string[] =>
  textChunks(
    rows.map((row) => JSON.stringify(row)),
    max,
  );

/** jsonChunks of rows already written as JSON text, one a row. */
export function textChunks(rows: readonly string[], max = MAX_JSON_BYTES): string[] {
  const chunks: string[] = [];
  let parts: string[] = [];
  let size = 2;
  for (const json of rows) {
    const bytes = utf8Length(json) + 1;
    if (parts.length && size + bytes > max) {
      chunks.push(`[${parts.join(",")}]`);
      parts = [];
      size = 2;
    }
    parts.push(json);
    size += bytes;
  }
  chunks.push(`[${parts.join(",")}]`);
  return chunks;
}

/**
 * Plans per request before a lost race is answered 503. Each attempt costs at most two D1
 * queries, so five stay well inside the free plan's 50 per request.
 */
export const MAX_ATTEMPTS = 5;

/**
 * After a write batch failed on a constraint (rolled back whole) because another request changed
 * what it read: waits, or gives up with a 503 that says nothing was written. The wait is
 * exponential with full jitter (a random time up to 4, 8, 16, 32 ms), so writers of the same rows
 * spread out instead of retrying in lockstep and colliding again. Waiting costs no CPU.
 */
export async function afterLostRace(attempt: number, what: string) {
  if (attempt >= MAX_ATTEMPTS) throw changedMeanwhile(what);
  await new Promise((resolve) => setTimeout(resolve, Math.random() * 2 ** (attempt + 1)));
}

// ---------------------------------------------------------------------------------------------
// Large JSON answers that SQLite builds travel from D1 with their double quotes carried as
// backticks (docs/design.md, "Answers from D1"). D1's binding hands the
// Worker each text inside its own JSON answer, where every `"` of the text is written `\"`;
// JSON.parse unescaping those was most of a large read's CPU (4.3 of 6.3 ms on the products page
// of 500 with 2.2 MB of answer). A backtick needs no escape there, and SQLite's JSON has none
// outside strings, so: SQLite writes the text's own backticks as `\u0060` (the same string in
// JSON) and its double quotes as backticks; the Worker turns them back while writing the answer's
// bytes, 16 at a time in WebAssembly (src/scripts/quotes-wasm.mjs): about 0.5 ms for 2.2 MB. A
// JavaScript loop did it as fast only once the JIT had compiled it: interpreted, 40 ms. The
// replace() passes cost D1 about 3 ms a megabyte: GET /v1/products/{id}, one product, spends the
// CPU instead and answers the text as it comes.

/** SQL: the JSON text `expr` as carried (double quotes as backticks, its backticks escaped). */
export const carriedSql = (expr: string) => `replace(replace(${expr}, char(96), '\\u0060'), char(34), char(96))`;

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
