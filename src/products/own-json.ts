import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { products, variants as variantsTable } from "../db/schema";
import type { PublicView } from "../keys/public";
import { type DB, stmt } from "../platform/d1";
import { carriedSql } from "../platform/quotes";
import { storeBaseSql } from "./categories";
import {
  type Field as DescribedField,
  OWN_PRODUCT,
  OWN_VARIANT,
  type OwnProductSpecial,
  type OwnVariantSpecial,
  productColumn,
  productField,
  variantColumn,
  variantField,
} from "./fields";
import { col, type Field, object, ordered, PRODUCTS, seen, variantsInOrder } from "./json-sql";

// A product as GET /v1/products/{id} answers it (present.ts `presentProduct`), built as JSON text
// by SQLite, for that read (a storefront's with only what its key sees) and the writes planned in
// SQL and the update's (./create.ts, ./update/write.ts): presenting 2,048 variants in JavaScript (D1's
// row objects, one object per variant, then the answer's stringify) was about a third of such a
// write's CPU, and most of a storefront's 27 ms read; the text passes through unparsed, carried
// (src/platform/quotes.ts). test/products.own-json.test.ts holds it equal to presentProduct, and to
// the publishable filter over it, on random products.

/** Epoch milliseconds as Date#toISOString gives them. */
const iso = (c: string) => `strftime('%Y-%m-%dT%H:%M:%fZ', ${c} / 1000.0, 'unixepoch')`;
const P = (c: SQLiteColumn) => col("p", c);
const V = (c: SQLiteColumn) => col("v", c);

/** The own dialect's SQL of a described field over its column `c`; a NULL column answers null. */
function own(f: DescribedField, c: SQLiteColumn, alias: string) {
  const at = col(alias, c);
  const sql = f.kind.own.sql(at);
  return c.notNull || sql === at ? sql : `iif(${at} IS NULL, NULL, ${sql})`;
}
const productOwn = (k: string) => {
  const f = productField(k);
  return f && !f.computed ? own(f, productColumn(f), "p") : undefined;
};
const variantOwn = (k: string) => {
  const f = variantField(k);
  return f && own(f, variantColumn(f), "v");
};

const name = (n: number) => `${P(products.optionNames)}->>'$[${n - 1}]'`;
const OPTIONS = [1, 2, 3, 4, 5].flatMap((n): Field[] => [
  [`variant_option${n}_name`, name(n)],
  [
    `variant_option${n}_value`,
    `iif(${name(n)} IS NULL OR ${name(n)} = '', NULL, ${col("v", variantsTable[`option${n}` as "option1"])})`,
  ],
]);
const VARIANT_FIELDS = ordered<OwnVariantSpecial>(
  OWN_VARIANT,
  variantOwn,
)({
  variant_id: V(variantsTable.id),
  options: OPTIONS,
});

// A product's variants are the rows `v` joined to it in answer order (json-sql.ts, variantsInOrder)
// and aggregated once: their count, their qty summed as its stock and their list come of one pass.
// A product without variants is the LEFT JOIN's one row of NULLs, which no aggregate counts.
const VARIANT = `${V(variantsTable.id)} IS NOT NULL`;
const SHOWN = `${V(variantsTable.visible)} = 1`;
const COUNT = `count(${V(variantsTable.id)})`;
const STOCK = `coalesce(sum(${V(variantsTable.qty)}), ${P(products.stock)})`;
/** A storefront's stock of a product with variants: that of the variants it sees. */
const SHOWN_STOCK = `iif(${COUNT} > 0, coalesce(sum(${V(variantsTable.qty)}) FILTER (WHERE ${SHOWN}), 0), ${P(products.stock)})`;

const PRODUCT = ordered<OwnProductSpecial>(OWN_PRODUCT, productOwn);
const PRODUCT_FIELDS = (url: string, variants: string, stock: string): Field[] =>
  PRODUCT({
    product_id: P(products.id),
    stock,
    categories: `json(${P(products.categories)})`,
    slug: P(products.slug),
    url,
    variants,
    created_at: iso(P(products.createdAt)),
    updated_at: iso(P(products.updatedAt)),
  });

const variants = (view: PublicView | undefined) =>
  `json_group_array(${object(seen(VARIANT_FIELDS, view, V(variantsTable.qty)))}) FILTER (WHERE ${view ? SHOWN : VARIANT})`;

/** What productText reads besides the text: the product's id and token, and its variants' count. */
const HEAD = `${P(products.id)}, ${P(products.token)}, ${COUNT} AS variants`;

/**
 * The products `where` selects, each joined to its variants and grouped. The products are named by
 * id, so that they are visited in id order, which the grouping then follows without a sort (a
 * grouping by id of products found by token sorted every variant row).
 */
const joined = (where: string) =>
  `FROM ${PRODUCTS} AS p LEFT JOIN ${variantsInOrder("v")} ON ${V(variantsTable.productId)} = ${P(products.id)}
  WHERE ${P(products.id)} IN (SELECT ${P(products.id)} FROM ${PRODUCTS} AS p WHERE ${where})
  GROUP BY ${P(products.id)} ORDER BY ${P(products.id)} DESC`;

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
  return productJson(db, view, `(${where}) AND ${P(products.visible)} = 1`, ...params);
}

function productJson(db: DB, view: PublicView | undefined, where: string, ...params: unknown[]) {
  const base = storeBaseSql();
  const slug = P(products.slug);
  const url = `iif(${slug} IS NULL OR ${base} = '', NULL, ${base} || ${slug})`;
  const stock = view ? SHOWN_STOCK : STOCK;
  const product = object(seen(PRODUCT_FIELDS(url, variants(view), stock), view, stock));
  return stmt(db, `SELECT ${HEAD}, ${carriedSql(product)} AS json ${joined(where)}`, ...params);
}

/** The minimal answer (read.ts presentMinimal) of a product. */
const MINIMAL = `json_object('product_id', ${P(products.id)}, 'sku', ${P(products.sku)}, 'updated_at', ${iso(P(products.updatedAt))},
  'variants', json_group_array(json_object('variant_id', ${V(variantsTable.id)}, 'sku', ${V(variantsTable.sku)})) FILTER (WHERE ${VARIANT}))`;

/** The minimal answer (read.ts presentMinimal) of the same products. */
export function minimalJson(db: DB, where: string, ...params: unknown[]) {
  return stmt(db, `SELECT ${HEAD}, ${carriedSql(MINIMAL)} AS json ${joined(where)}`, ...params);
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

  /** The product of a row of ownJson, publicJson or minimalJson. */
  static of(row: Record<string, unknown>) {
    return new ProductText(Number(row.id), row.json as string, Number(row.variants));
  }
}

/** The one product of an ownJson, publicJson or minimalJson result, with its id and variant count. */
export function productText(r: D1Result<Record<string, unknown>>) {
  // Every variant counted: a storefront's hidden ones are left out of the text, so this is more.
  return ProductText.of(r.results[0]);
}

/** Every product of an ownJson or minimalJson result, by its token. */
export function productTexts(r: D1Result<Record<string, unknown>>) {
  const out = new Map<string, ProductText>();
  for (const row of r.results) out.set(String(row.token), ProductText.of(row));
  return out;
}
