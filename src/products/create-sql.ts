import type { DB } from "../db/client";
import { fitsOneValue, runChecked, stmt } from "../platform/d1";
import { committed, newEvent, outboxStatement } from "../webhooks/outbox";
import { derivedSlug, tooManyPaths } from "./categories";
import { INSERT_PRODUCTS, type ItemOutcome, productColumns, type WriteOptions, type Written } from "./create";
import { minimalJson, ownJson, productText } from "./own-json";
import { at, packed, SLOTS, value } from "./packed";
import type { ProductCreate } from "./schema";
import { MAX_ANSWER_BYTES, SIZE_SQL } from "./size";
import { sharedNames } from "./variants";

// POST /v1/products of one product with its variants, checked in SQL (src/docs/products.md,
// "Limits"): the JavaScript plan (./create.ts) checks every entry's option values, combinations,
// SKUs and stock one by one and builds a row object per variant, which for 2,048 variants was most
// of the request's CPU. Here the variants are inserted straight from the packed list, and whatever that plan would
// refuse fails the batch through a constraint: a missing or extra option value (NOT NULL of the
// option columns), a repeated combination (the unique index), a repeated or taken SKU (the registry), a
// negative qty under disable_minusqty (the stock floor), an answer past 2 MiB (the size guard).
// Nothing is then written, and the JavaScript path decides and words the outcome.
// test/products.create-sql.test.ts holds both paths equal on random bodies.

const each = (f: (n: number) => string, sep: string) => SLOTS.map(f).join(sep);
const v = (n: number) => at("j.value", value(n));
const n = "json_array_length(p.option_names)";

// ?1 the packed entries, ?2 now, ?3 the product's token. An entry that lacks a value for one of
// the options or gives one past them writes NULL into an option column, whose NOT NULL fails the
// batch.
const INSERT_VARIANTS = `
  INSERT INTO variants (product_id, sku, ${each((k) => `option${k}_value`, ", ")}, price, before_price,
    purchase_price, qty, qty_location, gtin, supplier_sku, weight, visible, images, no_minus, position,
    created_at, updated_at)
  SELECT p.id, ${at("j.value", "sku")}, ${each((k) => `iif(${n} >= ${k}, ${v(k)}, iif(${v(k)} IS NULL, '', NULL))`, ", ")},
    coalesce(${at("j.value", "price")}, p.price), ${at("j.value", "before_price")}, ${at("j.value", "purchase_price")},
    coalesce(${at("j.value", "qty")}, 0), ${at("j.value", "qty_location")}, ${at("j.value", "gtin")},
    ${at("j.value", "supplier_sku")}, ${at("j.value", "weight")}, coalesce(${at("j.value", "visible")}, 1),
    coalesce(${at("j.value", "images")}, '[]'), p.disable_minusqty, j.key, ?2, ?2
  FROM products AS p, json_each(?1) AS j WHERE p.token = ?3`;

const SIZE_GUARD = `
  INSERT INTO stale_reads (product_id)
  SELECT p.id FROM products AS p WHERE p.token = ?1
    AND (${SIZE_SQL} > ${MAX_ANSWER_BYTES} OR NOT EXISTS (SELECT 1 FROM variants WHERE product_id = p.id))`;

/** The one product this path creates, its row and packed variants; undefined: the JavaScript path. */
export function createInSql(items: { index: number; data: ProductCreate }[], idempotent: boolean) {
  if (items.length !== 1 || idempotent) return undefined;
  const [{ index, data: p }] = items;
  const entries = p.variants?.add;
  // Products without variants are cheap either way; refusals of the product's own fields are worded there.
  if (!entries?.length || p.stock !== undefined) return undefined;
  const names = sharedNames(entries);
  if (!names) return undefined;
  const token = crypto.randomUUID();
  const product = { ...productColumns(p, names), token, slug: p.slug ?? derivedSlug(p.title as string, token) };
  if (tooManyPaths(product.categories) || (product.disable_minusqty === 1 && product.stock < 0)) return undefined;
  const variants = packed(entries);
  // Too long for one bound value: the JavaScript path splits it.
  if (!fitsOneValue(variants)) return undefined;
  return { index, product: JSON.stringify([product]), token, variants };
}

/**
 * Creates the product in one batch; undefined when the batch refused it (nothing was written)
 * and the JavaScript path must decide and word the outcome.
 */
export async function createProduct(
  db: DB,
  c: NonNullable<ReturnType<typeof createInSql>>,
  now: number,
  options: WriteOptions,
): Promise<Written | undefined> {
  const events = [newEvent("product.add", { productToken: c.token, keyId: options.keyId })];
  const read = (options.minimal ? minimalJson : ownJson)(db, "p.token = ?1", c.token);
  const results = await runChecked(db, [
    stmt(db, INSERT_PRODUCTS, c.product, now, options.keyId ?? null),
    stmt(db, INSERT_VARIANTS, c.variants, now, c.token),
    stmt(db, SIZE_GUARD, c.token),
    outboxStatement(db, events, now),
    read,
  ]);
  if (!results) return undefined;
  return {
    outcomes: new Map<number, ItemOutcome>([
      [c.index, { ok: true, product: productText(results[results.length - 1]) }],
    ]),
    events: committed(events, results),
  };
}
