import type { DB } from "../db/client";
import type { PublicView } from "../keys/public";
import { stmt } from "../platform/d1";
import { carriedSql } from "../platform/quotes";
import { storeBaseSql } from "./categories";
import { type Field, object, seen } from "./json-sql";

// A product as GET /v1/products/{id} answers it (present.ts `presentProduct`), built as JSON text
// by SQLite, for that read (a storefront's with only what its key sees) and the writes planned in
// SQL (./create.ts, ./update/variants-sql.ts): presenting 2,048 variants in JavaScript (D1's
// row objects, one object per variant, then the answer's stringify) was about a third of such a
// write's CPU, and most of a storefront's 27 ms read; the text passes through unparsed, carried
// (src/platform/quotes.ts). test/products.own-json.test.ts holds it equal to presentProduct, and to
// the publishable filter over it, on random products.

/** Minor units as the JSON number presentProduct gives (12900 -> 129, 19950 -> 199.5). */
const money = (col: string) => `iif(${col} % 100 = 0, ${col} / 100, ${col} / 100.0)`;
const maybeMoney = (col: string) => `iif(${col} IS NULL, NULL, ${money(col)})`;
/** Epoch milliseconds as Date#toISOString gives them. */
const iso = (col: string) => `strftime('%Y-%m-%dT%H:%M:%fZ', ${col} / 1000.0, 'unixepoch')`;
const name = (n: number) => `p.option_names->>'$[${n - 1}]'`;

const VARIANT_FIELDS: Field[] = [
  ["variant_id", "v.id"],
  ["sku", "v.sku"],
  ...[1, 2, 3, 4, 5].flatMap((n): Field[] => [
    [`variant_option${n}_name`, name(n)],
    [`variant_option${n}_value`, `iif(${name(n)} IS NULL OR ${name(n)} = '', NULL, v.option${n}_value)`],
  ]),
  ["price", money("v.price")],
  ["before_price", maybeMoney("v.before_price")],
  ["purchase_price", maybeMoney("v.purchase_price")],
  ["qty", "v.qty"],
  ["qty_location", "v.qty_location"],
  ["gtin", "v.gtin"],
  ["supplier_sku", "v.supplier_sku"],
  ["weight", "v.weight"],
  ["visible", "v.visible"],
  ["images", "json(v.images)"],
];

const STOCK = "coalesce((SELECT sum(qty) FROM variants WHERE product_id = p.id), p.stock)";
/** A storefront's stock of a product with variants: that of the variants it sees. */
const SHOWN_STOCK = `iif(EXISTS (SELECT 1 FROM variants WHERE product_id = p.id),
  (SELECT coalesce(sum(qty), 0) FROM variants WHERE product_id = p.id AND visible = 1), p.stock)`;

const PRODUCT_FIELDS = (url: string, variants: string): Field[] => [
  ["product_id", "p.id"],
  ["sku", "p.sku"],
  ["title", "p.title"],
  ["price", money("p.price")],
  ["before_price", maybeMoney("p.before_price")],
  ["purchase_price", maybeMoney("p.purchase_price")],
  ["tax_rate", "p.tax_rate"],
  ["stock", STOCK],
  ["qty_location", "p.qty_location"],
  ["disable_minusqty", "CAST(p.disable_minusqty AS TEXT)"],
  ["visible", "p.visible"],
  ["description", "p.description"],
  ["gtin", "p.gtin"],
  ["supplier_name", "p.supplier_name"],
  ["supplier_sku", "p.supplier_sku"],
  ["datafield_1", "p.datafield_1"],
  ["datafield_2", "p.datafield_2"],
  ["datafield_3", "p.datafield_3"],
  ["seo_description", "p.seo_description"],
  ["seo_title", "p.seo_title"],
  ["weight", "p.weight"],
  ["images", "json(p.images)"],
  ["categories", "json(p.categories)"],
  ["slug", "p.slug"],
  ["url", url],
  ["metadata", "iif(p.metadata IS NULL, NULL, json(p.metadata))"],
  ["variants", variants],
  ["created_at", iso("p.created_at")],
  ["updated_at", iso("p.updated_at")],
];

// A product's variants, in order through variants_product (product_id, position); a product with
// variants has their qty summed as its stock.
const variants = (view: PublicView | undefined) =>
  `(SELECT json_group_array(${object(seen(VARIANT_FIELDS, view, "v.qty"))} ORDER BY v.position, v.id)
  FROM (SELECT * FROM variants WHERE product_id = p.id${view ? " AND visible = 1" : ""}) AS v)`;

/**
 * The products `where` selects (a condition on `p`, values bound as ?1...), newest first, one `json`
 * text each, carried (src/platform/quotes.ts: carriedJson answers it).
 */
export function ownJson(db: DB, where: string, ...params: unknown[]) {
  return productJson(db, undefined, where, ...params);
}

/**
 * ownJson as a publishable key with `view` sees it: its visible products only (a hidden one yields
 * no row), each as the reference filter over presentProduct shows it (test/modelled-reference.ts,
 * publicFields).
 */
export function publicJson(db: DB, view: PublicView, where: string, ...params: unknown[]) {
  return productJson(db, view, `(${where}) AND p.visible = 1`, ...params);
}

function productJson(db: DB, view: PublicView | undefined, where: string, ...params: unknown[]) {
  const base = storeBaseSql();
  const url = `iif(p.slug IS NULL OR ${base} = '', NULL, ${base} || p.slug)`;
  const stock = view ? SHOWN_STOCK : STOCK;
  const fields = PRODUCT_FIELDS(url, variants(view)).map(([k, v]): Field => [k, k === "stock" ? stock : v]);
  const product = object(seen(fields, view, stock));
  return stmt(
    db,
    `SELECT p.id, p.token, (SELECT count(*) FROM variants WHERE product_id = p.id) AS variants, ${carriedSql(product)} AS json
     FROM products AS p WHERE ${where} ORDER BY p.id DESC`,
    ...params,
  );
}

/** The minimal answer (read.ts presentMinimal) of the same products. */
export function minimalJson(db: DB, where: string, ...params: unknown[]) {
  return stmt(
    db,
    `SELECT p.id, p.token, (SELECT count(*) FROM variants WHERE product_id = p.id) AS variants,
      ${carriedSql(`json_object('product_id', p.id, 'sku', p.sku, 'updated_at', ${iso("p.updated_at")},
      'variants', (SELECT coalesce(json_group_array(json_object('variant_id', v.id, 'sku', v.sku)), '[]')
        FROM (SELECT id, sku FROM variants WHERE product_id = p.id ORDER BY position, id) AS v))`)} AS json
    FROM products AS p WHERE ${where} ORDER BY p.id DESC`,
    ...params,
  );
}

/**
 * A product of a write's answer as SQLite built it: the answer is written around the text
 * (products/write.ts) and never parses it. `product_id` identifies it like a presented product;
 * `variants` is their number, for the request log.
 */
export class ProductText {
  constructor(
    readonly product_id: number,
    readonly text: string,
    readonly variants: number,
  ) {}
}

/** The one product of an ownJson, publicJson or minimalJson result, with its id and variant count. */
export function productText(r: D1Result<Record<string, unknown>>) {
  const row = r.results[0];
  // Every variant counted: a storefront's hidden ones are left out of the text, so this is more.
  return new ProductText(Number(row.id), row.json as string, Number(row.variants));
}

/** Every product of an ownJson or minimalJson result, by its token. */
export function productTexts(r: D1Result<Record<string, unknown>>) {
  const out = new Map<string, ProductText>();
  for (const row of r.results) {
    out.set(String(row.token), new ProductText(Number(row.id), row.json as string, Number(row.variants)));
  }
  return out;
}
