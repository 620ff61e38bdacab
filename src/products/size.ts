import { products, variants } from "../db/schema";
import { optionColumn, sqlNames } from "../platform/columns";
import { type Field, type ProductColumn, TEXT_FIELDS, VARIANT_FIELDS, type VariantColumn } from "./fields";
import type { VariantEntry } from "./schema";
import { VALUE_KEYS } from "./variants";

// The 2 MiB bound on a product's answer (docs/products.md, "Updating products"). A product's GET /v1/products/{id}
// answer is estimated from its stored text, in SQL (SIZE_SQL, for rows a batch reads) and in JS
// (for what a plan would write), by one formula: a fixed allowance for keys, numbers and
// punctuation, plus the UTF-8 bytes of every text column, plus, per variant, its allowance, its
// text and the option names it repeats. The allowances are upper bounds of what a product or
// variant with empty texts answers, so the estimate errs high by at most a few hundred bytes per
// variant; JSON escapes of quotes and backslashes are not counted.

export const MAX_ANSWER_BYTES = 2 * 1024 * 1024;

/** Keys, numbers (at their widest), null and punctuation of a product answer without variants. */
export const PRODUCT_ALLOWANCE = 1024;
/** The same for one variant. */
export const VARIANT_ALLOWANCE = 640;

/** A product's text fields (JSON ones included, slug and categories too), with their key on a products row. */
export const PRODUCT_TEXT: (readonly [string, ProductColumn])[] = [
  ...TEXT_FIELDS,
  ["slug", "slug"],
  ["categories", "categories"],
];
const P = sqlNames(products);
const V = sqlNames(variants);
/** A variant's text columns: its described text fields' and its option values. */
const VARIANT_TEXT = [
  ...Object.values(VARIANT_FIELDS as Record<string, Field>)
    .filter((f) => f.kind.text)
    .map((f) => V[f.column as VariantColumn]),
  ...[1, 2, 3, 4, 5].map((n) => optionColumn(V, n)),
];

const bytesOf = (col: string) => `length(CAST(coalesce(${col}, '') AS BLOB))`;

/** The estimate's share of the product row `p` itself, as an SQL expression. */
export const PRODUCT_SIZE_SQL = `(${PRODUCT_ALLOWANCE} + ${PRODUCT_TEXT.map(([, c]) => bytesOf(`p.${P[c]}`)).join(" + ")})`;
/** A variant's share (`alias` its row), without the option names it repeats: variantBytes in SQL. */
export const variantSizeSql = (alias: string) =>
  `(${VARIANT_ALLOWANCE} + ${VARIANT_TEXT.map((c) => bytesOf(`${alias}.${c}`)).join(" + ")})`;
/** The estimate for the product row `p`, as an SQL expression. */
export const SIZE_SQL = `(${PRODUCT_SIZE_SQL} + coalesce((SELECT sum(${bytesOf(`p.${P.optionNames}`)} + ${variantSizeSql("sv")})
  FROM ${V.$} AS sv WHERE sv.${V.productId} = p.${P.id}), 0))`;

const ASCII = /^[\x20-\x7e]*$/;
const encoder = new TextEncoder();

/** UTF-8 bytes of a stored text (JSON columns as their JSON text); null is none. */
export function textBytes(s: string | null | undefined): number {
  if (s === null || s === undefined) return 0;
  return ASCII.test(s) ? s.length : encoder.encode(s).length;
}

/** Bytes of a JSON column's value as it will be stored (arrays and objects as JSON text). */
export const jsonBytes = (v: unknown) => (v === null || v === undefined ? 0 : textBytes(JSON.stringify(v)));
/** Bytes of a field's value as it will be stored: a text as itself, anything else as JSON. */
export const valueBytes = (v: unknown) => (typeof v === "string" ? textBytes(v) : jsonBytes(v));

/** The texts of a variant as they are stored: option values padded to five slots. */
export type VariantText = {
  sku?: string | null;
  values: readonly string[];
  qty_location?: string | null;
  gtin?: string | null;
  supplier_sku?: string | null;
  /** The stored JSON text of its images. */
  images: string;
};

/** A variant's share of the estimate, without the option names it repeats. */
export function variantBytes(v: VariantText): number {
  let n = VARIANT_ALLOWANCE + textBytes(v.sku) + textBytes(v.qty_location) + textBytes(v.gtin);
  n += textBytes(v.supplier_sku) + textBytes(v.images);
  for (const value of v.values) n += textBytes(value);
  return n;
}

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
export function entryBytesAtMost(e: VariantEntry): number {
  let chars = (e.sku?.length ?? 0) + (e.qty_location?.length ?? 0) + (e.gtin?.length ?? 0);
  chars += e.supplier_sku?.length ?? 0;
  for (const k of VALUE_KEYS) chars += e[k]?.length ?? 0;
  return VARIANT_ALLOWANCE + 3 * chars + (e.images?.length ? textBytes(JSON.stringify(e.images)) : 2);
}

/** The 413 of a write that would pass the bound. */
export const tooLarge = (product: string, bytes: number) =>
  `${product}: this change would make its answer (GET /v1/products/{id}) about ${bytes} bytes, more than ${MAX_ANSWER_BYTES} (2 MiB); remove images, variants or text first`;
