// A save refused with 412 (docs/admin.md, "No lost work"): the product changed since the page
// loaded it. Only a field this save changes that now holds another value is a conflict; a sale or
// another field moving loses nothing, and the page sends the save again with the new ETag.
import { type Field, same, shown, stored } from "./product-fields";
import type { Product, Variant } from "./types";
import { type Row, rowName } from "./variant-grid";

/** The variant fields a save writes as typed (stock has its own guard), and their names on the page. */
export const GUARDED = ["price", "sku", "visible"] as const;
const VARIANT_LABEL = { price: "Price", sku: "SKU", visible: "Visibility" } as const;

/** A variant entry of the save that writes guarded fields: its row, its id, which fields. */
export type Guarded = { i: number; id: number; keys: (typeof GUARDED)[number][] };

/** The product as the page last saw it: loaded, then as a 412 showed what moved. */
export type Seen = { fields: Partial<Product>; variants: Record<number, Variant | undefined>; ids: number[] };

export type Conflict = {
  seen: Seen;
  /** Beside each product field that moved: what it is now. */
  fields: Record<string, string>;
  /** On each variant row that moved ("row:3"): what it is now. */
  rows: Record<string, string>;
  message: string;
};

/** What `current` (the 412's product) shows moved of what this save changes; null: nothing did. */
export function conflictOf(
  current: Product,
  save: { sent: Field[]; guarded: Guarded[]; structure: boolean },
  seen: Seen,
  rows: Row[],
): Conflict | null {
  const moved = save.sent.filter((f) => !same(stored(f, current), stored(f, seen.fields)));
  const byId = new Map(current.variants.map((v) => [v.variant_id, v]));
  const movedV = save.guarded.filter((g) => {
    const now = byId.get(g.id);
    const was = seen.variants[g.id] ?? rows[g.i].base;
    return !now || !was || g.keys.some((k) => now[k] !== was[k]);
  });
  const ids = current.variants.map((v) => v.variant_id);
  const regrid = save.structure && !same(ids, seen.ids);
  if (!moved.length && !movedV.length && !regrid) return null;
  const words = moved.map((f) => `${f.label} is now ${shown(f, current)}`);
  const rowWords: Record<string, string> = {};
  for (const g of movedV) {
    const now = byId.get(g.id);
    const value = (k: Guarded["keys"][number]) =>
      k === "visible" ? (now?.visible ? "visible" : "hidden") : (now?.[k] ?? "(none)");
    const what = now ? g.keys.map((k) => `${VARIANT_LABEL[k]} is now ${value(k)}`).join(", ") : "deleted";
    rowWords[`row:${g.i}`] = `Changed since you opened it: ${what}`;
    words.push(`${rowName(rows[g.i])}: ${what}`);
  }
  if (regrid) words.push("its variants were added or removed");
  return {
    seen: {
      fields: { ...seen.fields, ...Object.fromEntries(moved.map((f) => [f.key, current[f.key]])) },
      variants: { ...seen.variants, ...Object.fromEntries(movedV.map((g) => [g.id, byId.get(g.id)])) },
      ids,
    },
    fields: Object.fromEntries(moved.map((f) => [f.key, `Changed since you opened it: now ${shown(f, current)}`])),
    rows: rowWords,
    message: `Changed since you opened it: ${words.join("; ")} (saved in another tab or by someone else). Nothing was saved; what you typed is kept. Save again to replace it with what you typed.`,
  };
}
