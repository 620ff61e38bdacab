import type { DB } from "../../db/client";
import { products, variants } from "../../db/schema";
import { optionColumn, sqlNames } from "../../platform/columns";
import { stmt } from "../../platform/d1";
import { outboxStatement, type PendingEvent } from "../../webhooks/outbox";
import { SCALAR_FIELDS } from "../fields";
import { productReads } from "../read";
import { STRUCTURE_GUARD } from "./guard";
import type { Plan } from "./plan";

// The write batch of a PUT round: fixed statements for all of its plans (docs/products.md, "Updating products").

// Tables and columns through the schema (src/platform/columns.ts); a row's keys are the plan's (./states.ts).
const P = sqlNames(products);
const V = sqlNames(variants);

/** `col = the JSON row's value for key when it has the key (null clears), else the current value`. */
const keep = (table: string, key: string, col = key, json = false) =>
  `${col} = iif(json_type(j.value, '$.${key}') IS NULL, ${table}.${col}, j.value${json ? "->" : "->>"}'${key}')`;

// A row's `adjust` (docs/stock.md) moves the count as the batch finds
// it, never a count the Worker read: concurrent sales and adjustments all take effect.
const adjusted = (key: string) => (key === "stock" || key === "qty" ? " + coalesce(j.value->>'adjust', 0)" : "");

// SQLite checks UNIQUE per row during a multi-row UPDATE, so variants whose SKU changes first
// get one no other row can have (none); swaps between variants then succeed.
const PARK_VARIANTS = `
  UPDATE ${V.$} SET ${V.sku} = NULL
  FROM json_each(?1) AS j WHERE ${V.$}.${V.id} = j.value->>'id' AND j.value->>'sku'`;

// The product's own scalar fields are stored under their API names (src/products/fields.ts).
const PRODUCT_SCALARS = SCALAR_FIELDS;
// updated_at always moves forward on every write, even two in one millisecond (the orders'
// catalog cache and clients' conditional reads rely on it); the guard no longer reads it.
const PRODUCT_SET = `${PRODUCT_SCALARS.map((c) => keep(P.$, c) + adjusted(c)).join(", ")},
    ${keep(P.$, "images", P.images, true)}, ${keep(P.$, "option_names", P.optionNames, true)},
    ${keep(P.$, "slug", P.slug)}, ${keep(P.$, "categories", P.categories, true)},
    ${P.metadata} = CASE WHEN json_type(j.value, '$.metadata') IS NULL THEN ${P.$}.${P.metadata}
      WHEN json_type(j.value, '$.metadata') = 'object' THEN j.value->'metadata' ELSE NULL END`;
const UPDATE_PRODUCTS = `
  UPDATE ${P.$} SET ${PRODUCT_SET}, ${P.updatedAt} = max(?2, ${P.$}.${P.updatedAt} + 1)
  FROM json_each(?1) AS j WHERE ${P.$}.${P.id} = j.value->>'id'`;
/**
 * The same, for product rows (?1) whose batch moves updated_at in a statement of its own: the
 * fields a variant list's SQL plan writes beside it (./variants-sql.ts).
 */
export const UPDATE_PRODUCT_FIELDS = `
  UPDATE ${P.$} SET ${PRODUCT_SET} FROM json_each(?1) AS j WHERE ${P.$}.${P.id} = j.value->>'id'`;

/** A plan's variant row keys (./states.ts) and the columns they set. */
const VARIANT_SCALARS: [string, string][] = [
  ["sku", V.sku],
  ...[1, 2, 3, 4, 5].map((n): [string, string] => [`option${n}_value`, optionColumn(V, n)]),
  ["price", V.price],
  ["before_price", V.beforePrice],
  ["purchase_price", V.purchasePrice],
  ["qty", V.qty],
  ["qty_location", V.qtyLocation],
  ["gtin", V.gtin],
  ["supplier_sku", V.supplierSku],
  ["weight", V.weight],
  ["visible", V.visible],
  ["position", V.position],
];
// no_minus is set with qty in the same row update, so the stock floor CHECK sees the new pair.
const UPDATE_VARIANTS = `
  UPDATE ${V.$} SET ${VARIANT_SCALARS.map(([key, col]) => keep(V.$, key, col) + adjusted(key)).join(", ")},
    ${keep(V.$, "images", V.images, true)},
    ${V.noMinus} = (SELECT ${P.$}.${P.disableMinusqty} FROM ${P.$} WHERE ${P.$}.${P.id} = ${V.$}.${V.productId}),
    ${V.updatedAt} = ?2
  FROM json_each(?1) AS j WHERE ${V.$}.${V.id} = j.value->>'id'`;

// The variants this request did not touch follow their product's disable_minusqty.
const SYNC_NO_MINUS = `
  UPDATE ${V.$} SET ${V.noMinus} = p.${P.disableMinusqty} FROM ${P.$} AS p
  WHERE p.${P.id} = ${V.$}.${V.productId} AND ${V.$}.${V.noMinus} <> p.${P.disableMinusqty}
    AND ${V.$}.${V.productId} IN (SELECT value FROM json_each(?1))`;

/**
 * The one write batch of a round, for all its products: the only place it is assembled, so
 * anything that must commit with the update (an idempotency record) is added here. Order
 * matters: parking frees SKUs before anything takes them,
 * the product row (with disable_minusqty) is written before its variants copy the flag, the
 * product.update events commit with the change, and the last two statements read the result back
 * so the answer needs no further round trip.
 */
export function writeBatch(db: DB, plans: Plan[], now: number, events: PendingEvent[], reads = productReads) {
  return [
    ...planWrites(db, plans, now),
    outboxStatement(db, events, now),
    ...reads(db, `p.${P.id} IN (SELECT value FROM json_each(?1))`, JSON.stringify(plans.map((p) => p.productId))),
  ];
}

/**
 * The plans' guard and writes, without the events and the read back: also the part of a round of
 * the SQL plan that its items without a variant list take (./variants-sql.ts, writeRound).
 */
export function planWrites(db: DB, plans: Plan[], now: number): D1PreparedStatement[] {
  const json = (rows: unknown[]) => JSON.stringify(rows);
  return [
    stmt(db, STRUCTURE_GUARD, json(plans.map((p) => p.guard))),
    stmt(db, PARK_VARIANTS, json(plans.flatMap((p) => p.park))),
    stmt(db, UPDATE_PRODUCTS, json(plans.map((p) => p.product)), now),
    stmt(db, UPDATE_VARIANTS, json(plans.flatMap((p) => p.updates)), now),
    stmt(db, SYNC_NO_MINUS, json(plans.map((p) => p.productId))),
  ];
}
