import { getTableColumns } from "drizzle-orm";
import { type DrizzleD1Database, drizzle } from "drizzle-orm/d1";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { createMiddleware } from "hono/factory";
import { products, staleReads } from "../db/schema";
import type { AppEnv } from "../env";
import { sqlNames } from "./columns";
import { ApiError, changedMeanwhile } from "./errors";

// D1 for every resource: Drizzle over the request's session, and the statements written as text.

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
const utf8Length = (s: string) => (NON_ASCII.test(s) ? new TextEncoder().encode(s).length : s.length);

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
