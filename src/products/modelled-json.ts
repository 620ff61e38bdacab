import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { products, variants } from "../db/schema";
import type { PublicView } from "../keys/public";
import { CATEGORIES_SQL, HEAD_SQL } from "./categories";
import {
  type Field,
  MODELLED_BASE,
  MODELLED_DETAILS,
  MODELLED_VARIANT,
  type ModelledProductSpecial,
  type ModelledVariantSpecial,
  productColumn,
  productField,
  variantColumn,
  variantField,
} from "./fields";
import { MODELLED } from "./kinds";
import {
  availability,
  COUNT,
  col,
  kept,
  type Member,
  object,
  ordered,
  seen,
  shownVariants,
  stockSql,
  urlSql,
} from "./present";

// Products in the modelled dialect (docs/modelled-reads.md, "Modelled reads"), built by SQLite
// as JSON text: a page of products with thousands of variants reaches the Worker as one text per
// product, which it joins into the answer without parsing (docs/design.md, "Answers from D1"). The same
// fields, types and key order as the JavaScript presenters of modelled.ts, which remain the
// reference: test/products.list.rows.test.ts compares the two on random products.

/** "YYYY-MM-DD HH:MM:SS" in UTC from epoch milliseconds (dateText). */
const date = (c: string) => `iif(${c} IS NULL, '', strftime('%Y-%m-%d %H:%M:%S', ${c} / 1000, 'unixepoch'))`;
const json = (text: string) => `json(${text})`;
const P = (c: SQLiteColumn) => col("p", c);
const V = (c: SQLiteColumn) => col("v", c);

/** The modelled dialect's SQL of a described field over its column. */
function modelled(f: Field | undefined, c: (f: Field) => SQLiteColumn, alias: string) {
  if (!f?.modelled) return undefined;
  const column = c(f);
  return MODELLED[f.modelled].sql(col(alias, column), !column.notNull);
}
const productModelled = (k: string) => modelled(productField(k), productColumn, "p");
const variantModelled = (k: string) => modelled(variantField(k), variantColumn, "v");

// `p` is a product row with the columns option_name0 to option_name4 (OPTION_NAMES), grouped with
// its variants `v` (list.ts): their count and qty sum are aggregates of that one pass (./present.ts).

/** The fields of a product in a list (url from STORE_URL; docs/products.md, "Categories, URLs and images"). */
const BASE = ordered<ModelledProductSpecial>(MODELLED_BASE, productModelled);
const base = (stock: string): Member[] =>
  BASE({
    id: `CAST(${P(products.id)} AS TEXT)`,
    hasVariants: `iif(${COUNT} > 0, '1', '0')`,
    qty: `CAST(${stock} AS TEXT)`,
    stock,
    date_modified: date(P(products.updatedAt)),
    url: urlSql(),
    headcategory_name: HEAD_SQL,
    categories: json(`coalesce(${CATEGORIES_SQL}, '[]')`),
  });

const DETAILS = ordered<never>(MODELLED_DETAILS, productModelled)({});

/** The product's option name `i` (0 to 4), read once per product into the row (OPTION_NAMES). */
const option = (i: number) => `p.option_name${i}`;
/** The {"name", "val"} object of option slot `i` (0 to 4) of a variant `v`. */
const optionValue = (i: number) =>
  `json_object('name', ${option(i)}, 'val', coalesce(${V(variants[`option${i + 1}` as "option1"])}, ''))`;
const VARIANT = ordered<ModelledVariantSpecial>(
  MODELLED_VARIANT,
  variantModelled,
)({
  id: `CAST(${V(variants.id)} AS TEXT)`,
  product_id: `CAST(${V(variants.productId)} AS TEXT)`,
  image_id: "''",
  hidden: `iif(${V(variants.visible)} = 1, '0', '1')`,
  preorder: "'0'",
  preselected: "'0'",
  min_purchase_quantity: "''",
  max_purchase_quantity: "''",
  disable_minusqty: json(`iif(${V(variants.noMinus)} = 1, 'true', 'false')`),
  // One object per option name, without a json_each per variant (30 ms of SQL on a page of 500):
  // a product has as many names as non-null slots, its first ones, so the array is one of six,
  // built by json_array without text to parse again (about 4 ms on that page against
  // concat_ws and json()).
  values: `CASE ${[0, 1, 2, 3, 4].map((i) => `(${option(i)} IS NOT NULL)`).join(" + ")} ${[0, 1, 2, 3, 4, 5]
    .map((n) => `WHEN ${n} THEN json_array(${Array.from({ length: n }, (_, i) => optionValue(i)).join(", ")})`)
    .join(" ")} END`,
});

/**
 * The SQL of a product's modelled JSON as parts, over a row `p` of products with OPTION_NAMES,
 * grouped with its variants `v`. Without details `head` is the whole object. With details the
 * answer's object is `head` without its closing brace, `"variants":[`, the `variant` objects
 * joined by commas, `]`, and `tail`'s members: the variants travel in runs of their own, so no text
 * D1 returns grows with a product's variants past what one value may hold (docs/design.md,
 * "Answers from D1").
 */
export function productParts(withDetails: boolean, view?: PublicView) {
  const stock = stockSql(view);
  const fields = base(stock);
  if (!withDetails) return { head: object(seen(fields, view, stock)) };
  const head = object(kept([...fields, ...DETAILS], view));
  // Bundles do not exist here: no product has bundle content.
  const tail = object([["product_package_products", "json('[]')"], ...availability(view, stock)]);
  return { head, tail, variant: object(seen(VARIANT, view, V(variants.qty))), variantFilter: shownVariants(view) };
}
