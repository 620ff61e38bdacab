import type { DB } from "../../db/client";
import { stmt } from "../../platform/d1";
import { outboxStatement, type PendingEvent } from "../../webhooks/outbox";
import { INSERT_VARIANTS } from "../create";
import { SCALAR_FIELDS } from "../fields";
import { productReads } from "../read";
import { VARIANT_VALUES } from "../variants";
import { STRUCTURE_GUARD } from "./guard";
import type { Plan } from "./plan";

// The write batch of a PUT round: fixed statements for all of its plans (docs/products.md, "Updating products").

/** `col = the JSON row's value when it has the key (null clears), else the current value`. */
const keep = (table: string, col: string, json = false) =>
  `${col} = iif(json_type(j.value, '$.${col}') IS NULL, ${table}.${col}, j.value${json ? "->" : "->>"}'${col}')`;

// A row's `adjust` (docs/stock.md) moves the count as the batch finds
// it, never a count the Worker read: concurrent sales and adjustments all take effect.
const adjusted = (col: string) => (col === "stock" || col === "qty" ? " + coalesce(j.value->>'adjust', 0)" : "");

const DELETE_VARIANTS = "DELETE FROM variants WHERE id IN (SELECT value FROM json_each(?1))";

// SQLite checks UNIQUE per row during a multi-row UPDATE, so variants whose SKU or options
// change first get values no other row can have; swaps between variants then succeed.
const PARK_VARIANTS = `
  UPDATE variants SET
    sku = iif(j.value->>'sku', NULL, variants.sku),
    option1_value = iif(j.value->>'options', char(1) || 'parked ' || variants.id, variants.option1_value)
  FROM json_each(?1) AS j WHERE variants.id = j.value->>'id'`;

const PRODUCT_SCALARS = SCALAR_FIELDS;
// updated_at always moves forward on every write, even two in one millisecond (the orders'
// catalog cache and clients' conditional reads rely on it); the guard no longer reads it.
const UPDATE_PRODUCTS = `
  UPDATE products SET ${PRODUCT_SCALARS.map((c) => keep("products", c) + adjusted(c)).join(", ")},
    ${keep("products", "images", true)}, ${keep("products", "option_names", true)},
    ${keep("products", "slug")}, ${keep("products", "categories", true)},
    metadata = CASE WHEN json_type(j.value, '$.metadata') IS NULL THEN products.metadata
      WHEN json_type(j.value, '$.metadata') = 'object' THEN j.value->'metadata' ELSE NULL END,
    updated_at = max(?2, products.updated_at + 1)
  FROM json_each(?1) AS j WHERE products.id = j.value->>'id'`;

const VARIANT_SCALARS = [
  "sku",
  "option1_value",
  "option2_value",
  "option3_value",
  "option4_value",
  "option5_value",
  ...VARIANT_VALUES,
  "position",
];
// no_minus is set with qty in the same row update, so the stock floor CHECK sees the new pair.
const UPDATE_VARIANTS = `
  UPDATE variants SET ${VARIANT_SCALARS.map((c) => keep("variants", c) + adjusted(c)).join(", ")},
    ${keep("variants", "images", true)},
    no_minus = (SELECT products.disable_minusqty FROM products WHERE products.id = variants.product_id),
    updated_at = ?2
  FROM json_each(?1) AS j WHERE variants.id = j.value->>'id'`;

// The variants this request did not touch follow their product's disable_minusqty.
const SYNC_NO_MINUS = `
  UPDATE variants SET no_minus = p.disable_minusqty FROM products AS p
  WHERE p.id = variants.product_id AND variants.no_minus <> p.disable_minusqty
    AND variants.product_id IN (SELECT value FROM json_each(?1))`;

/**
 * The one write batch of a round, for all its products: the only place it is assembled, so
 * anything that must commit with the update (an idempotency record) is added here. Order
 * matters: deletes and parking free SKUs and option combinations before anything takes them,
 * the product row (with disable_minusqty) is written before its variants copy the flag, the
 * product.update events commit with the change, and the last two statements read the result back
 * so the answer needs no further round trip.
 */
export function writeBatch(db: DB, plans: Plan[], now: number, events: PendingEvent[], reads = productReads) {
  const json = (rows: unknown[]) => JSON.stringify(rows);
  const ids = json(plans.map((p) => p.productId));
  return [
    stmt(db, STRUCTURE_GUARD, json(plans.map((p) => p.guard))),
    stmt(db, DELETE_VARIANTS, json(plans.flatMap((p) => p.deletes))),
    stmt(db, PARK_VARIANTS, json(plans.flatMap((p) => p.park))),
    stmt(db, UPDATE_PRODUCTS, json(plans.map((p) => p.product)), now),
    stmt(db, UPDATE_VARIANTS, json(plans.flatMap((p) => p.updates)), now),
    stmt(db, INSERT_VARIANTS, json(plans.flatMap((p) => p.inserts)), now),
    stmt(db, SYNC_NO_MINUS, ids),
    outboxStatement(db, events, now),
    ...reads(db, "p.id IN (SELECT value FROM json_each(?1))", ids),
  ];
}
