import { getTableConfig } from "drizzle-orm/sqlite-core";
import { products, variants } from "../db/schema";
import { type PublicView, shownTo } from "../keys/public";
import { sqlNames } from "../platform/columns";

// What the two builders of product JSON in SQL (./own-json.ts, ./modelled-json.ts) share: an
// object as a list of [key, SQL] fields, and what a publishable key sees of it
// (src/keys/public.ts, the presenter's filter they are held to).

/** A key and the SQL of its value. */
export type Field = [key: string, sql: string];

/** `alias.name` of a Drizzle column: SQL that names columns through the schema (src/db/schema/). */
export const col = (alias: string, c: { name: string }) => `${alias}.${c.name}`;
/** The SQL names of the products and variants tables, through the schema. */
export const PRODUCTS = sqlNames(products).$;
export const VARIANTS = sqlNames(variants).$;

// The index on (product_id, position), whose entries end with the id: a product's variants in
// answer order, read without a sort. Named in the statements that aggregate them (INDEXED BY), so
// that the unique index on the option values, which starts with product_id too, is never taken.
const byPosition = getTableConfig(variants).indexes.find(({ config: { columns: c } }) => {
  const [product, position] = c as unknown[];
  return c.length === 2 && product === variants.productId && position === variants.position;
});
if (!byPosition) throw new Error("no index on variants (product_id, position)");
/**
 * The variants table as `alias`, read through that index: joined to products in id order and grouped by
 * product, each product's variants reach its aggregates in answer order (position, then id), in one
 * pass and without a sort (docs/design.md, "Answers from D1").
 */
export const variantsInOrder = (alias: string) => `${VARIANTS} AS ${alias} INDEXED BY ${byPosition.config.name}`;

/**
 * The fields of an answer's key order (src/products/key-order.ts): a described field's SQL by
 * `described`, found once; every other key's (one SQL, or several fields in its place) from the
 * `special` given to the function returned.
 */
export function ordered<S extends string>(order: readonly string[], described: (key: string) => string | undefined) {
  const found = order.map((k) => [k, described(k)] as const);
  return (special: Record<S, string | Field[]>): Field[] =>
    found.flatMap(([k, sql]): Field[] => {
      if (sql !== undefined) return [[k, sql]];
      const s = (special as Record<string, string | Field[]>)[k];
      if (s === undefined) throw new Error(`no SQL for the answer's key ${k}`);
      return typeof s === "string" ? [[k, s]] : s;
    });
}

export const object = (fields: Field[]) => `json_object(${fields.map(([k, v]) => `'${k}', ${v}`).join(", ")})`;

/** The fields a publishable key with `view` sees; all of them for a secret key (no view). */
export const kept = (fields: Field[], view: PublicView | undefined): Field[] =>
  view ? fields.filter(([k]) => shownTo(view, k)) : fields;

/** A storefront without the stock scope sees availability instead of a count. */
export const availability = (view: PublicView | undefined, stock: string): Field[] =>
  view && !view.stock ? [["availability", `iif(${stock} > 0, 'in_stock', 'out_of_stock')`]] : [];

/** A product's or variant's fields as `view` sees them, the availability of `stock` last. */
export const seen = (fields: Field[], view: PublicView | undefined, stock: string): Field[] => [
  ...kept(fields, view),
  ...availability(view, stock),
];
