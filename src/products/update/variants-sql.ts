import type { DB } from "../../db/client";
import { fitsOneValue, runChecked, stmt } from "../../platform/d1";
import { committed, newEvent, outboxStatement } from "../../webhooks/outbox";
import type { ItemOutcome, WriteOptions, Written } from "../create";
import { STOCK } from "../entries";
import { minimalJson, ownJson, productText } from "../own-json";
import { ADJUST, at, EXPECTED, type Field, given, packed, SLOTS, VARIANT_ID, value } from "../packed";
import { MAX_ANSWER_BYTES, SIZE_SQL } from "../size";
import { sharedNames } from "../variants";
import type { UpdateItem } from "./select";

// A product's variant list written in SQL, in ONE round trip (docs/products.md, "Limits"): the
// requests a sales channel or stock tool sends for a product of up to 2,048 variants,
// `{product_id, variants: {sync: [...]}}` or `{product_id, variants: {update: [...]}}` and nothing
// else. The JavaScript plan (./plan.ts) reads the product and
// every variant into objects, matches and checks them one by one and sends the rows back; for
// 2,048 variants that was most of a 26 ms request. Here the batch matches the list against the
// variants where they are (a sync by SKU through the registry, else by option values through the
// unique combination index; an update by variant id), writes the match into a scratch table, and applies it with fixed statements.
// Whatever the JavaScript plan would refuse (a missing or extra option value, two entries matching
// one variant, a variant id of another product, another product's SKU, a repeated combination, negative stock under
// disable_minusqty, an `expected_qty` the stored qty is not, `adjust` beside `qty` or past the
// largest count, an answer past 2 MiB) fails the batch through a constraint, so nothing is
// written, and the caller then takes the JavaScript path, which words the errors (the same
// division as orders' cold path, docs/orders.md, "Orders"). Option renames, selections by SKU,
// Idempotency-Key and every other field go the JavaScript way. test/products.variants-sql.test.ts holds
// both paths equal on random catalogs and lists.

const each = (f: (n: number) => string, sep: string) => SLOTS.map(f).join(sep);

/**
 * ?1 product id, ?2 the packed entries, ?3 the option names they give (null: none), ?4 1 for a
 * sync, 0 for an update. Entries of a product whose names differ, or that has no slug yet (the
 * JavaScript plan derives one), give no rows, which the guard refuses. A sync matches by SKU, else
 * by the values (an entry naming a variant by SKU without values keeps its values); an update by
 * id, changing the values it gives.
 */
const PLAN = `
  INSERT INTO variant_sync (entry, product_id, variant_id, ${each((n) => `option${n}_value`, ", ")}, bad, data)
  WITH e AS MATERIALIZED (
    SELECT j.key AS entry, j.value AS data, p.id AS pid, json_array_length(p.option_names) AS n,
      ${at("j.value", "sku")} AS sku, j.value->>'$[${VARIANT_ID}]' AS variant_id,
      j.value->>'$[${ADJUST}]' AS adjust, j.value->>'$[${EXPECTED}]' AS expected,
      ${each((n) => `${at("j.value", value(n))} AS v${n}`, ", ")}
    FROM products AS p, json_each(?2) AS j
    WHERE p.id = ?1 AND p.slug IS NOT NULL AND json_array_length(p.option_names) > 0
      AND (?3 IS NULL OR json(?3) = json(p.option_names))
  ), t AS (
    SELECT e.*, ${each((n) => `iif(n >= ${n}, coalesce(v${n}, ''), '') AS t${n}`, ", ")},
      (${each((n) => `v${n} IS NULL`, " AND ")}) AS novalues,
      (${each((n) => `(n >= ${n} AND v${n} IS NULL)`, " OR ")}) AS missing,
      (${each((n) => `(n < ${n} AND v${n} IS NOT NULL)`, " OR ")}) AS extra
    FROM e
  ), r AS MATERIALIZED (
    SELECT t.*, CASE WHEN NOT ?4 THEN (SELECT v.id FROM variants AS v WHERE v.id = t.variant_id AND v.product_id = t.pid)
      WHEN sku IS NOT NULL THEN (SELECT k.variant_id FROM skus AS k WHERE k.sku = t.sku AND k.product_id = t.pid)
      ELSE (SELECT v.id FROM variants AS v WHERE v.product_id = t.pid AND ${each((n) => `v.option${n}_value = t.t${n}`, " AND ")})
    END AS vid
    FROM t
  )
  SELECT r.entry, r.pid, r.vid,
    ${each((n) => `CASE WHEN NOT ?4 THEN coalesce(r.v${n}, m.option${n}_value) WHEN r.keeps THEN m.option${n}_value ELSE r.t${n} END`, ", ")},
    r.data IS NULL OR iif(?4, NOT r.keeps AND (r.missing OR r.extra), r.vid IS NULL OR r.extra
      OR (r.expected IS NOT NULL AND m.qty IS NOT r.expected)
      OR (r.adjust IS NOT NULL AND (${given("r.data", "qty")} OR abs(m.qty + r.adjust) > ${STOCK}))), r.data
  FROM (SELECT *, sku IS NOT NULL AND vid IS NOT NULL AND novalues AS keeps FROM r) AS r
  LEFT JOIN variants AS m ON m.id = r.vid`;

// Fails the batch (stale_reads' always-false CHECK) when the plan is not one the JavaScript plan
// would accept: no rows (see PLAN), an invalid entry, or two entries on one variant (a sync
// refuses them; an update applies them in order, which one UPDATE cannot).
const GUARD = `
  INSERT INTO stale_reads (product_id)
  SELECT ?1 WHERE NOT EXISTS (SELECT 1 FROM variant_sync)
  UNION ALL SELECT product_id FROM variant_sync WHERE bad
  UNION ALL SELECT min(product_id) FROM variant_sync WHERE variant_id IS NOT NULL
    GROUP BY variant_id HAVING count(*) > 1`;

const DELETE_UNMATCHED = `
  DELETE FROM variants WHERE product_id = ?1
    AND id NOT IN (SELECT variant_id FROM variant_sync WHERE variant_id IS NOT NULL)`;

// SQLite checks UNIQUE per row, so variants whose SKU or option values change are parked first
// and swaps pass the registry and the combination index (./write.ts). A sync never changes a
// matched variant's SKU (it was matched by it, or the entry gives none); an update may.
const newSku = `${given("s.data", "sku")} AND ${at("s.data", "sku")} IS NOT variants.sku`;
const newValues = each((n) => `variants.option${n}_value <> s.option${n}_value`, " OR ");
const PARK = `
  UPDATE variants SET sku = iif(${newSku}, NULL, variants.sku),
    option1_value = iif(${newValues}, char(1) || 'parked ' || variants.id, variants.option1_value)
  FROM variant_sync AS s WHERE variants.id = s.variant_id AND (${newSku} OR ${newValues})`;

// With disable_minusqty on, a negative stock of the product's own is cleared: its variants' qty is
// its stock now (as ./plan.ts does).
const UPDATE_PRODUCT = `
  UPDATE products SET stock = iif(disable_minusqty = 1 AND stock < 0, 0, stock),
    updated_at = max(?2, updated_at + 1)
  WHERE id = ?1`;

// Fields an entry leaves out keep their value; null clears one (images to none).
const kept = (col: Field, cleared = "NULL") =>
  `${col} = iif(${given("s.data", col)}, coalesce(${at("s.data", col)}, ${cleared}), variants.${col})`;
// An entry's `adjust` (never given with its qty) moves the count as the batch finds it (docs/stock.md).
const UPDATE_MATCHED = `
  UPDATE variants SET ${each((n) => `option${n}_value = s.option${n}_value`, ", ")},
    ${(["sku", "price", "before_price", "purchase_price", "qty_location", "gtin", "supplier_sku", "weight", "visible"] as const).map((c) => kept(c)).join(", ")},
    ${kept("qty")} + coalesce(s.data->>'$[${ADJUST}]', 0),
    ${kept("images", "'[]'")},
    no_minus = (SELECT disable_minusqty FROM products WHERE products.id = variants.product_id),
    position = iif(?2, s.entry, variants.position), updated_at = ?1
  FROM variant_sync AS s WHERE variants.id = s.variant_id`;

const INSERT_NEW = `
  INSERT INTO variants (product_id, sku, ${each((n) => `option${n}_value`, ", ")}, price, before_price,
    purchase_price, qty, qty_location, gtin, supplier_sku, weight, visible, images, no_minus, position,
    created_at, updated_at)
  SELECT p.id, ${at("s.data", "sku")}, ${each((n) => `s.option${n}_value`, ", ")},
    coalesce(${at("s.data", "price")}, p.price), ${at("s.data", "before_price")}, ${at("s.data", "purchase_price")},
    coalesce(${at("s.data", "qty")}, 0), ${at("s.data", "qty_location")}, ${at("s.data", "gtin")},
    ${at("s.data", "supplier_sku")}, ${at("s.data", "weight")}, coalesce(${at("s.data", "visible")}, 1),
    coalesce(${at("s.data", "images")}, '[]'), p.disable_minusqty, s.entry, ?1, ?1
  FROM variant_sync AS s JOIN products AS p ON p.id = s.product_id
  WHERE s.variant_id IS NULL ORDER BY s.entry`;

const SIZE_GUARD = `
  INSERT INTO stale_reads (product_id)
  SELECT p.id FROM products AS p WHERE p.id = ?1 AND ${SIZE_SQL} > ${MAX_ANSWER_BYTES}`;

const CLEAR = "DELETE FROM variant_sync";

/** The item this path takes, with its list bound as packed entries; undefined: the JavaScript path. */
export function variantsInSql(items: UpdateItem[], idempotent: boolean) {
  if (items.length !== 1 || idempotent) return undefined;
  const [item] = items;
  const d = item.data;
  if (d.product_id === undefined) return undefined;
  for (const [key, v] of Object.entries(d)) {
    if (v !== undefined && key !== "product_id" && key !== "variants") return undefined;
  }
  const { sync, add, update } = d.variants ?? {};
  if (add || (sync && update)) return undefined;
  const entries = sync ?? update;
  if (!entries?.length) return undefined;
  const names = sharedNames(entries);
  if (names === false) return undefined;
  // A list too large for one bound value (long image lists) takes the JavaScript path, which splits it.
  const packedList = packed(entries);
  if (!fitsOneValue(packedList)) return undefined;
  return { item, productId: d.product_id, sync: sync !== undefined, entries: packedList, names: names ?? null };
}

/**
 * Writes the list in one batch; undefined when the batch refused it (nothing was written) and the
 * JavaScript path must decide and word the outcome.
 */
export async function writeVariants(
  db: DB,
  list: NonNullable<ReturnType<typeof variantsInSql>>,
  now: number,
  options: WriteOptions,
): Promise<Written | undefined> {
  const id = list.productId;
  const sync = list.sync ? 1 : 0;
  const change = [newEvent("product.update", { productId: id, keyId: options.keyId })];
  const read = (options.minimal ? minimalJson : ownJson)(db, "p.id = ?1", id);
  const results = await runChecked(db, [
    stmt(db, PLAN, id, list.entries, list.names && JSON.stringify(list.names), sync),
    stmt(db, GUARD, id),
    ...(sync ? [stmt(db, DELETE_UNMATCHED, id)] : []),
    stmt(db, PARK),
    stmt(db, UPDATE_PRODUCT, id, now),
    stmt(db, UPDATE_MATCHED, now, sync),
    ...(sync ? [stmt(db, INSERT_NEW, now)] : []),
    stmt(db, SIZE_GUARD, id),
    outboxStatement(db, change, now),
    read,
    stmt(db, CLEAR),
  ]);
  if (!results) return undefined;
  const product = productText(results[results.length - 2]);
  const outcomes = new Map<number, ItemOutcome>([[list.item.index, { ok: true, product }]]);
  return { outcomes, events: committed(change, results) };
}
