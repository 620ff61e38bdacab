import { VERSION_SQL } from "../version";

// The guard of a PUT round's write batch (docs/products.md, "Updating products"): the batch fails whole, and
// is planned again from a fresh read, when what its plans depend on changed since the read.
//
// A plan depends on the product's structure, not on every value: which variants exist (ids), how
// they are matched and checked (SKUs, option values, option names), where they stand (positions),
// the product's own SKU and disable_minusqty, the product's price where a new variant inherits
// it, its stock where the plan clears a negative one, its categories where headcategory_name
// rearranges the stored ones, and its missing slug where the plan derives one. Every field an entry gives is written as given (./write.ts), and fields it leaves out are
// kept from the row as it is when the batch runs, so a plan does not depend on values other
// writers change: writers that only change values (a stock or price sync) of one product no longer
// exclude one another. Stock floors, SKU uniqueness and option combinations are constraints, so
// they hold whatever commits in between. updated_at still moves on every write (caches rely on it).

/**
 * The structure of product `p` as one string, the same SQL for the read and for the guard, so the
 * two compare exactly (no formatting to agree on between JavaScript and SQLite).
 */
export const STRUCTURE_SQL = `(
  SELECT json_array(p.sku, p.option_names, p.disable_minusqty, json_group_array(json_array(
    v.id, v.sku, v.option1_value, v.option2_value, v.option3_value, v.option4_value, v.option5_value, v.position)))
  FROM (SELECT * FROM variants WHERE variants.product_id = p.id ORDER BY variants.id) AS v)`;

/**
 * Fails the batch through the always-false CHECK of stale_reads (src/db/schema.ts) when a product
 * of `?1` (rows `{id, structure, price?, stock?, categories?, slug?, version?, expect?}`) is gone, or its
 * structure, or (when the row gives them) its price, stock, categories, slug or version, is not what
 * the plan was made from, or a count it expects (`expect`: [variant id or null, qty]) is not the stored one.
 */
export const STRUCTURE_GUARD = `
  INSERT INTO stale_reads (product_id)
  SELECT j.value->>'id' FROM json_each(?1) AS j LEFT JOIN products AS p ON p.id = j.value->>'id'
  WHERE p.id IS NULL OR ${STRUCTURE_SQL} IS NOT j.value->>'structure'
    OR (json_type(j.value, '$.price') IS NOT NULL AND p.price IS NOT j.value->>'price')
    OR (json_type(j.value, '$.stock') IS NOT NULL AND p.stock IS NOT j.value->>'stock')
    OR (json_type(j.value, '$.categories') IS NOT NULL AND p.categories IS NOT j.value->>'categories')
    OR (json_type(j.value, '$.slug') IS NOT NULL AND p.slug IS NOT j.value->>'slug')
    OR (json_type(j.value, '$.version') IS NOT NULL AND ${VERSION_SQL} IS NOT j.value->>'version')
    OR EXISTS (SELECT 1 FROM json_each(j.value, '$.expect') AS e LEFT JOIN variants AS v
      ON v.id = e.value->>0 AND v.product_id = p.id
      WHERE iif(e.value->>0 IS NULL, p.stock, v.qty) IS NOT e.value->>1)`;
