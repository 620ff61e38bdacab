import { VARIANT_FIELDS, type VariantFieldName } from "./fields";
import type { OptionValues } from "./present";
import { OPTION_SLOTS, type VariantEntry } from "./schema";

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
