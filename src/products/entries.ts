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

// What each field is, looked up once per field: a list of 2,048 entries has about 25,000.
const TEXT = 0;
const SKU = 1;
const MONEY_KIND = 2;
const COUNT = 3;
const VISIBLE = 4;
const WEIGHT = 5;
const VARIANT_ID = 6;
/** A field only zod reads (images). */
const ZOD = 7;
const CREATE_KINDS: [string, number][] = [
  ...NAME_VALUE.map((k): [string, number] => [k, TEXT]),
  ["qty_location", TEXT],
  ...[...IDENTIFIER].map((k): [string, number] => [k, TEXT]),
  ["sku", SKU],
  ...[...MONEY].map((k): [string, number] => [k, MONEY_KIND]),
  ["qty", COUNT],
  ["weight", WEIGHT],
  ["visible", VISIBLE],
  ["images", ZOD],
];
const KINDS: Record<Mode, ReadonlyMap<string, number>> = {
  create: new Map(CREATE_KINDS),
  // `adjust` and `expected_qty` are counts of either sign like qty (docs/stock.md).
  update: new Map([...CREATE_KINDS, ["adjust", COUNT], ["expected_qty", COUNT], ["variant_id", VARIANT_ID]]),
};

// Text with no control character and no surrogate at all: one plain character-class test, where
// the two rules' own expressions (one with a lookbehind) cost more per string, and a list of 2,048
// entries has about 25,000 strings.
const PLAIN = /^[\t\n\x20-\x7e\u00a0-\ud7ff\ue000-\uffff]*$/;
const clean = (v: string) => PLAIN.test(v) || (!CONTROL.test(v) && !LONE_SURROGATE.test(v));

/** clean() of a short text, by its characters: names, values and SKUs are a few characters each. */
function cleanShort(v: string) {
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c < 0x20 ? c !== 9 && c !== 10 : c >= 0x7f && (c < 0xa0 || (c >= 0xd800 && c < 0xe000))) return clean(v);
  }
  return true;
}

/** Whether zod's trim leaves nothing: only text that starts with a space or other mark is looked at twice. */
const blank = (v: string) => {
  if (v === "") return true;
  const c = v.charCodeAt(0);
  return (c <= 32 || c >= 0x80) && v.trim() === "";
};

const ABSENT = Symbol("absent");
const ASK_ZOD = Symbol("ask zod");

/** One field's output as zod would give it, ABSENT, or ASK_ZOD when this is not a plain form. */
function field(kind: number | undefined, v: unknown, clearable: boolean): unknown {
  // An unknown field gets a notice, which only the whole item's walk gives.
  if (kind === undefined) return ASK_ZOD;
  if (v === undefined) return ABSENT;
  if (v === null) return clearable ? null : ASK_ZOD;
  if (typeof v === "string") {
    if (blank(v)) return ABSENT;
    // str(255): text, as given.
    if (kind === TEXT) return v.length <= 255 && (v.length <= 32 ? cleanShort(v) : clean(v)) ? v : ASK_ZOD;
    if (kind !== SKU) return ASK_ZOD;
    const t = v.trim();
    return t.length <= 255 && (t.length <= 32 ? cleanShort(t) : clean(t)) ? t : ASK_ZOD;
  }
  if (typeof v !== "number" && typeof v !== "boolean") return ASK_ZOD;
  switch (kind) {
    case MONEY_KIND:
      return Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) * 100 <= MAX_MONEY
        ? (v as number) * 100 + 0
        : ASK_ZOD;
    // + 0: zod reads -0 through its decimal text, as 0.
    case COUNT:
      return Number.isSafeInteger(v) && Math.abs(v as number) <= STOCK ? (v as number) + 0 : ASK_ZOD;
    case VISIBLE:
      return v === 1 || v === true ? 1 : v === 0 || v === false ? 0 : ASK_ZOD;
    case WEIGHT:
      return Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) <= MAX_WEIGHT ? (v as number) + 0 : ASK_ZOD;
    case VARIANT_ID:
      return Number.isSafeInteger(v) && (v as number) >= 1 ? v : ASK_ZOD;
    default:
      return ASK_ZOD;
  }
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
  const kinds = KINDS[mode];
  const update = mode === "update";
  for (let i = 0; i < list.length; i++) {
    const e = list[i];
    if (e === null || typeof e !== "object" || Array.isArray(e)) return undefined;
    let id = false;
    for (const key in e) {
      const given = (e as Record<string, unknown>)[key];
      const v = field(kinds.get(key), given, update && CLEARABLE.has(key));
      if (v === ASK_ZOD) return undefined;
      if (key === "variant_id" && v !== ABSENT) id = true;
      if (!Object.is(v, given)) {
        at.push(i);
        keys.push(key);
        values.push(v);
      }
    }
    if (update && !id) return undefined;
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
