// A product's options and the variant grid they make (docs/admin.md, "Products"): up to five
// options, each with its values; the grid is every combination of them, at most 2,048, and keeps
// what was typed for a combination it already had.
import type { Variant } from "./types";
import { moneyInput } from "./ui";

export const MAX_OPTIONS = 5;
export const MAX_VARIANTS = 2048;
const SLOTS = [1, 2, 3, 4, 5] as const;

export type Option = { name: string; values: string };
/** A variant as the form holds it; `base` is the stored variant it edits (none: a new one). */
export type Row = { values: string[]; sku: string; price: string; qty: string; visible: boolean; base?: Variant };

export const valuesOf = (v: Variant) =>
  SLOTS.map((i) => v[`variant_option${i}_value`]).filter((x): x is string => x !== null && x !== "");

/** A variant's name: its option values, else its SKU. */
export const rowName = (r: Row) => r.values.join(" / ") || r.sku || (r.base ? `#${r.base.variant_id}` : "new variant");

/** The options of stored variants: their names, and each option's values in first-seen order. */
export function optionsOf(variants: Variant[]): Option[] {
  const first = variants[0];
  if (!first) return [];
  const out: Option[] = [];
  for (const i of SLOTS) {
    const name = first[`variant_option${i}_name`];
    if (!name) break;
    const seen = new Set<string>();
    for (const v of variants) {
      const value = v[`variant_option${i}_value`];
      if (value) seen.add(value);
    }
    out.push({ name, values: [...seen].join(", ") });
  }
  return out;
}

export const rowOf = (v: Variant): Row => ({
  values: valuesOf(v),
  sku: v.sku ?? "",
  price: moneyInput(v.price),
  qty: String(v.qty),
  visible: v.visible === 1,
  base: v,
});

/** An option's values as typed: "Red, Blue" -> ["Red", "Blue"], each once. */
export const splitValues = (typed: string) => [...new Set(typed.split(",").map((v) => v.trim()))].filter(Boolean);

/** The options a merchant filled in (a name and at least one value), or the words of what is wrong. */
export function usedOptions(options: Option[]): { names: string[]; values: string[][] } | { error: string } {
  const used = options.filter((o) => o.name.trim() || o.values.trim());
  for (const [i, o] of used.entries()) {
    if (!o.name.trim()) return { error: `Option ${i + 1}: give it a name (Size, Colour)` };
    if (!splitValues(o.values).length) return { error: `Option ${o.name.trim()}: give it values, separated by commas` };
  }
  const names = used.map((o) => o.name.trim());
  if (new Set(names).size < names.length) return { error: "Options: each option needs its own name" };
  return { names, values: used.map((o) => splitValues(o.values)) };
}

/** How many variants `values` make: the product of their counts (0 options: none). */
export const combinations = (values: string[][]) => (values.length ? values.reduce((n, v) => n * v.length, 1) : 0);

/**
 * Every combination of `values`, in order (the first option slowest), as rows: an existing row of
 * the same combination is kept as it is; a new one gets the product's price and SKU with its
 * values, stock 0, visible.
 */
export function makeGrid(values: string[][], rows: Row[], defaults: { sku: string; price: string }): Row[] {
  const kept = new Map(rows.map((r) => [r.values.join("\u0000"), r]));
  let combos: string[][] = [[]];
  for (const list of values) combos = combos.flatMap((c) => list.map((v) => [...c, v]));
  if (!values.length) return [];
  return combos.map(
    (c) =>
      kept.get(c.join("\u0000")) ?? {
        values: c,
        sku: defaults.sku ? [defaults.sku, ...c].join("-").toUpperCase().replace(/\s+/g, "-") : "",
        price: defaults.price,
        qty: "0",
        visible: true,
      },
  );
}

/** The option fields of a variant entry: names and values in slots 1 to 5. */
export function optionFields(names: string[], values: string[]) {
  const out: Record<string, string> = {};
  names.forEach((name, i) => {
    out[`variant_option${i + 1}_name`] = name;
    out[`variant_option${i + 1}_value`] = values[i];
  });
  return out;
}

/**
 * Does `r` match the filter: every word of it is part of its SKU or the start of one of its
 * option values ("red m" finds Red / M).
 */
export function matches(r: Row, filter: string) {
  const words = filter
    .toLowerCase()
    .split(/[\s/]+/)
    .filter(Boolean);
  const sku = r.sku.toLowerCase();
  const values = r.values.map((v) => v.toLowerCase());
  return words.every((w) => sku.includes(w) || values.some((v) => v.startsWith(w)));
}
