// The product fields the editor shows (docs/admin.md, "Products"), described once: how each is
// labelled, typed and read back, from which the form, what a save sends, the labels of the API's
// refusals and the conflict check after a 412 are derived.
import type { Product } from "./types";
import { moneyInput, parseMoney } from "./ui";

export type Kind = "text" | "area" | "money" | "int" | "flag" | "images" | "categories";
export type Image = { url: string; alttext: string };

export type Field = {
  key: keyof Product & string;
  label: string;
  kind: Kind;
  /** A create must give it; an update cannot clear it. */
  required?: boolean;
  max?: number;
  hint?: string;
};

export const FIELDS: Field[] = [
  { key: "title", label: "Title", kind: "text", required: true, max: 255 },
  { key: "description", label: "Description", kind: "area", max: 100_000 },
  { key: "price", label: "Price", kind: "money", required: true },
  { key: "tax_rate", label: "Tax rate (%)", kind: "int", required: true, hint: "A whole number from 0 to 100." },
  { key: "sku", label: "SKU", kind: "text", max: 255, hint: "Unique in the store, across products and variants." },
  { key: "brand", label: "Brand", kind: "text", max: 255 },
  { key: "weight", label: "Weight (g)", kind: "int", hint: "In grams." },
  {
    key: "categories",
    label: "Categories",
    kind: "categories",
    hint: "One path a line, head category first: Clothes > Shirts.",
  },
  { key: "images", label: "Images", kind: "images" },
  { key: "seo_title", label: "SEO title", kind: "text", max: 255 },
  { key: "seo_description", label: "SEO description", kind: "area", max: 255 },
  { key: "visible", label: "Visible in the shop", kind: "flag" },
];

/** What the form holds for each field: text, a flag, or the image rows. */
export type Values = Record<string, string | boolean | Image[]>;

/** A product's fields as the form shows them. */
export function toValues(p: Partial<Product>): Values {
  const out: Values = {};
  for (const f of FIELDS) {
    const v = p[f.key];
    if (f.kind === "flag") out[f.key] = v === undefined ? true : v === 1;
    else if (f.kind === "money") out[f.key] = typeof v === "number" ? moneyInput(v) : "";
    else if (f.kind === "images") out[f.key] = ((v as Image[] | undefined) ?? []).map((i) => ({ ...i }));
    else if (f.kind === "categories")
      out[f.key] = ((v as string[][] | undefined) ?? []).map((path) => path.join(" > ")).join("\n");
    else out[f.key] = v === null || v === undefined ? "" : String(v);
  }
  return out;
}

/**
 * A field's value as the API takes it, from what the form holds; `{error}` in the page's words
 * when it is not one (the API's own checks follow on save).
 */
export function toApi(f: Field, v: Values[string]): { value: unknown } | { error: string } {
  if (f.kind === "flag") return { value: v ? 1 : 0 };
  if (f.kind === "images")
    return {
      value: (v as Image[])
        .filter((i) => i.url.trim())
        .map((i) => ({ url: i.url.trim(), alttext: i.alttext.trim() || null })),
    };
  const t = String(v);
  if (f.kind === "categories")
    return {
      value: t
        .split("\n")
        .map((line) =>
          line
            .split(">")
            .map((name) => name.trim())
            .filter(Boolean),
        )
        .filter((path) => path.length),
    };
  if (!t.trim()) return f.required ? { error: `${f.label}: required` } : { value: null };
  if (f.kind === "money") {
    const m = parseMoney(t);
    return m === undefined ? { error: `${f.label}: write an amount such as 399.50 or 399,50` } : { value: m };
  }
  if (f.kind === "int") {
    return /^\s*\d{1,9}\s*$/.test(t) ? { value: Number(t) } : { error: `${f.label}: write a whole number` };
  }
  return { value: f.key === "sku" ? t.trim() : t };
}

/** A stored value in the form toApi gives it, so the two compare. */
export function stored(f: Field, p: Partial<Product>): unknown {
  const v = p[f.key];
  if (f.kind === "money") return typeof v === "number" ? v.toFixed(2) : null;
  if (f.kind === "images")
    return ((v as Image[] | undefined) ?? []).map((i) => ({ url: i.url, alttext: i.alttext || null }));
  if (f.kind === "categories") return v ?? [];
  if (f.kind === "flag") return v === undefined ? 1 : v;
  return v === "" || v === undefined ? null : v;
}

export const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** A stored value in words, for a conflict: "“Mug”", "(empty)". */
export function shown(f: Field, p: Partial<Product>): string {
  const v = stored(f, p);
  if (v === null || (Array.isArray(v) && !v.length)) return "(empty)";
  if (f.kind === "flag") return v ? "visible" : "hidden";
  if (f.kind === "categories") return (v as string[][]).map((path) => path.join(" > ")).join("; ");
  if (f.kind === "images") return `${(v as Image[]).length} image(s)`;
  return `“${String(v)}”`;
}

/** The field an API path names: "images[0].url" is Images, "categories[1][0]" Categories. */
export const fieldOf = (path: string) => FIELDS.find((f) => path === f.key || path.startsWith(`${f.key}[`));
