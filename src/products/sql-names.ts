import { getTableColumns, getTableName } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";

// The product writes' statements are SQL text over JSON lists (one bound value, whatever the
// number of variants), which Drizzle's builders cannot express; they name tables and columns
// through the schema instead (src/db/schema.ts): renaming a column there renames it here, and
// removing one is a type error where a statement uses it.

/** A table's SQL name (`$`) and each column's, by its schema property. */
export function sqlNames<T extends SQLiteTable>(table: T): { [K in keyof T["_"]["columns"]]: string } & { $: string } {
  const out: Record<string, string> = { $: getTableName(table) };
  for (const [key, col] of Object.entries(getTableColumns(table))) out[key] = col.name;
  return out as { [K in keyof T["_"]["columns"]]: string } & { $: string };
}

/** The column of option slot `n` (1 to 5) of a table with option1 ... option5. */
export const optionColumn = (t: Record<`option${1 | 2 | 3 | 4 | 5}`, string>, n: number) =>
  t[`option${n}` as `option${1 | 2 | 3 | 4 | 5}`];
