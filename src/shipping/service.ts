import { and, asc, eq, sql } from "drizzle-orm";
import { shippingMethods } from "../db/schema";
import { sqlNames } from "../platform/columns";
import { type DB, rowMapper, stmt } from "../platform/d1";
import { toMoney } from "../products/present";
import { MAX_METHODS, type MethodInput, type MethodPatch } from "./schema";

// The store's shipping methods (docs/orders.md, "Shipping methods"): managed by secret keys, listed
// to storefronts, and what a storefront's order is charged for shipping (src/orders/storefront.ts).

export type MethodRow = typeof shippingMethods.$inferSelect;

export function present(m: MethodRow) {
  return {
    id: m.id,
    name: m.name,
    price: toMoney(m.price),
    free_over: m.freeOver === null ? null : toMoney(m.freeOver),
    countries: JSON.parse(m.countries) as string[],
    visible: m.visible === 1,
    created_at: new Date(m.createdAt).toISOString(),
    updated_at: new Date(m.updatedAt).toISOString(),
  };
}

/** Every method, or only the visible ones (what a storefront sees); for a country, those that ship there. */
export async function listMethods(db: DB, opts: { visibleOnly: boolean; country?: string }) {
  const where = and(
    opts.visibleOnly ? eq(shippingMethods.visible, 1) : undefined,
    opts.country === undefined
      ? undefined
      : sql`(${shippingMethods.countries} = '[]' OR EXISTS (SELECT 1 FROM json_each(${shippingMethods.countries}) WHERE value = ${opts.country}))`,
  );
  return db.select().from(shippingMethods).where(where).orderBy(asc(shippingMethods.id));
}

export const toMethod = rowMapper(shippingMethods);

// One statement: the count and the insert cannot interleave with another create.
const S = sqlNames(shippingMethods);
const CREATE = `INSERT INTO ${S.$} (${S.name}, ${S.price}, ${S.freeOver}, ${S.countries}, ${S.visible}, ${S.createdAt}, ${S.updatedAt})
  SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?6 WHERE (SELECT count(*) FROM ${S.$}) < ${MAX_METHODS}
  RETURNING *`;

/** Creates a method; null at MAX_METHODS. */
export async function createMethod(db: DB, m: MethodInput, now: number): Promise<MethodRow | null> {
  const countries = JSON.stringify(m.countries ?? []);
  const row = await stmt(db, CREATE, m.name, m.price, m.free_over ?? null, countries, m.visible ?? 1, now).first();
  return row && toMethod(row);
}

/** Changes the fields given; null when there is no such method. */
export async function updateMethod(db: DB, id: number, m: MethodPatch, now: number): Promise<MethodRow | null> {
  // A field left out is undefined here, which Drizzle's SET leaves out.
  const { free_over: freeOver, countries, ...same } = m;
  const set = { ...same, freeOver, countries: countries && JSON.stringify(countries), updatedAt: now };
  const [row] = await db.update(shippingMethods).set(set).where(eq(shippingMethods.id, id)).returning();
  return row ?? null;
}

/** Deletes a method (past orders keep their copy of its id, name and price); false when there is none. */
export async function deleteMethod(db: DB, id: number): Promise<boolean> {
  const rows = await db.delete(shippingMethods).where(eq(shippingMethods.id, id)).returning({ id: shippingMethods.id });
  return rows.length > 0;
}
