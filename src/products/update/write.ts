import { products, staleReads, variants } from "../../db/schema";
import { optionColumn, sqlNames } from "../../platform/columns";
import { type DB, jsonChunks, stmt, textChunks } from "../../platform/d1";
import { newEvent, outboxStatement } from "../../webhooks/outbox";
import { PRODUCT_FIELDS, SCALAR_FIELDS, VARIANT_FIELDS } from "../fields";
import { INSERT_VARIANTS } from "../inserts";
import { minimalJson, ownJson, type ProductRow } from "../present";
import type { WriteOptions } from "../route";
import { VARIANT_VALUES as VALUE_FIELDS, valuesMoved } from "../variants";
import { VERSION_SQL, versionBumps } from "../version";
import type { Plan } from "./plan";
import type { PlanVariant } from "./select";
import { changes, type VariantState } from "./states";

// The write batch of a PUT round (docs/design.md, "Writes": one write of what changed, guarded):
// what the plans' product rows and variant states differ in from the rows as read, in groups by
// the index entries their columns write (a statement a group, whatever the rows), behind a guard on
// what the plans depend on (the product's structure, not its values). Fields an entry leaves out
// are kept from the row as the batch finds it.

const P = sqlNames(products);
const V = sqlNames(variants);
const STALE = sqlNames(staleReads);

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
 * of `?1` (rows `{id, structure, stock?, price?, categories?, slug?, version?, expect?}`) is gone, or its
 * structure, or (when the row gives them) its stock, price, categories, slug or version, is not what
 * the plan was made from, or a count it expects (`expect`: [variant id or null, qty]) is not the stored one.
 */
export const STRUCTURE_GUARD = `
  INSERT INTO ${STALE.$} (${STALE.productId})
  SELECT j.value->>'id' FROM json_each(?1) AS j LEFT JOIN ${P.$} AS p ON p.${P.id} = j.value->>'id'
  WHERE p.${P.id} IS NULL OR ${STRUCTURE_SQL} IS NOT j.value->>'structure'
    OR (json_type(j.value, '$.stock') IS NOT NULL AND p.${P.stock} IS NOT j.value->>'stock')
    OR (json_type(j.value, '$.price') IS NOT NULL AND p.${P.price} IS NOT j.value->>'price')
    OR (json_type(j.value, '$.categories') IS NOT NULL AND p.${P.categories} IS NOT j.value->>'categories')
    OR (json_type(j.value, '$.slug') IS NOT NULL AND p.${P.slug} IS NOT j.value->>'slug')
    OR (json_type(j.value, '$.version') IS NOT NULL AND ${VERSION_SQL} IS NOT j.value->>'version')
    OR EXISTS (SELECT 1 FROM json_each(j.value, '$.expect') AS e LEFT JOIN ${V.$} AS v
      ON v.${V.id} = e.value->>0 AND v.${V.productId} = p.${P.id}
      WHERE iif(e.value->>0 IS NULL, p.${P.stock}, v.${V.qty}) IS NOT e.value->>1)`;

/**
 * `col = the JSON row's value for key when it has the key (null clears), else the current value`;
 * the row is `src`, json_each's value unless a statement carries it elsewhere.
 */
const keep = (table: string, key: string, col = key, json = false, src = "j.value") =>
  `${col} = iif(json_type(${src}, '$.${key}') IS NULL, ${table}.${col}, ${src}${json ? "->" : "->>"}'${key}')`;

// A row's `adjust` (docs/stock.md) moves the count as the batch finds it, never a count the
// Worker read: concurrent sales and adjustments all take effect.
const adjusted = (key: string, src = "j.value") =>
  key === "stock" || key === "qty" ? ` + coalesce(${src}->>'adjust', 0)` : "";

const DELETE_VARIANTS = `DELETE FROM ${V.$} WHERE ${V.id} IN (SELECT value FROM json_each(?1))`;

// SQLite checks UNIQUE per row during a multi-row UPDATE: variants whose SKU or option values
// change first get values no other row has, so swaps between variants succeed.
const PARK_SKUS = `UPDATE ${V.$} SET ${V.sku} = NULL WHERE ${V.id} IN (SELECT value FROM json_each(?1))`;
const PARK_OPTIONS = `UPDATE ${V.$} SET ${V.option1} = char(1) || 'parked ' || ${V.id}
  WHERE ${V.id} IN (SELECT value FROM json_each(?1))`;

// The product's scalar fields are stored under their API names (src/products/fields.ts). Its
// slug has a unique index, so it is set only on the rows whose slug changes.
const UPDATE_PRODUCTS = `
  UPDATE ${P.$} SET ${SCALAR_FIELDS.map((c) => keep(P.$, c) + adjusted(c)).join(", ")},
    ${keep(P.$, "images", P.images, true)}, ${keep(P.$, "option_names", P.optionNames, true)},
    ${keep(P.$, "categories", P.categories, true)},
    ${P.metadata} = CASE WHEN json_type(j.value, '$.metadata') IS NULL THEN ${P.$}.${P.metadata}
      WHEN json_type(j.value, '$.metadata') = 'object' THEN j.value->'metadata' ELSE NULL END,
    ${P.updatedAt} = max(?2, ${P.$}.${P.updatedAt} + 1)
  FROM json_each(?1) AS j WHERE ${P.$}.${P.id} = j.value->>'id'`;
const UPDATE_SLUGS = `UPDATE ${P.$} SET ${P.slug} = j.value->>'slug'
  FROM json_each(?1) AS j WHERE ${P.$}.${P.id} = j.value->>'id'`;

/** A plan's variant row keys (../fields.ts) of the group no index covers, with their column and key on a row. */
const VARIANT_VALUES = (["sku", ...VALUE_FIELDS] as const).map((key) => {
  const { column } = VARIANT_FIELDS[key];
  return [key, V[column], column] as const;
});
// One changed row a variant, written by an upsert that always meets its conflict: each row is a
// variant the guard holds as existing, so the INSERT never inserts and its DO UPDATE writes the
// given fields. It reads 3 rows a variant where UPDATE ... FROM json_each reads 4 (the join's
// scratch table, read again): 2,048 of a sync. DO UPDATE sees only `excluded`, so the inserted row
// carries the plan's JSON row in images (NOT NULL, unchecked); its other columns are defaults no
// CHECK refuses, and product 0 would fail the foreign key were it ever inserted.
// no_minus ("m", only in the rows of a product whose disable_minusqty the plan moves) is set with qty
// in the same row update, so the stock floor CHECK sees the new pair.
const PLANNED = `excluded.${V.images}`;
const UPDATE_VARIANTS = `
  INSERT INTO ${V.$} (${V.id}, ${V.productId}, ${V.images}, ${V.createdAt}, ${V.updatedAt})
  SELECT j.value->>'id', 0, j.value, ?2, ?2 FROM json_each(?1) AS j WHERE true
  ON CONFLICT (${V.id}) DO UPDATE SET ${VARIANT_VALUES.map(([key, col]) => keep(V.$, key, col, false, PLANNED) + adjusted(key, PLANNED)).join(", ")},
    ${keep(V.$, "images", V.images, true, PLANNED)}, ${keep(V.$, "m", V.noMinus, false, PLANNED)}, ${V.updatedAt} = ?2`;
const UPDATE_OPTIONS = `
  UPDATE ${V.$} SET ${[1, 2, 3, 4, 5].map((n) => `${optionColumn(V, n)} = j.value->>'$.v[${n - 1}]'`).join(", ")},
    ${V.updatedAt} = ?2
  FROM json_each(?1) AS j WHERE ${V.$}.${V.id} = j.value->>'id'`;
const UPDATE_POSITIONS = `UPDATE ${V.$} SET ${V.position} = j.value->>'p', ${V.updatedAt} = ?2
  FROM json_each(?1) AS j WHERE ${V.$}.${V.id} = j.value->>'id'`;

// The variants this request did not touch follow their product's disable_minusqty, where the plan
// moves it (the flag is guarded, so elsewhere they follow it already).
const SYNC_NO_MINUS = `
  UPDATE ${V.$} SET ${V.noMinus} = p.${P.disableMinusqty} FROM ${P.$} AS p
  WHERE p.${P.id} = ${V.$}.${V.productId} AND ${V.$}.${V.noMinus} <> p.${P.disableMinusqty}
    AND ${V.$}.${V.productId} IN (SELECT value FROM json_each(?1))`;

/** The stored value of a product field, as a plan's product row would give it. */
function storedField(p: ProductRow, key: string): unknown {
  if (key === "option_names") return p.optionNames;
  if (key === "slug" || key === "categories") return p[key];
  const f = (PRODUCT_FIELDS as Record<string, { column: keyof ProductRow }>)[key];
  return f ? p[f.column] : undefined;
}

const asText = (v: unknown) => (v === null || typeof v !== "object" ? v : JSON.stringify(v));

/** The plan's product row without the fields it leaves as stored; undefined when none changes. */
export function productChanges(plan: Plan, p: ProductRow): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = { id: p.id };
  let any = false;
  for (const [key, v] of Object.entries(plan.product)) {
    if (key === "id") continue;
    if (key === "adjust" ? v === 0 : asText(v) === storedField(p, key)) continue;
    out[key] = v;
    any = true;
  }
  return any ? out : undefined;
}

/** The rows of the batch's statements; a changed variant's rows as their JSON text, built once. */
const noRows = () => ({
  deletes: [] as number[],
  parkSkus: [] as number[],
  parkOptions: [] as number[],
  values: [] as string[],
  options: [] as string[],
  positions: [] as string[],
  inserts: [] as Record<string, unknown>[],
});
type Rows = ReturnType<typeof noRows>;

/**
 * A state's changes against its row, into the groups; whether anything changed. Each row is
 * written as JSON text as it is compared: no object per changed variant, no second pass.
 */
function variantChanges(s: VariantState, row: PlanVariant, rows: Rows, flag: string): boolean {
  let fields = "";
  for (const [key, , field] of VARIANT_VALUES) {
    if (!changes(s, key)) continue;
    if (key === "qty" && s.adjust !== undefined) {
      if (s.adjust !== 0) fields += `,"adjust":${s.adjust}`;
    } else if (s.cur[key] !== row[field]) fields += `,"${key}":${JSON.stringify(s.cur[key])}`;
  }
  if (s.cur.images !== undefined) {
    const images = JSON.stringify(s.cur.images);
    if (images !== row.images) fields += `,"images":${images}`;
  }
  if (fields) {
    rows.values.push(`{"id":${row.id}${fields}${flag}}`);
    if (changes(s, "sku") && s.cur.sku !== row.sku) rows.parkSkus.push(row.id);
  }
  let changed = fields !== "";
  if (changes(s, "values") && valuesMoved(s)) {
    rows.options.push(`{"id":${row.id},"v":${JSON.stringify(s.cur.values)}}`);
    rows.parkOptions.push(row.id);
    changed = true;
  }
  if (s.cur.position !== row.position) {
    rows.positions.push(`{"id":${row.id},"p":${s.cur.position}}`);
    changed = true;
  }
  return changed;
}

/**
 * What the plans change, as the rows of the batch's statements; `changed`, the products with a
 * change (their version moves and they get a product.update event; the others are answered as stored).
 */
export function changesOf(plans: Plan[], stored: Map<number, ProductRow>) {
  const rows = noRows();
  const productRows: Record<string, unknown>[] = [];
  const slugs: { id: number; slug: unknown }[] = [];
  const changed: number[] = [];
  const flagMoved: number[] = [];
  for (const plan of plans) {
    const p = stored.get(plan.productId) as ProductRow;
    const product = productChanges(plan, p);
    const flag = product?.disable_minusqty;
    if (flag !== undefined) flagMoved.push(p.id);
    const carried = flag === undefined ? "" : `,"m":${flag}`;
    let any = plan.deletes.length > 0;
    rows.deletes.push(...plan.deletes);
    for (const s of plan.states) {
      if (s.row) {
        if (s.changed && variantChanges(s, s.row, rows, carried)) any = true;
        continue;
      }
      const { values, ...cols } = s.cur;
      rows.inserts.push({ product_id: plan.productId, ...cols, option_values: values });
      any = true;
    }
    if (product && "slug" in product) {
      slugs.push({ id: p.id, slug: product.slug });
      delete product.slug;
    }
    if (product || slugs.at(-1)?.id === p.id || any) {
      productRows.push(product ?? { id: p.id });
      changed.push(p.id);
    }
  }
  return { rows, productRows, slugs, changed, flagMoved };
}

/**
 * A statement per chunk of rows (one for all but lists near D1's limit on a bound value), none
 * for no rows: even over an empty list a statement reads a row or two.
 */
const each = (db: DB, sql: string, list: unknown[], ...rest: unknown[]) =>
  list.length ? jsonChunks(list).map((json) => stmt(db, sql, json, ...rest)) : [];
/** The same for rows already JSON text. */
const eachText = (db: DB, sql: string, list: string[], ...rest: unknown[]) =>
  list.length ? textChunks(list).map((json) => stmt(db, sql, json, ...rest)) : [];

/**
 * The one write batch of a round, for all its plans: the guard, the changed rows, the
 * product.update events of the changed products, their versions, then every planned product as
 * SQLite's JSON text (src/products/present.ts: the answer needs no further round trip, and 2,048
 * variants are never presented in JavaScript). Order matters: deletes and parking
 * free SKUs and option combinations before anything takes them, the product row (with
 * disable_minusqty) is written before its variants copy the flag.
 */
export function writeBatch(
  db: DB,
  plans: Plan[],
  stored: Map<number, ProductRow>,
  now: number,
  { minimal, keyId }: WriteOptions,
) {
  const { rows, productRows, slugs, changed, flagMoved } = changesOf(plans, stored);
  const changes = changed.map((productId) => newEvent("product.update", { productId, keyId }));
  const statements = [
    stmt(db, STRUCTURE_GUARD, JSON.stringify(plans.map((p) => p.guard))),
    ...each(db, DELETE_VARIANTS, rows.deletes),
    ...each(db, PARK_SKUS, rows.parkSkus),
    ...each(db, PARK_OPTIONS, rows.parkOptions),
    ...each(db, UPDATE_PRODUCTS, productRows, now),
    ...each(db, UPDATE_SLUGS, slugs),
    ...eachText(db, UPDATE_VARIANTS, rows.values, now),
    ...eachText(db, UPDATE_OPTIONS, rows.options, now),
    ...eachText(db, UPDATE_POSITIONS, rows.positions, now),
    ...each(db, INSERT_VARIANTS, rows.inserts, now),
    ...each(db, SYNC_NO_MINUS, flagMoved),
    ...(changes.length ? [outboxStatement(db, changes, now)] : []),
    ...(changed.length ? versionBumps(db, changed) : []),
    (minimal ? minimalJson : ownJson)(
      db,
      `p.${P.id} IN (SELECT value FROM json_each(?1))`,
      JSON.stringify(plans.map((p) => p.productId)),
    ),
  ];
  return { statements, changes };
}
