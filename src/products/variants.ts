import { products, variants } from "../db/schema";
import { sqlNames } from "../platform/columns";
import { utf8Length } from "../platform/d1";
import {
  type Field,
  type ProductColumn,
  TEXT_FIELDS,
  VARIANT_FIELDS,
  type VariantColumn,
  type VariantFieldName,
} from "./fields";
import { type OptionValues, type ProductRow, variantValues } from "./present";
import { OPTION_SLOTS, type VariantEntry } from "./schema";
import type { PlanVariant } from "./update/select";
import type { VariantState } from "./update/states";

// Option rules (docs/products.md, "Updating products"): a product has up to five option names shared by its variants;
// each variant has a value for each named option and no two variants share a combination.

type Named = Partial<Record<`variant_option${1 | 2 | 3 | 4 | 5}_${"name" | "value"}`, string>>;

// The option keys, built once: a key built per lookup is a new string every time, and this runs
// for every entry of a sync of up to 2,048 variants.
/** A variant's own value fields (./fields.ts), SKU and images aside, in the description's order. */
export type VariantValue = Exclude<VariantFieldName, "sku" | "images">;
export const VARIANT_VALUES = (Object.keys(VARIANT_FIELDS) as VariantFieldName[]).filter(
  (f): f is VariantValue => f !== "sku" && f !== "images",
);

export const NAME_KEYS = OPTION_SLOTS.map((n) => `variant_option${n}_name` as const);
export const VALUE_KEYS = OPTION_SLOTS.map((n) => `variant_option${n}_value` as const);

/** The option names an entry gives, or undefined when it names none. */
export function namesOf(e: Named): { names?: string[]; error?: string } {
  const slots = NAME_KEYS.map((k) => e[k]);
  const last = slots.findLastIndex((s) => s !== undefined);
  if (last < 0) return {};
  const gap = slots.slice(0, last).indexOf(undefined);
  if (gap >= 0) return { error: `variant_option${gap + 1}_name: option names must be given in order from option 1` };
  const names = slots.slice(0, last + 1) as string[];
  if (new Set(names).size !== names.length) return { error: "variant_option1_name: option names must differ" };
  return { names };
}

export const sameNames = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((x, i) => x === b[i]);

export type Located<T> = { entry: T; path: string };
/** agreedNames' readers of located entries: the entry, its path. */
export const LOCATED = [(l: Located<Named>) => l.entry, (l: Located<Named>) => l.path] as const;

/** Whether the entry names exactly these options, in these slots (and no others; none for []). */
function givesExactly(e: Named, names: readonly string[]): boolean {
  for (let i = 0; i < NAME_KEYS.length; i++) if (e[NAME_KEYS[i]] !== names[i]) return false;
  return true;
}

/** No names, no errors: one empty list for every entry that has none. */
export const NONE: string[] = [];

/**
 * The option names a list agrees on (`entry` reads each element's entry): every entry that names
 * options must name the same ones; undefined names when no entry names any. Without `path` (a
 * create's first pass: no object per entry of up to 2,048) it stops at the first disagreement,
 * unworded; the create then asks again with paths.
 */
export function agreedNames<T>(
  list: readonly T[],
  entry: (t: T) => Named,
  path?: (t: T, i: number) => string,
): { names?: string[]; errors: string[] } {
  let names: string[] | undefined;
  let from = -1;
  const errors: string[] = [];
  for (let i = 0; i < list.length; i++) {
    const e = entry(list[i]);
    // Nearly every entry repeats the names the first one gave, or (an update's) names none:
    // confirm that without allocating.
    if (givesExactly(e, names ?? NONE)) continue;
    const r = namesOf(e);
    const differs = !r.error && names && r.names && !sameNames(names, r.names);
    if (!r.error && !differs) {
      if (r.names && !names) {
        names = r.names;
        from = i;
      }
      continue;
    }
    if (!path) return { names, errors: [""] };
    const at = path(list[i], i);
    if (r.error) errors.push(`${at}.${r.error}`);
    else errors.push(`${at}.variant_option1_name: option names differ from those of ${path(list[from], from)}`);
  }
  return { names, errors };
}

/** The entry's option values for `names`, padded to five slots with '' (the stored form). */
export function valuesOf(e: Named, names: string[], path: string): { values?: string[]; errors: string[] } {
  const errors: string[] = [];
  const values: string[] = [];
  for (const n of OPTION_SLOTS) {
    const v = e[VALUE_KEYS[n - 1]];
    if (n <= names.length) {
      if (v === undefined) errors.push(`${path}.variant_option${n}_value: is required (option "${names[n - 1]}")`);
      values.push(v ?? "");
    } else {
      if (v !== undefined) errors.push(`${path}.variant_option${n}_value: the product has no option ${n}`);
      values.push("");
    }
  }
  if (!names.length) errors.push(`${path}.variant_option1_name: is required (a variant is defined by its options)`);
  return errors.length ? { errors } : { values, errors };
}

export const comboKey = (values: readonly string[]) => values.join("\u0000");

/** Whether a variant's option values differ from its row's (a new variant has none), compared in place. */
export function valuesMoved(s: { cur: { values: readonly string[] }; row?: OptionValues }): boolean {
  const v = s.cur.values;
  const r = s.row;
  return (
    !r || v[0] !== r.option1 || v[1] !== r.option2 || v[2] !== r.option3 || v[3] !== r.option4 || v[4] !== r.option5
  );
}

/**
 * Variant fields of an entry as stored columns (money already in minor units). A variant without
 * a price takes its product's (docs/products.md, "Updating products").
 */
export function variantColumns(e: VariantEntry, productPrice: number) {
  return {
    sku: e.sku ?? null,
    price: e.price ?? productPrice,
    before_price: e.before_price ?? null,
    purchase_price: e.purchase_price ?? null,
    qty: e.qty ?? 0,
    qty_location: e.qty_location ?? null,
    gtin: e.gtin ?? null,
    supplier_sku: e.supplier_sku ?? null,
    weight: e.weight ?? null,
    visible: e.visible ?? 1,
    images: e.images ?? [],
  };
}

// ---------------------------------------------------------------------------------------------
// The 2 MiB bound on a product's answer (docs/products.md, "Updating products"). A product's GET /v1/products/{id}
// answer is estimated from its stored text, in SQL (SIZE_SQL, for rows a batch reads) and in JS
// (for what a plan would write), by one formula: a fixed allowance for keys, numbers and
// punctuation, plus the UTF-8 bytes of every text column, plus, per variant, its allowance, its
// text and the option names it repeats. The allowances are upper bounds of what a product or
// variant with empty texts answers, so the estimate errs high by at most a few hundred bytes per
// variant; JSON escapes of quotes and backslashes are not counted.

export const MAX_ANSWER_BYTES = 2 * 1024 * 1024;

/** Keys, numbers (at their widest), null and punctuation of a product answer without variants. */
const PRODUCT_ALLOWANCE = 1024;
/** The same for one variant. */
const VARIANT_ALLOWANCE = 640;

/** A product's text fields (JSON ones included, slug and categories too), with their key on a products row. */
const PRODUCT_TEXT: (readonly [string, ProductColumn])[] = [
  ...TEXT_FIELDS,
  ["slug", "slug"],
  ["categories", "categories"],
];
/** Every text column of a variant by its key on a row: its described text fields' (images too) and its option values. */
const ROW_TEXT = [
  ...Object.values(VARIANT_FIELDS as Record<string, Field>)
    .filter((f) => f.kind.text)
    .map((f) => f.column as VariantColumn),
  ...[1, 2, 3, 4, 5].map((n) => `option${n}` as VariantColumn),
];

const P = sqlNames(products);
const V = sqlNames(variants);
const bytesOf = (col: string) => `length(CAST(coalesce(${col}, '') AS BLOB))`;

/** The estimate's share of the product row `p` itself, as an SQL expression. */
export const PRODUCT_SIZE_SQL = `(${PRODUCT_ALLOWANCE} + ${PRODUCT_TEXT.map(([, c]) => bytesOf(`p.${P[c]}`)).join(" + ")})`;
/** A variant's share (`alias` its row), without the option names it repeats: rowBytes in SQL. */
export const variantSizeSql = (alias: string) =>
  `(${VARIANT_ALLOWANCE} + ${ROW_TEXT.map((c) => bytesOf(`${alias}.${V[c]}`)).join(" + ")})`;
/** The estimate for the product row `p`, as an SQL expression. */
export const SIZE_SQL = `(${PRODUCT_SIZE_SQL} + coalesce((SELECT sum(${bytesOf(`p.${P.optionNames}`)} + ${variantSizeSql("sv")})
  FROM ${V.$} AS sv WHERE sv.${V.productId} = p.${P.id}), 0))`;

/** UTF-8 bytes of a stored text (JSON columns as their JSON text); null is none. */
export const textBytes = (s: string | null | undefined) => (s === null || s === undefined ? 0 : utf8Length(s));

/** Bytes of a JSON column's value as it will be stored (arrays and objects as JSON text). */
export const jsonBytes = (v: unknown) => (v === null || v === undefined ? 0 : textBytes(JSON.stringify(v)));
/** Bytes of a field's value as it will be stored: a text as itself, anything else as JSON. */
const valueBytes = (v: unknown) => (typeof v === "string" ? textBytes(v) : jsonBytes(v));

/** The estimate of a product about to be created (its fields by name), without its variants. */
const productBytes = (p: Record<string, unknown>) =>
  PRODUCT_TEXT.reduce((size, [key]) => size + valueBytes(p[key]), PRODUCT_ALLOWANCE);

// Below, a variant's texts are read field by field (the SQL's ROW_TEXT is derived): over 2,048
// variants a loop over the descriptions cost several times as much. test/products.fields.test.ts
// fails for a described variant text that variantBytes or entryBytes leaves out.

/** A variant's texts by field name and its option values (five slots); `images` their stored JSON text. */
type VariantText = Partial<Record<"sku" | "qty_location" | "gtin" | "supplier_sku", string | null>> & {
  values: readonly string[];
  images?: unknown;
};

/** A variant's share of the estimate, without the option names it repeats. */
export function variantBytes(v: VariantText, images = v.images as string): number {
  let n = VARIANT_ALLOWANCE + textBytes(v.sku) + textBytes(v.qty_location) + textBytes(v.gtin);
  n += textBytes(v.supplier_sku) + textBytes(images);
  for (const value of v.values) n += textBytes(value);
  return n;
}

/** variantBytes of a stored variant's row. */
const rowBytes = (v: PlanVariant) =>
  variantBytes(
    { sku: v.sku, qty_location: v.qtyLocation, gtin: v.gtin, supplier_sku: v.supplierSku, values: variantValues(v) },
    v.images,
  );

/** variantBytes of a variant entry as a create stores it, read where it is (no object per entry). */
export function entryBytes(e: VariantEntry): number {
  let n = VARIANT_ALLOWANCE + textBytes(e.sku) + textBytes(e.qty_location) + textBytes(e.gtin);
  n += textBytes(e.supplier_sku) + (e.images?.length ? textBytes(JSON.stringify(e.images)) : 2);
  for (const k of VALUE_KEYS) n += textBytes(e[k]);
  return n;
}

/**
 * entryBytes, or more: every character counted as 3 bytes (UTF-8's most for one UTF-16 unit),
 * without encoding anything. A create compares the bound with it first and adds up entryBytes
 * only past that: the 2,048 entries of a large create are well under it.
 */
function entryBytesAtMost(e: VariantEntry): number {
  let chars = (e.sku?.length ?? 0) + (e.qty_location?.length ?? 0) + (e.gtin?.length ?? 0);
  chars += e.supplier_sku?.length ?? 0;
  for (const k of VALUE_KEYS) chars += e[k]?.length ?? 0;
  return VARIANT_ALLOWANCE + 3 * chars + (e.images?.length ? textBytes(JSON.stringify(e.images)) : 2);
}

/** The 413 of a write that would pass the bound; undefined within it. */
export const tooLarge = (product: string, bytes: number) =>
  bytes <= MAX_ANSWER_BYTES
    ? undefined
    : `${product}: this change would make its answer (GET /v1/products/{id}) about ${bytes} bytes, more than ${MAX_ANSWER_BYTES} (2 MiB); remove images, variants or text first`;

/** tooLarge of a product about to be created (its columns by name) with its variant entries. */
export function createdTooLarge(product: Record<string, unknown>, entries: readonly VariantEntry[]) {
  const names = jsonBytes(product.option_names);
  let size = productBytes(product);
  for (const e of entries) size += names + entryBytesAtMost(e);
  if (size > MAX_ANSWER_BYTES) {
    size = productBytes(product);
    for (const e of entries) size += names + entryBytes(e);
  }
  return tooLarge(`product "${product.title}"`, size);
}

// A PUT plan's effect on its product's answer size: the size read with the product (SIZE_SQL)
// plus what the plan changes. Only what changes is measured, so a stock sync of 2,048 variants
// costs one comparison per variant.

/** Whether a state's text columns differ from its row's, compared in place (a sync sets them all). */
const textChanged = (s: VariantState, row: PlanVariant) =>
  s.cur.sku !== row.sku ||
  s.cur.qty_location !== row.qtyLocation ||
  s.cur.gtin !== row.gtin ||
  s.cur.supplier_sku !== row.supplierSku ||
  (s.cur.images !== undefined && JSON.stringify(s.cur.images) !== row.images) ||
  valuesMoved(s);

/** variantBytes of a state, its images the row's text until the request sets them. */
const stateBytes = (s: VariantState) =>
  variantBytes(s.cur, s.cur.images === undefined ? (s.row?.images ?? "[]") : JSON.stringify(s.cur.images));

/**
 * The product's answer size after the plan: `before` as read, its changed product fields (the
 * plan's product row, body names), the variants it deletes and the states of all it keeps.
 */
export function sizeAfter(
  before: number,
  p: ProductRow,
  product: Record<string, unknown>,
  deleted: PlanVariant[],
  states: VariantState[],
): number {
  let size = before;
  for (const [key, field] of PRODUCT_TEXT) {
    if (key in product) size += valueBytes(product[key]) - textBytes(p[field] as string | null);
  }
  // Every variant answers the option names.
  const oldNames = textBytes(p.optionNames);
  const newNames = "option_names" in product ? jsonBytes(product.option_names) : oldNames;
  size += states.length * newNames - deleted.length * oldNames;
  for (const v of deleted) size -= rowBytes(v);
  for (const s of states) {
    if (!s.row) size += stateBytes(s);
    else {
      size -= oldNames;
      if (textChanged(s, s.row)) size += stateBytes(s) - rowBytes(s.row);
    }
  }
  return size;
}
