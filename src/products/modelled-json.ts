import type { PublicView } from "../keys/public";
import { CATEGORIES_SQL, HEAD_SQL } from "./categories";
import { availability, type Field, kept, object, seen } from "./json-sql";

// Products in the modelled dialect (src/docs/modelled-reads.md, "Modelled reads"), built by SQLite
// as JSON text: a page of products with thousands of variants reaches the Worker as one text per
// product, which it joins into the answer without parsing (docs/design.md, "Answers from D1"). The same
// fields, types and key order as the JavaScript presenters of modelled.ts, which remain the
// reference: test/products.list.rows.test.ts compares the two on random products.

/** SQL for "" when null, else the text of the value. */
const s = (col: string) => `coalesce(${col}, '')`;
const flag = (col: string) => `iif(${col} = 1, '1', '0')`;
/** Minor units as two-decimal text (14895 -> "148.95", -50 -> "-0.50"), as moneyText. */
const money = (col: string) =>
  `(iif(${col} < 0, '-', '') || (abs(${col}) / 100) || '.' || substr('0' || (abs(${col}) % 100), -2))`;
const maybeMoney = (col: string) => `iif(${col} IS NULL, '', ${money(col)})`;
/** A product's price: "899" when whole, else two decimals; "" when none (priceText). */
const price = (col: string) =>
  `iif(${col} IS NULL, '', iif(${col} % 100 = 0, CAST(${col} / 100 AS TEXT), ${money(col)}))`;
/** A REAL as JavaScript's String() writes it for the values stored here ("2", "1.5"); null is "0". */
const weight = (col: string) =>
  `iif(${col} IS NULL, '0', iif(${col} = CAST(${col} AS INTEGER), CAST(CAST(${col} AS INTEGER) AS TEXT), CAST(${col} AS TEXT)))`;
/** "YYYY-MM-DD HH:MM:SS" in UTC from epoch milliseconds (dateText). */
const date = (col: string) => `iif(${col} IS NULL, '', strftime('%Y-%m-%d %H:%M:%S', ${col} / 1000, 'unixepoch'))`;
/**
 * Stored images ([{url, alttext}]) as the modelled object keyed by position from "1". Most
 * variants have none: they skip the subquery, one per variant of a page otherwise.
 */
const images = (col: string) =>
  `iif(${col} = '[]', json('{}'), json(coalesce((SELECT json_group_object(CAST(i.key + 1 AS TEXT), json_object('image', i.value ->> 'url',
    'alttext', coalesce(i.value ->> 'alttext', ''))) FROM json_each(${col}) AS i), '{}')))`;
const json = (text: string) => `json(${text})`;

// `p` is the product row with two more columns: vc (its variants' count) and vq (their qty sum).
const STOCK_OF = "iif(p.vc > 0, p.vq, p.stock)";

const BASE: Field[] = [
  ["id", "CAST(p.id AS TEXT)"],
  ["sku", s("p.sku")],
  ["hasVariants", "iif(p.vc > 0, '1', '0')"],
  ["title", s("p.title")],
  ["visible", flag("p.visible")],
  ["qty", `CAST(${STOCK_OF} AS TEXT)`],
  ["stock", STOCK_OF],
  ["price", price("p.price")],
  ["before_price", price("p.before_price")],
  ["purchase_price", price("p.purchase_price")],
  ["tax_rate", s("CAST(p.tax_rate AS TEXT)")],
  ["weight", weight("p.weight")],
  ["gtin", s("p.gtin")],
  ["qty_location", s("p.qty_location")],
  ["disable_minusqty", flag("p.disable_minusqty")],
  ["supplier_name", s("p.supplier_name")],
  ["supplier_sku", s("p.supplier_sku")],
  ["date_modified", date("p.updated_at")],
];
/** The fields after BASE's (src/docs/products.md, "Categories, URLs and images"); url from STORE_URL. */
const placed = (url: string): Field[] => [
  ["url", url],
  ["headcategory_name", HEAD_SQL],
  ["categories", json(`coalesce(${CATEGORIES_SQL}, '[]')`)],
];

const VARIANT: Field[] = [
  ["id", "CAST(v.id AS TEXT)"],
  ["product_id", "CAST(v.product_id AS TEXT)"],
  ["sku", s("v.sku")],
  ["price", money("v.price")],
  ["before_price", maybeMoney("v.before_price")],
  ["purchase_price", maybeMoney("v.purchase_price")],
  ["qty", "CAST(v.qty AS TEXT)"],
  ["weight", weight("v.weight")],
  ["gtin", s("v.gtin")],
  ["supplier_sku", s("v.supplier_sku")],
  ["qty_location", s("v.qty_location")],
  ["image_id", "''"],
  ["images", images("v.images")],
  ["hidden", "iif(v.visible = 1, '0', '1')"],
  ["preorder", "'0'"],
  ["preselected", "'0'"],
  ["min_purchase_quantity", "''"],
  ["max_purchase_quantity", "''"],
  ["disable_minusqty", json("iif(v.no_minus = 1, 'true', 'false')")],
  // One object per option name, without a json_each per variant (30 ms of SQL on a page of 500).
  [
    "values",
    json(
      `'[' || concat_ws(',', ${[0, 1, 2, 3, 4]
        .map(
          (i) =>
            `iif(p.option_names->>${i} IS NULL, NULL, json_object('name', p.option_names->>${i}, 'val', coalesce(v.option${i + 1}_value, '')))`,
        )
        .join(", ")}) || ']'`,
    ),
  ],
];

const DETAILS: Field[] = [
  ["description", s("p.description")],
  ["seo_title", s("p.seo_title")],
  ["seo_description", s("p.seo_description")],
  ["datafield_1", s("p.datafield_1")],
  ["datafield_2", s("p.datafield_2")],
  ["datafield_3", s("p.datafield_3")],
  ["images", images("p.images")],
];

/**
 * The SQL of a product's modelled JSON as parts, over a row `p` of products with the columns vc and
 * vq added (VARIANT_TOTALS). Without details `head` is the whole object. With details the answer's
 * object is `head` without its closing brace, `"variants":[`, the `variant` objects joined by
 * commas, `]`, and `tail`'s members: the variants travel in rows of their own, so no text D1
 * returns grows with a product's variants past what one row may hold (docs/design.md, "Answers from D1").
 */
export function productParts(withDetails: boolean, url: string, view?: PublicView) {
  const base = [...BASE, ...placed(url)];
  if (!withDetails) return { head: object(seen(base, view, STOCK_OF)) };
  const head = object(kept([...base, ...DETAILS], view));
  // Bundles do not exist here: no product has bundle content.
  const tail = object([["product_package_products", "json('[]')"], ...availability(view, STOCK_OF)]);
  return {
    head,
    tail,
    variant: object(seen(VARIANT, view, "v.qty")),
    // A storefront never sees a hidden variant.
    variantFilter: view ? "v.visible = 1" : "1",
  };
}

/**
 * The variants' count and stock sum that the parts read as p.vc and p.vq; a storefront's stock is
 * that of the variants it sees (`visibleOnly`).
 */
export const variantTotals = (
  visibleOnly: boolean,
) => `(SELECT count(*) FROM variants AS v WHERE v.product_id = p.id) AS vc,
  (SELECT coalesce(sum(v.qty), 0) FROM variants AS v WHERE v.product_id = p.id${visibleOnly ? " AND v.visible = 1" : ""}) AS vq`;
export const VARIANT_TOTALS = variantTotals(false);
