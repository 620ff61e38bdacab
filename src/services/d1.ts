import { getTableColumns } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { DB } from "../db/client";

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
