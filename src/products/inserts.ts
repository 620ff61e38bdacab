import { products, variants } from "../db/schema";
import { optionColumn, sqlNames } from "../platform/columns";
import { fieldValueSql, PRODUCT_FIELD_NAMES } from "./fields";
import { at, COLUMN_OF, OWNER, POSITION, SLOTS, value, WRITTEN } from "./packed";

// The statements that insert products and variants (./create.ts, ./update/write.ts), over lists
// bound as one JSON value each, with tables and columns named through the schema (src/platform/columns.ts).

// Tables and columns through the schema (src/platform/columns.ts).
const P = sqlNames(products);
const V = sqlNames(variants);
const each = (f: (n: number) => string, sep: string) => SLOTS.map(f).join(sep);
const vo = (n: number) => optionColumn(V, n);

/** ?1 the products as JSON rows (their fields by API name, fields.ts), ?2 now, ?3 the key's id. */
const insertProducts = (slug: string) => `
  INSERT INTO ${P.$} (${P.token}, ${PRODUCT_FIELD_NAMES.join(", ")}, ${P.optionNames}, ${P.slug}, ${P.categories},
    ${P.createdAt}, ${P.updatedAt}, ${P.keyId})
  SELECT p.value->>'token', ${PRODUCT_FIELD_NAMES.map((name) => fieldValueSql("p.value", name)).join(", ")},
    p.value->'option_names', ${slug}, p.value->'categories', ?2, ?2, ?3
  FROM json_each(?1) AS p`;

/** Products whose derived slugs ("<base>~<token>") the slug triggers resolve row by row (drizzle/0006_categories.sql). */
export const INSERT_PRODUCTS = insertProducts("p.value->>'slug'");

/**
 * A derived slug resolved as the slug triggers resolve it (drizzle/0006_categories.sql,
 * products_slug_update): its base where no product has it, else the base and one more than the
 * largest number any product has after "<base>-".
 */
const resolvedSlug = (
  slug: string,
) => `(SELECT iif(NOT EXISTS (SELECT 1 FROM ${P.$} AS o WHERE o.${P.slug} = b.base), b.base,
    b.base || '-' || (1 + coalesce((SELECT max(CAST(substr(o.${P.slug}, length(b.base) + 2) AS INTEGER))
      FROM ${P.$} AS o WHERE o.${P.slug} > b.base || '-' AND o.${P.slug} < b.base || '.'
        AND substr(o.${P.slug}, length(b.base) + 2) NOT GLOB '*[^0-9]*'), 1)))
  FROM (SELECT substr(${slug}, 1, instr(${slug}, '~') - 1) AS base) AS b)`;

/**
 * INSERT_PRODUCTS for a batch of one product, its derived slug resolved in the insert: left to the
 * triggers, the row and its slug's index entry are written twice more (4 rows). Only for one: the
 * products of one statement each see the slugs of those before them only through the triggers.
 */
export const INSERT_PRODUCT = insertProducts(
  `iif(instr(p.value->>'slug', '~') > 0, ${resolvedSlug("p.value->>'slug'")}, p.value->>'slug')`,
);
const writtenColumns = WRITTEN.map(([f]) => V[COLUMN_OF[f]]).join(", ");

/**
 * Inserts variants given as JSON rows (an update plan's, ./update/write.ts), each with its
 * `product_id`, keyed by column name; no_minus is copied from the product row.
 */
export const INSERT_VARIANTS = `
  INSERT INTO ${V.$} (${V.productId}, ${V.sku}, ${each(vo, ", ")}, ${writtenColumns}, ${V.noMinus}, ${V.position},
    ${V.createdAt}, ${V.updatedAt})
  SELECT p.${P.id}, v.value->>'sku', ${each((n) => `v.value->>'$.option_values[${n - 1}]'`, ", ")},
    ${WRITTEN.map(([f]) => `v.value${f === "images" ? "->" : "->>"}'${f}'`).join(", ")},
    p.${P.disableMinusqty}, v.value->>'position', ?2, ?2
  FROM json_each(?1) AS v JOIN ${P.$} AS p ON p.${P.id} = v.value->>'product_id'`;

const v = (n: number) => at("j.value", value(n));

/**
 * Inserts the variants of products created in the same batch, from `from` (the entries `j` and
 * their product `p`): ?1 their entries packed (./packed.ts: each with its position and its
 * product's place in ?3), ?2 now, ?3 the products' tokens. Checked by planCreate; a variant without
 * a price takes its product's. The place, not the 36-character token, travels with each of up to
 * 2,048 entries.
 */
const insertPacked = (from: string) => `
  INSERT INTO ${V.$} (${V.productId}, ${V.sku}, ${each(vo, ", ")}, ${writtenColumns}, ${V.noMinus}, ${V.position},
    ${V.createdAt}, ${V.updatedAt})
  SELECT p.${P.id}, ${at("j.value", "sku")}, ${each((k) => `coalesce(${v(k)}, '')`, ", ")},
    ${WRITTEN.map(([f, absent]) => (absent ? `coalesce(${at("j.value", f)}, ${absent})` : at("j.value", f))).join(", ")},
    p.${P.disableMinusqty}, j.value->>'$[${POSITION}]', ?2, ?2
  FROM ${from}`;

/**
 * INSERT_PACKED's variants of one product: the product is read once (each entry finding it reads
 * one row more).
 */
export const INSERT_PACKED_ONE = insertPacked(`${P.$} AS p, json_each(?1) AS j WHERE p.${P.token} = ?3 ->> 0`);

/**
 * The variants of several products, each entry finding its product by the token at its place (an
 * entry joined to the list of tokens read the whole list, so rows read grew with entries times
 * products).
 */
export const INSERT_PACKED = insertPacked(
  `json_each(?1) AS j JOIN ${P.$} AS p ON p.${P.token} = ?3 ->> (j.value->>'$[${OWNER}]')`,
);
