import { getTableColumns, getTableName, type Table } from "drizzle-orm";

// SQL written as text (D1 statements over json_each, which Drizzle's query builder cannot
// express) names its tables and columns through the Drizzle schema with these, so that renaming
// a column's key in src/db/schema/ is a type error here, and renaming its SQL name changes
// every statement with it.

/** A table's SQL names: `$` the table's, and each column key's (`n.createdAt` is "created_at"). */
export type SqlNames<T extends Table> = { readonly $: string } & {
  readonly [K in keyof T["_"]["columns"]]: string;
};

/** The SQL names of `table` and its columns, for statements written as text. */
export function sqlNames<T extends Table>(table: T): SqlNames<T> {
  const out: Record<string, string> = { $: getTableName(table) };
  for (const [key, column] of Object.entries(getTableColumns(table))) out[key] = column.name;
  return out as SqlNames<T>;
}

/** The column of option slot `n` (1 to 5) of a table with option1 ... option5 (variants, order lines). */
export const optionColumn = (t: Record<`option${1 | 2 | 3 | 4 | 5}`, string>, n: number) =>
  t[`option${n}` as `option${1 | 2 | 3 | 4 | 5}`];
