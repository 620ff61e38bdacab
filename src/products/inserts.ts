import { products, variants } from "../db/schema";
import { optionColumn, sqlNames } from "../platform/columns";
import {
  fieldValueSql,
  PRODUCT_FIELD_NAMES,
  VARIANT_FIELDS,
  type VariantColumn,
  type VariantFieldName,
} from "./fields";
import { OPTION_SLOTS as SLOTS, type VariantEntry } from "./schema";
import { VALUE_KEYS, VARIANT_VALUES, type VariantValue } from "./variants";

// The statements that insert products and variants (./create.ts, ./update/write.ts), over lists
// bound as one JSON value each, with tables and columns named through the schema
// (src/platform/columns.ts); and the packed rows a create binds its variants as.

const P = sqlNames(products);
const V = sqlNames(variants);
const each = (f: (n: number) => string, sep: string) => SLOTS.map(f).join(sep);
const vo = (n: number) => optionColumn(V, n);

// A create's variant entry travels as an array: its position and its product's place in the batch, then what the
// statements read, in FIELDS' order, up to the last field it gives (SQLite reads a place past the
// end as NULL). Arrays of values serialise at about a third of the CPU of the entry objects and
// half their bytes, which the binding copies again when it sends the batch; ending each at its
// last field spares a quarter of a large create's bytes, the nulls of the fields feeds leave out.
type Field = "sku" | `variant_option${1 | 2 | 3 | 4 | 5}_value` | VariantValue | "images";
/** The variant's fields (./fields.ts) with its option values after its SKU, images last. */
const FIELDS: readonly Field[] = ["sku", ...VALUE_KEYS, ...VARIANT_VALUES, "images"];
/** What a new variant is written from, its SKU aside: each field with its column and the SQL it takes when absent. */
const WRITTEN = (Object.entries(VARIANT_FIELDS) as [VariantFieldName, { column: VariantColumn; absent?: string }][])
  .filter(([name]) => name !== "sku")
  .map(([name, f]) => [name as Field, V[f.column], f.absent] as const);
/** Where a created variant's position and its product's place in the batch stand. */
const POSITION = 0;
const OWNER = 1;
const FIRST = 2;
/** SQL: field `f` of the entry array `data` (images as their JSON text). */
const at = (data: string, f: Field) => `${data}->>'$[${FIRST + FIELDS.indexOf(f)}]'`;

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
const writtenColumns = WRITTEN.map(([, column]) => column).join(", ");

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

const v = (n: number) => at("j.value", VALUE_KEYS[n - 1]);

/**
 * Inserts the variants of products created in the same batch, from `from` (the entries `j` and
 * their product `p`): ?1 their entries packed (packedRows: each with its position and its
 * product's place in ?3), ?2 now, ?3 the products' tokens. Checked by planCreate; a variant without
 * a price takes its product's. The place, not the 36-character token, travels with each of up to
 * 2,048 entries.
 */
const insertPacked = (from: string) => `
  INSERT INTO ${V.$} (${V.productId}, ${V.sku}, ${each(vo, ", ")}, ${writtenColumns}, ${V.noMinus}, ${V.position},
    ${V.createdAt}, ${V.updatedAt})
  SELECT p.${P.id}, ${at("j.value", "sku")}, ${each((k) => `coalesce(${v(k)}, '')`, ", ")},
    ${WRITTEN.map(([f, , absent]) => (absent ? `coalesce(${at("j.value", f)}, ${absent})` : at("j.value", f))).join(", ")},
    p.${P.disableMinusqty}, j.value->>'$[${POSITION}]', ?2, ?2
  FROM ${from}`;

/** INSERT_PACKED's variants of one product: the product is read once (each entry finding it reads one row more). */
export const INSERT_PACKED_ONE = insertPacked(`${P.$} AS p, json_each(?1) AS j WHERE p.${P.token} = ?3 ->> 0`);

/**
 * The variants of several products, each entry finding its product by the token at its place (an
 * entry joined to the list of tokens read the whole list, so rows read grew with entries times
 * products).
 */
export const INSERT_PACKED = insertPacked(
  `json_each(?1) AS j JOIN ${P.$} AS p ON p.${P.token} = ?3 ->> (j.value->>'$[${OWNER}]')`,
);

// Every row is a copy of this row of nulls, filled in place and cut after its last field: an
// array of its exact length whose elements are never a hole, which JSON.stringify writes on its
// fast path. Rows made with `new Array(n)` and grown by push took twice the memory and 40 % more
// CPU, packing and serialising included (a create of 2,048 entries, measured in Node).
const NULLS: null[] = [];
for (let i = 0; i < FIRST + FIELDS.length; i++) NULLS.push(null);

/** The entries as packed rows, each with its position and its product's place (`owner`) in the batch. */
export function packedRows(entries: VariantEntry[], owner: number): unknown[][] {
  const out: unknown[][] = [];
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    const row: unknown[] = NULLS.slice();
    let end = FIRST;
    for (let f = 0; f < FIELDS.length; f++) {
      const v = e[FIELDS[f]];
      if (v !== undefined) {
        row[FIRST + f] = v;
        end = FIRST + f + 1;
      }
    }
    row.length = end;
    row[POSITION] = i;
    row[OWNER] = owner;
    out.push(row);
  }
  return out;
}
