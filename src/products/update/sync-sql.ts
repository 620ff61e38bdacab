import type { DB } from "../../db/client";
import { isConstraintError, runBatch, stmt } from "../../platform/d1";
import { committed, newEvent, outboxStatement, type PendingEvent } from "../../webhooks/outbox";
import type { ItemOutcome, WriteOptions } from "../create";
import { type presentReads, readBack } from "../read";
import type { VariantEntry } from "../schema";
import { MAX_ANSWER_BYTES, SIZE_SQL } from "../size";
import { agreedNames } from "../variants";
import type { UpdateItem } from "./select";

// A variant sync planned in SQL, in ONE round trip (src/docs/products.md, "Limits"): the request a
// sales channel or stock tool sends for a product of up to 2,048 variants, `{product_id,
// variants: {sync: [...]}}` and nothing else. The JavaScript plan (./plan.ts) reads the product and
// every variant into objects, matches and checks them one by one and sends the rows back; for
// 2,048 variants that was most of a 26 ms request. Here the batch matches the list against the
// variants where they are (by SKU through the registry, else by option values through the unique
// combination index), writes the match into a scratch table, and applies it with fixed statements.
// Whatever the JavaScript plan would refuse (a missing or extra option value, two entries matching
// one variant, another product's SKU, a repeated combination, negative stock under
// disable_minusqty, an answer past 2 MiB) fails the batch through a constraint, so nothing is
// written, and the caller then takes the JavaScript path, which words the errors (the same
// division as orders' cold path, src/docs/orders.md, "Orders"). Option renames, selections by SKU,
// Idempotency-Key and every other field go the JavaScript way. test/products.sync-sql.test.ts holds
// both paths equal on random catalogs and lists.

const SLOTS = [1, 2, 3, 4, 5] as const;
const each = (f: (n: number) => string, sep: string) => SLOTS.map(f).join(sep);

// An entry travels as an array of what the statements read, in this order (null: not given; a
// sync entry cannot clear a field). Arrays of values serialise at about a third of the CPU of the
// entry objects and half their bytes, which the binding copies again when it sends the batch.
const FIELDS = [
  "sku",
  ...SLOTS.map((n) => `variant_option${n}_value` as const),
  "price",
  "before_price",
  "purchase_price",
  "qty",
  "qty_location",
  "gtin",
  "supplier_sku",
  "weight",
  "visible",
  "images",
] as const;
type Field = (typeof FIELDS)[number];
/** SQL: field `f` of the entry array `data` (images as their JSON text). */
const at = (data: string, f: Field) => `${data}->>'$[${FIELDS.indexOf(f)}]'`;

function packed(entries: VariantEntry[]) {
  const out = new Array(entries.length);
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    out[i] = [
      e.sku,
      e.variant_option1_value,
      e.variant_option2_value,
      e.variant_option3_value,
      e.variant_option4_value,
      e.variant_option5_value,
      e.price,
      e.before_price,
      e.purchase_price,
      e.qty,
      e.qty_location,
      e.gtin,
      e.supplier_sku,
      e.weight,
      e.visible,
      e.images,
    ];
  }
  return JSON.stringify(out);
}

/**
 * ?1 product id, ?2 the validated entries, ?3 the option names they give (null: none). Entries of
 * a product whose names differ, or that has no slug yet (the JavaScript plan derives one), give no
 * rows, which the guard refuses.
 */
const PLAN = `
  INSERT INTO variant_sync (entry, product_id, variant_id, ${each((n) => `option${n}_value`, ", ")}, bad, data)
  WITH e AS (
    SELECT j.key AS entry, j.value AS data, p.id AS pid, json_array_length(p.option_names) AS n,
      ${at("j.value", "sku")} AS sku, ${each((n) => `${at("j.value", `variant_option${n}_value` as Field)} AS v${n}`, ", ")}
    FROM products AS p, json_each(?2) AS j
    WHERE p.id = ?1 AND p.slug IS NOT NULL AND json_array_length(p.option_names) > 0
      AND (?3 IS NULL OR json(?3) = json(p.option_names))
  ), t AS (
    SELECT e.*, ${each((n) => `iif(n >= ${n}, coalesce(v${n}, ''), '') AS t${n}`, ", ")},
      (${each((n) => `v${n} IS NULL`, " AND ")}) AS novalues,
      (${each((n) => `(n >= ${n} AND v${n} IS NULL)`, " OR ")}
        OR ${each((n) => `(n < ${n} AND v${n} IS NOT NULL)`, " OR ")}) AS invalid
    FROM e
  ), r AS (
    SELECT t.*, CASE WHEN sku IS NOT NULL
      THEN (SELECT k.variant_id FROM skus AS k WHERE k.sku = t.sku AND k.product_id = t.pid)
      ELSE (SELECT v.id FROM variants AS v WHERE v.product_id = t.pid AND ${each((n) => `v.option${n}_value = t.t${n}`, " AND ")})
    END AS vid
    FROM t
  )
  SELECT r.entry, r.pid, r.vid,
    ${each((n) => `iif(r.keeps, m.option${n}_value, r.t${n})`, ", ")},
    NOT r.keeps AND r.invalid, r.data
  FROM (SELECT *, sku IS NOT NULL AND vid IS NOT NULL AND novalues AS keeps FROM r) AS r
  LEFT JOIN variants AS m ON m.id = r.vid`;

// Fails the batch (stale_reads' always-false CHECK) when the plan is not one the JavaScript plan
// would accept: no rows (see PLAN), an invalid entry, or two entries matching one variant.
const GUARD = `
  INSERT INTO stale_reads (product_id)
  SELECT ?1 WHERE NOT EXISTS (SELECT 1 FROM variant_sync)
  UNION ALL SELECT product_id FROM variant_sync WHERE bad
  UNION ALL SELECT min(product_id) FROM variant_sync WHERE variant_id IS NOT NULL
    GROUP BY variant_id HAVING count(*) > 1`;

const DELETE_UNMATCHED = `
  DELETE FROM variants WHERE product_id = ?1
    AND id NOT IN (SELECT variant_id FROM variant_sync WHERE variant_id IS NOT NULL)`;

// A matched variant keeps its SKU (it was matched by it, or the entry gives none); its option
// values may change, so those that do are parked first and swaps pass the unique index (./write.ts).
const changes = each((n) => `variants.option${n}_value <> s.option${n}_value`, " OR ");
const PARK = `
  UPDATE variants SET option1_value = char(1) || 'parked ' || variants.id
  FROM variant_sync AS s WHERE variants.id = s.variant_id AND (${changes})`;

// With disable_minusqty on, a negative stock of the product's own is cleared: its variants' qty is
// its stock now (as ./plan.ts does).
const UPDATE_PRODUCT = `
  UPDATE products SET stock = iif(disable_minusqty = 1 AND stock < 0, 0, stock),
    updated_at = max(?2, updated_at + 1)
  WHERE id = ?1`;

// Fields an entry leaves out keep their value; a sync entry cannot clear one (null is refused).
const kept = (col: Field) => `${col} = coalesce(${at("s.data", col)}, variants.${col})`;
const UPDATE_MATCHED = `
  UPDATE variants SET ${each((n) => `option${n}_value = s.option${n}_value`, ", ")},
    ${(["price", "before_price", "purchase_price", "qty", "qty_location", "gtin", "supplier_sku", "weight", "visible", "images"] as const).map(kept).join(", ")},
    no_minus = (SELECT disable_minusqty FROM products WHERE products.id = variants.product_id),
    position = s.entry, updated_at = ?1
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

/** The item this path takes, with the option names its entries give; undefined: the JavaScript path. */
export function syncInSql(items: UpdateItem[], idempotent: boolean) {
  if (items.length !== 1 || idempotent) return undefined;
  const [item] = items;
  const d = item.data;
  if (d.product_id === undefined) return undefined;
  for (const [key, value] of Object.entries(d)) {
    if (value !== undefined && key !== "product_id" && key !== "variants") return undefined;
  }
  const sync = d.variants?.sync;
  if (!sync?.length || d.variants?.add || d.variants?.update) return undefined;
  const agreed = agreedNames(sync.map((entry) => ({ entry, path: "" })));
  if (agreed.errors.length) return undefined;
  return { item, productId: d.product_id, entries: sync, names: agreed.names ?? null };
}

/**
 * Runs the sync in one batch; undefined when the batch refused it (nothing was written) and the
 * JavaScript path must decide and word the outcome.
 */
export async function syncProduct(
  db: DB,
  sync: NonNullable<ReturnType<typeof syncInSql>>,
  now: number,
  options: WriteOptions,
): Promise<{ outcomes: Map<number, ItemOutcome>; events: PendingEvent[] } | undefined> {
  const id = sync.productId;
  const change = [newEvent("product.update", { productId: id, keyId: options.keyId })];
  const back = readBack(options.minimal);
  const reads = back.reads(db, "p.id = ?1", id);
  let results: D1Result<Record<string, unknown>>[];
  try {
    results = await runBatch(db, [
      stmt(db, PLAN, id, packed(sync.entries), sync.names && JSON.stringify(sync.names)),
      stmt(db, GUARD, id),
      stmt(db, DELETE_UNMATCHED, id),
      stmt(db, PARK),
      stmt(db, UPDATE_PRODUCT, id, now),
      stmt(db, UPDATE_MATCHED, now),
      stmt(db, INSERT_NEW, now),
      stmt(db, SIZE_GUARD, id),
      outboxStatement(db, change, now),
      ...reads,
      stmt(db, CLEAR),
    ]);
  } catch (e) {
    if (isConstraintError(e)) return undefined;
    throw e;
  }
  const [ps, vs] = results.slice(results.length - 1 - reads.length, results.length - 1);
  const { products } = back.present(ps, vs) as ReturnType<typeof presentReads>;
  const outcomes = new Map<number, ItemOutcome>([[sync.item.index, { ok: true, product: products[0] }]]);
  return { outcomes, events: committed(change, results) };
}
