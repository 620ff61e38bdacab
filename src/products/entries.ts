import type { z } from "zod";
import { CONTROL, LONE_SURROGATE, MAX_MONEY } from "../platform/fields";
import { type Parsed, parseItem } from "../platform/validate";
import { MAX_VARIANTS, OPTION_SLOTS, type VariantEntry, type VariantUpdateEntry } from "./schema";

// Variant lists validated without a zod object per entry (docs/products.md, "Limits"): zod
// parsed a list of 2,048 entries into new objects, field by field through its wrappers, for about
// a third of a large sync's CPU. Entries in the plain forms feeds send (text, whole numbers, flags)
// are checked here by the same rules and taken as they are; anything else (a decimal price, a
// numeric string, images, an unknown field, any doubt) hands the whole item to zod, whose errors
// and notices are then the answer's, word for word. test/products.entries.test.ts holds the
// output equal to zod's on random entries.

/** Which entries a list holds: a create's (sync, add) or an update's (update). */
export type Mode = "create" | "update";
type Entry = VariantEntry | VariantUpdateEntry;

const NAME_VALUE = OPTION_SLOTS.flatMap((n) => [`variant_option${n}_name`, `variant_option${n}_value`]);
const TEXT = new Set([...NAME_VALUE, "qty_location"]);
/** Identifiers an entry gives as text (spreadsheets' numeric ones go through zod). */
export const IDENTIFIER = new Set(["gtin", "supplier_sku"]);
export const MONEY = new Set(["price", "before_price", "purchase_price"]);
/** Fields that `null` clears in an update entry (clearable in schema.ts). */
export const CLEARABLE = new Set([
  "sku",
  "before_price",
  "purchase_price",
  "qty_location",
  "gtin",
  "supplier_sku",
  "weight",
]);
/** The largest stock an entry may give, of either sign, and the largest weight. */
export const STOCK = 1_000_000_000;
export const MAX_WEIGHT = 1_000_000_000;
const FIELDS = [...NAME_VALUE, "sku", ...MONEY, "qty", "qty_location", ...IDENTIFIER, "weight", "visible", "images"];
const KNOWN: Record<Mode, ReadonlySet<string>> = {
  create: new Set(FIELDS),
  update: new Set([...FIELDS, "variant_id"]),
};

// Text with no control character and no surrogate at all: one plain character-class test, where
// the two rules' own expressions (one with a lookbehind) cost more per string, and a list of 2,048
// entries has about 25,000 strings.
const PLAIN = /^[\t\n\x20-\x7e\u00a0-\ud7ff\ue000-\uffff]*$/;
const clean = (v: string) => PLAIN.test(v) || (!CONTROL.test(v) && !LONE_SURROGATE.test(v));

/** Text as str(255) accepts it: blank is absent (undefined here means "ask zod"). */
const text = (v: string) => (v.length <= 255 && clean(v) && v.trim() !== "" ? v : undefined);

const ABSENT = Symbol("absent");
const ASK_ZOD = Symbol("ask zod");

/** One field's output as zod would give it, ABSENT, or ASK_ZOD when this is not a plain form. */
function field(key: string, v: unknown, mode: Mode): unknown {
  // An unknown field gets a notice, which only the whole item's walk gives.
  if (!KNOWN[mode].has(key)) return ASK_ZOD;
  if (v === undefined) return ABSENT;
  if (v === null) return mode === "update" && CLEARABLE.has(key) ? null : ASK_ZOD;
  if (typeof v === "string" && v.trim() === "") return ABSENT;
  if (TEXT.has(key)) return typeof v === "string" ? (text(v) ?? ASK_ZOD) : ASK_ZOD;
  if (key === "sku") {
    if (typeof v !== "string") return ASK_ZOD;
    const t = v.trim();
    return t.length <= 255 && clean(t) ? t : ASK_ZOD;
  }
  if (IDENTIFIER.has(key)) return typeof v === "string" ? (text(v) ?? ASK_ZOD) : ASK_ZOD;
  if (typeof v !== "number" && typeof v !== "boolean") return ASK_ZOD;
  if (MONEY.has(key)) {
    return Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) * 100 <= MAX_MONEY
      ? (v as number) * 100 + 0
      : ASK_ZOD;
  }
  // + 0: zod reads -0 through its decimal text, as 0.
  if (key === "qty") return Number.isSafeInteger(v) && Math.abs(v as number) <= STOCK ? (v as number) + 0 : ASK_ZOD;
  if (key === "visible") return v === 1 || v === true ? 1 : v === 0 || v === false ? 0 : ASK_ZOD;
  if (key === "weight") {
    return Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) <= MAX_WEIGHT ? (v as number) + 0 : ASK_ZOD;
  }
  if (key === "variant_id" && mode === "update") return Number.isSafeInteger(v) && (v as number) >= 1 ? v : ASK_ZOD;
  return ASK_ZOD;
}

/**
 * Whether the list is in the plain forms: then how to turn it into zod's output, in place (the
 * parsed body's own entries: a list of 2,048 entries is not built again, an object per entry, as
 * its garbage); undefined when zod must look at it. Nothing is changed until the caller applies
 * it, so a list that zod reads after all is read as the client sent it.
 */
export function plainChanges(list: unknown, mode: Mode): (() => Entry[]) | undefined {
  if (!Array.isArray(list) || list.length > MAX_VARIANTS) return undefined;
  // The changes (money in minor units, a trimmed SKU, flags as 1 and 0, blanks left out) as
  // three flat lists: most entries have one or two.
  const at: number[] = [];
  const keys: string[] = [];
  const values: unknown[] = [];
  for (let i = 0; i < list.length; i++) {
    const e = list[i];
    if (e === null || typeof e !== "object" || Array.isArray(e)) return undefined;
    let id = false;
    for (const key in e) {
      const given = (e as Record<string, unknown>)[key];
      const v = field(key, given, mode);
      if (v === ASK_ZOD) return undefined;
      if (key === "variant_id" && v !== ABSENT) id = true;
      if (!Object.is(v, given)) {
        at.push(i);
        keys.push(key);
        values.push(v);
      }
    }
    if (mode === "update" && !id) return undefined;
  }
  return () => {
    for (let j = 0; j < at.length; j++) {
      const e = list[at[j]] as Record<string, unknown>;
      if (values[j] === ABSENT) delete e[keys[j]];
      else e[keys[j]] = values[j];
    }
    return list as Entry[];
  };
}

/** The list as zod would parse it, written into its own entries; undefined when zod must look at it. */
export const plainEntries = (list: unknown, mode: Mode) => plainChanges(list, mode)?.();

/** The entries each variant list holds. */
export const LISTS: Record<string, Mode> = { sync: "create", add: "create", update: "update" };

/**
 * parseItem for a product body: its variant lists checked by plainEntries when they can be, the
 * rest by zod (given the lists as empty, then put back); otherwise the whole item by zod.
 */
export function parseProduct<S extends z.ZodType>(schema: S, value: unknown, noticePrefix = ""): Parsed<z.output<S>> {
  const variants = (value as { variants?: unknown } | null)?.variants;
  if (variants === null || typeof variants !== "object" || Array.isArray(variants)) {
    return parseItem(schema, value, noticePrefix);
  }
  const plain: Record<string, () => Entry[]> = {};
  const emptied: Record<string, unknown> = { ...variants };
  for (const [key, list] of Object.entries(variants)) {
    const mode = Object.hasOwn(LISTS, key) ? LISTS[key] : undefined;
    if (!mode || list === undefined) continue;
    const apply = plainChanges(list, mode);
    if (!apply) return parseItem(schema, value, noticePrefix);
    plain[key] = apply;
    emptied[key] = [];
  }
  const r = parseItem(schema, { ...(value as object), variants: emptied }, noticePrefix);
  if (!r.ok) return parseItem(schema, value, noticePrefix);
  const out = (r.data as { variants?: Record<string, unknown> }).variants;
  if (!out) return parseItem(schema, value, noticePrefix);
  // Only now, the rest valid, are the lists written in place.
  for (const [key, apply] of Object.entries(plain)) if (key in out) out[key] = apply();
  return r;
}
