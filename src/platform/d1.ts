import { getTableColumns } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { DB } from "../db/client";
import { products, staleReads } from "../db/schema";
import { sqlNames } from "./columns";
import { changedMeanwhile } from "./errors";

// The write paths batch INSERT/UPDATE ... SELECT FROM json_each(?) statements, which Drizzle's
// D1 batch cannot carry (it only batches its own builders), so they go to D1 directly and their
// rows are mapped back to the Drizzle row types here.

export const stmt = (db: DB, text: string, ...params: unknown[]) => db.$client.prepare(text).bind(...params);

export async function runBatch(db: DB, stmts: D1PreparedStatement[]) {
  return db.$client.batch<Record<string, unknown>>(stmts);
}

/**
 * A batch whose constraints are its checks (the writes planned in SQL): its results, or undefined
 * when a constraint refused it, so nothing was written and the caller takes the path that words
 * the refusal. Any other failure is thrown.
 */
export async function runChecked(db: DB, stmts: D1PreparedStatement[]) {
  try {
    return await runBatch(db, stmts);
  } catch (e) {
    if (isConstraintError(e)) return undefined;
    throw e;
  }
}

/**
 * SQL: the rows of the subquery `alias` as ONE JSON text, a column named `rows` holding an array
 * of objects keyed by `columns`, in `order`. For large reads of many narrow rows: D1's binding
 * builds an object per row with a property per column in JavaScript, the largest part of a full
 * products page's CPU, while `JSON.parse` of the one text is native (4.4 -> 3.4 ms median on that
 * page, bench/README.md). The objects have the keys and value types of D1's rows (stored JSON
 * texts stay strings, except the `nested` columns: JSON texts built as values), so code reading rows is unchanged. Measure before using it elsewhere: on
 * the orders page, whose rows carry JSON texts (addresses, tax) that get escaped into the one text
 * and unescaped again, it was slower than D1's objects.
 */
export const asJsonRows = (columns: readonly string[], alias: string, order: string, nested: readonly string[] = []) =>
  `coalesce(json_group_array(json_object(${columns
    .map((c) => `'${c}', ${nested.includes(c) ? `json(${alias}.${c})` : `${alias}.${c}`}`)
    .join(", ")}) ORDER BY ${order}), '[]') AS rows`;

/** The rows of an asJsonRows statement's result. */
export const jsonRows = <T = Record<string, unknown>>(r: D1Result<{ rows: string }> | undefined): T[] =>
  r ? (JSON.parse(r.results[0].rows) as T[]) : [];

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
