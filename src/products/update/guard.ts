import { products, staleReads, variants } from "../../db/schema";
import { optionColumn, sqlNames } from "../../platform/columns";
import { VERSION_SQL } from "../version";

const P = sqlNames(products);
const V = sqlNames(variants);
const STALE = sqlNames(staleReads);

// The guard of a PUT round's write batch (docs/products.md, "Updating products"): the batch fails whole, and
// is planned again from a fresh read, when what its plans depend on changed since the read.
//
// A plan depends on the product's structure, not on every value: which variants exist (ids), how
// they are matched and checked (SKUs, option values, option names), where they stand (positions),
// the product's own SKU and disable_minusqty, its stock where the plan clears a negative one, its categories where headcategory_name
// rearranges the stored ones, and its missing slug where the plan derives one. Every field an entry gives is written as given (./write.ts), and fields it leaves out are
// kept from the row as it is when the batch runs, so a plan does not depend on values other
// writers change: writers that only change values (a stock or price sync) of one product no longer
// exclude one another. Stock floors, SKU uniqueness and option combinations are constraints, so
// they hold whatever commits in between. updated_at still moves on every write (caches rely on it).

/**
 * The structure of product `p` as one string, as the guard makes it; the read (./select.ts) gets
 * the same text from SQLite's JSON of its parts, the product's head and each variant's element, so
 * the two compare exactly (no formatting to agree on between JavaScript and SQLite). In the order
 * of the product's index (position, then id), so no sort is billed as rows read.
 */
export const STRUCTURE_COLUMNS = [V.id, V.sku, ...[1, 2, 3, 4, 5].map((n) => optionColumn(V, n)), V.position];
export const STRUCTURE_SQL = `(
  SELECT json_array(p.${P.sku}, p.${P.optionNames}, p.${P.disableMinusqty}, json_group_array(json_array(
    ${STRUCTURE_COLUMNS.map((c) => `v.${c}`).join(", ")})))
  FROM (SELECT * FROM ${V.$} WHERE ${V.$}.${V.productId} = p.${P.id}
    ORDER BY ${V.$}.${V.position}, ${V.$}.${V.id}) AS v)`;

/**
 * Fails the batch through the always-false CHECK of stale_reads (src/db/schema/catalog.ts) when a product
 * of `?1` (rows `{id, structure, stock?, categories?, slug?, version?, expect?}`) is gone, or its
 * structure, or (when the row gives them) its stock, categories, slug or version, is not what
 * the plan was made from, or a count it expects (`expect`: [variant id or null, qty]) is not the stored one.
 */
export const STRUCTURE_GUARD = `
  INSERT INTO ${STALE.$} (${STALE.productId})
  SELECT j.value->>'id' FROM json_each(?1) AS j LEFT JOIN ${P.$} AS p ON p.${P.id} = j.value->>'id'
  WHERE p.${P.id} IS NULL OR ${STRUCTURE_SQL} IS NOT j.value->>'structure'
    OR (json_type(j.value, '$.stock') IS NOT NULL AND p.${P.stock} IS NOT j.value->>'stock')
    OR (json_type(j.value, '$.categories') IS NOT NULL AND p.${P.categories} IS NOT j.value->>'categories')
    OR (json_type(j.value, '$.slug') IS NOT NULL AND p.${P.slug} IS NOT j.value->>'slug')
    OR (json_type(j.value, '$.version') IS NOT NULL AND ${VERSION_SQL} IS NOT j.value->>'version')
    OR EXISTS (SELECT 1 FROM json_each(j.value, '$.expect') AS e LEFT JOIN ${V.$} AS v
      ON v.${V.id} = e.value->>0 AND v.${V.productId} = p.${P.id}
      WHERE iif(e.value->>0 IS NULL, p.${P.stock}, v.${V.qty}) IS NOT e.value->>1)`;
