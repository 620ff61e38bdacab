import { customers, orderLines, orders } from "../db/schema";
import { sqlNames } from "../platform/columns";
import type { Line } from "./catalog";
import { CREATABLE, CUSTOMER_FIELDS, isJson, PLAIN_LINE, valueAt } from "./fields";
import type { OrderInput } from "./schema";

// The customer, order and line INSERTs and the rows they read, derived from fields.ts.

const C = sqlNames(customers);
const O = sqlNames(orders);
const L = sqlNames(orderLines);

/** `alias.value` read as a column stores it: JSON text with `->` (a missing key is NULL), else `->>`. */
const read = (alias: string, name: string, json: boolean | undefined) =>
  `${alias}.value${json ? "->" : "->>"}'${name}'`;

const CUSTOMER = Object.values(CUSTOMER_FIELDS).map((f) => ({
  ...f,
  name: C[f.column],
  json: "json" in f && f.json,
  initial: "initial" in f ? f.initial : undefined,
}));
const MERGE = {
  replace: (n: string) => `${n} = excluded.${n}`,
  keep: (n: string) => `${n} = coalesce(excluded.${n}, ${C.$}.${n})`,
  max: (n: string) => `${n} = max(${C.$}.${n}, excluded.${n})`,
};

/** A secret key's order's customer row (CUSTOMER_FIELDS), found again by `emailKey`. */
export function customerRow(c: NonNullable<OrderInput["customer"]>, emailKey: string) {
  const row: Record<string, unknown> = { [C.emailKey]: emailKey };
  for (const f of CUSTOMER) row[f.name] = c[f.from] ?? f.initial ?? (f.json ? undefined : null);
  return row;
}

const MERGED = {
  replace: (_old: unknown, given: unknown) => given,
  keep: (old: unknown, given: unknown) => given ?? old,
  max: (old: unknown, given: unknown) => Math.max(Number(old), Number(given)),
};

/** ?1 the e-mail keys: the customers a request's orders name, as stored (what `customerWrites` compares). */
export const READ_CUSTOMERS = `SELECT * FROM ${C.$} WHERE ${C.emailKey} IN (SELECT value FROM json_each(?1))`;

/**
 * The customer rows of a request that make or change a customer (`stored`: READ_CUSTOMERS' rows):
 * UPSERT_CUSTOMERS merges each into the one before exactly as here, so a returning customer with
 * the same details costs no written row.
 */
export function customerWrites(rows: Record<string, unknown>[], stored: Record<string, unknown>[]) {
  const now = new Map(stored.map((r) => [r[C.emailKey] as string, r]));
  return rows.filter((row) => {
    const key = row[C.emailKey] as string;
    const old = now.get(key);
    if (!old) {
      now.set(key, row);
      return true;
    }
    const next: Record<string, unknown> = { ...old };
    let changed = false;
    for (const f of CUSTOMER) {
      // Stored JSON is SQLite's text of it; a given block is an object until the INSERT reads it.
      const given = f.json && row[f.name] !== undefined ? JSON.stringify(row[f.name]) : (row[f.name] ?? null);
      const value = MERGED[f.merge](old[f.name], given) ?? null;
      if (value !== (old[f.name] ?? null)) changed = true;
      next[f.name] = value;
    }
    if (changed) now.set(key, next);
    return changed;
  });
}

/** ?1 the customers' rows as one JSON array, ?2 now. */
export const UPSERT_CUSTOMERS = `
  INSERT INTO ${C.$} (${C.emailKey}, ${CUSTOMER.map((f) => f.name).join(", ")}, ${C.createdAt}, ${C.updatedAt})
  SELECT ${read("c", C.emailKey, false)}, ${CUSTOMER.map((f) => read("c", f.name, f.json)).join(", ")}, ?2, ?2
  FROM json_each(?1) AS c WHERE true
  ON CONFLICT (${C.emailKey}) DO UPDATE SET
    ${CUSTOMER.map((f) => MERGE[f.merge](f.name)).join(",\n    ")},
    ${C.updatedAt} = excluded.${C.updatedAt}`;

const CREATED = CREATABLE.map((f) => ({ ...f, name: O[f.column], json: isJson(f.kind) }));

/** An order's row as a create body gives it: a field left out is its `initial` or NULL (JSON ones stay out). */
export function orderRow(o: OrderInput): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const f of CREATED) {
    const v = valueAt(o, f.path);
    row[f.name] = f.json ? v : (v ?? ("initial" in f ? f.initial : null));
  }
  return row;
}

/** INSERT of the orders of ?1 (planned rows), ?2 now, in array order so ids follow the request's. */
export const INSERT_ORDERS = `
  INSERT INTO ${O.$} (${O.token}, ${O.status}, ${O.customerId}, ${O.subtotal}, ${O.discount}, ${O.total}, ${O.tax},
    ${O.createdAt}, ${O.updatedAt}, ${O.keyId}, ${O.storefront}, ${CREATED.map((f) => f.name).join(", ")})
  SELECT ${read("o", O.token, false)}, 'unpaid', (SELECT ${C.id} FROM ${C.$} WHERE ${C.emailKey} = ${read("o", C.emailKey, false)}),
    ${[O.subtotal, O.discount, O.total].map((n) => read("o", n, false)).join(", ")}, ${read("o", O.tax, true)},
    ?2, ?2, ${read("o", O.keyId, false)}, ${read("o", O.storefront, false)}, ${CREATED.map((f) => read("o", f.name, f.json)).join(", ")}
  FROM json_each(?1) AS o ORDER BY o.key
  RETURNING ${O.id}, ${O.token} AS new_order_token`;

const LINE = PLAIN_LINE.map((f) => ({ ...f, name: L[f.column], json: isJson(f.kind) }));

/** A line as the order_lines row it is stored as (position from 1), for the write batches. */
export function lineRow(l: Line, i: number): Record<string, unknown> {
  const row: Record<string, unknown> = { [L.position]: i + 1 };
  for (const f of LINE) row[f.name] = l[f.column as keyof Line];
  return row;
}

/**
 * The id of order number `l.value->>'order'` of the ?2 + 1 orders the batch just wrote: their ids
 * are consecutive and the highest (AUTOINCREMENT), so the largest id finds every line's order.
 */
export const NEW_ORDER_ID = `(SELECT max(${O.id}) FROM ${O.$}) - ?2 + (l.value->>'order')`;

/** INSERT of the line rows of ?1 (lineRow objects, one JSON array) into the order `orderId` (SQL). */
export const insertLines = (orderId: string) => `
  INSERT INTO ${L.$} (${L.orderId}, ${L.position}, ${LINE.map((f) => f.name).join(", ")})
  SELECT ${orderId}, ${read("l", L.position, false)}, ${LINE.map((f) => read("l", f.name, f.json)).join(", ")}
  FROM json_each(?1) AS l`;
