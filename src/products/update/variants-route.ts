import type { DB } from "../../db/client";
import { products, skus, variants } from "../../db/schema";
import { sqlNames } from "../../platform/columns";
import { fitsOneValue, jsonChunks, stmt } from "../../platform/d1";
import { tooManyPaths, withHead } from "../categories";
import type { IfMatch } from "../create";
import { STOCK } from "../entries";
import { PRODUCT_FIELD_NAMES, PRODUCT_ONLY_FIELDS } from "../fields";
import { packed, packedRows } from "../packed";
import type { VariantEntry, VariantUpdateEntry } from "../schema";
import { sharedNames } from "../variants";
import { productETag, VERSION_SQL } from "../version";
import type { UpdateItem } from "./select";

// Which PUT items the SQL plan (./variants-sql.ts; several items: ./variants-rounds.ts) takes, and
// what it binds for them; the rest take the JavaScript plan (./plan.ts), and so does whatever the
// SQL plan's batch refuses that ./refusals.ts does not word.

/** Which list the plan reads (?4 of the plan). */
export const MODE = { update: 0, sync: 1, add: 2 } as const;
const LISTS = [
  ["sync", MODE.sync],
  ["add", MODE.add],
  ["update", MODE.update],
] as const;

// Product fields the batch writes beside the list, as given (./write.ts); a SKU or slug another
// product or variant has meets the registry or the unique index, a disable_minusqty that a
// negative qty does not allow meets the stock floor. Not `stock` (a product with variants has none
// of its own: the JavaScript plan words that); categories as given, with a head category placed
// among them (not one merged into the stored paths), and a slug (null: derived from the title given).
const BESIDE = new Set<string>(PRODUCT_FIELD_NAMES.filter((n) => n !== "stock"));
// A variant selected by variant_id or SKU takes the body's variant fields (price, sku, ...): those
// bodies stay with the JavaScript plan; product-only fields go to its product either way.
const PRODUCT_ONLY = new Set<string>(PRODUCT_ONLY_FIELDS);

/** A body key's value as the product row of UPDATE_PRODUCT_FIELDS takes it; undefined: not here. */
function beside(key: string, v: unknown): unknown {
  if (BESIDE.has(key)) return key === "images" && v === null ? [] : v;
  if (key === "slug") return typeof v === "string" ? v : undefined;
  if (key !== "categories") return undefined;
  const paths = (v ?? []) as string[][];
  return tooManyPaths(paths) ? undefined : paths;
}

/** How the item names its product: by id, or through a variant id or SKU the batch re-checks. */
type Selector = { productId: number } | { variantId: number } | { sku: string };

function selectorOf(d: UpdateItem["data"]): Selector | undefined {
  if (d.variant_id !== undefined) return d.product_id === undefined ? { variantId: d.variant_id } : undefined;
  if (d.product_id !== undefined) return { productId: d.product_id };
  return typeof d.sku === "string" ? { sku: d.sku } : undefined;
}

/** The one item of a body this path takes (./variants-sql.ts); several: ./variants-rounds.ts. */
export function variantsInSql(items: UpdateItem[]) {
  return items.length === 1 ? variantInSql(items[0]) : undefined;
}

/** The item as this path takes it, with its list bound as packed entries; undefined: the JavaScript path. */
export function variantInSql(item: UpdateItem) {
  const d = item.data;
  const selector = selectorOf(d);
  if (!selector) return undefined;
  const byId = "productId" in selector;
  let product: Record<string, unknown> | undefined;
  let deriveSlug = false;
  for (const [key, v] of Object.entries(d)) {
    if (v === undefined || key === "product_id" || key === "variants") continue;
    if (!byId && (key === "variant_id" || (key === "sku" && "sku" in selector))) continue;
    if (!byId && BESIDE.has(key) && !PRODUCT_ONLY.has(key)) return undefined;
    // A head category with the paths given is placed among them here (none is no change); a slug
    // derived again, from the title given (the stored one is the JavaScript plan's to read).
    if (key === "headcategory_name" && (v === null || d.categories !== undefined)) continue;
    if (key === "slug" && v === null && typeof d.title === "string") {
      deriveSlug = true;
      continue;
    }
    const value = beside(key, key === "categories" ? withHead((v ?? []) as string[][], d.headcategory_name) : v);
    if (value === undefined) return undefined;
    product ??= {};
    product[key] = value;
  }
  // The lists in the order the JavaScript plan applies them: each is planned against what the one
  // before it left, in the same batch.
  // An empty add or update changes nothing; an empty sync (which deletes every variant) is left to
  // the JavaScript plan.
  const given = LISTS.flatMap(([key, mode]) => {
    const entries: (VariantEntry | VariantUpdateEntry)[] | undefined = d.variants?.[key];
    return entries && (entries.length || mode === MODE.sync) ? [{ mode, given: entries }] : [];
  });
  if (!given.length || !given[0].given.length) return undefined;
  // The entries of every list must agree on option names (a merged entry keeps only the last ones).
  if (given.length > 1 && sharedNames(given.flatMap((l) => l.given)) === false) return undefined;
  // An update's expected_qty is of the count as read, which a sync before it may change.
  const { sync, update } = d.variants ?? {};
  if (sync && update?.some((e) => e.expected_qty !== undefined)) return undefined;
  const lists = [];
  for (const { mode, given: entries } of given) {
    const names = sharedNames(entries);
    if (names === false) return undefined;
    const list = mode === MODE.update ? merged(entries as VariantUpdateEntry[]) : entries;
    if (!list) return undefined;
    // A list too large for one bound value (long image lists) is bound in parts, each with its
    // first entry's place and its number of entries.
    const whole = packed(list);
    let from = 0;
    const parts: [string, number, number][] = fitsOneValue(whole)
      ? [[whole, 0, list.length]]
      : jsonChunks(packedRows(list)).map((part) => {
          const at = from;
          const count = (JSON.parse(part) as unknown[]).length;
          from += count;
          return [part, at, count];
        });
    const stock = mode === MODE.update && update?.some((e) => e.adjust !== undefined || e.expected_qty !== undefined);
    lists.push({ mode, entries: parts, names: names ?? null, stock: stock ?? false });
  }
  if (deriveSlug) product = { ...product, slug: null };
  return { item, selector, lists, product };
}

export type SqlList = NonNullable<ReturnType<typeof variantInSql>>;

/**
 * An update list naming one variant more than once, as one entry per variant, as the JavaScript
 * plan applies them in order (./states.ts, applyEntry): a later field wins; a `qty` sets the count
 * and an `adjust` after it moves that count (a count again); the amounts of `adjust`s without a
 * count add up; the first `expected_qty` holds. Undefined (the JavaScript plan) when an entry gives
 * `qty` and `adjust` (refused), a count passes the largest, or a count follows an `adjust` or
 * amounts of both signs add up (below).
 */
function merged(list: VariantUpdateEntry[]): VariantUpdateEntry[] | undefined {
  const at = new Map<number, number>();
  let out: VariantUpdateEntry[] | undefined;
  for (let i = 0; i < list.length; i++) {
    const e = list[i];
    const first = at.get(e.variant_id);
    if (first === undefined) {
      at.set(e.variant_id, out ? out.length : i);
      out?.push(e);
      continue;
    }
    out ??= list.slice(0, i);
    const m = { ...out[first] } as Record<string, unknown>;
    if (m.qty !== undefined && m.adjust !== undefined) return undefined;
    if (e.qty !== undefined && e.adjust !== undefined) return undefined;
    // The JavaScript plan checks every count an adjust reaches against the largest: the batch checks
    // the last only, which bounds the others unless an adjust is dropped or one goes back.
    const relative = m.qty === undefined ? (m.adjust as number | undefined) : undefined;
    if (relative !== undefined && (e.qty !== undefined || Math.sign(e.adjust ?? relative) !== Math.sign(relative))) {
      return undefined;
    }
    for (const [k, v] of Object.entries(e)) {
      if (v === undefined || k === "adjust" || k === "expected_qty") continue;
      m[k] = v;
    }
    if (e.qty !== undefined) m.adjust = undefined;
    if (e.adjust !== undefined) {
      if (m.qty !== undefined) m.qty = (m.qty as number) + e.adjust;
      else m.adjust = ((m.adjust as number | undefined) ?? 0) + e.adjust;
      if (Math.abs((m.qty ?? m.adjust) as number) > STOCK) return undefined;
    }
    if (m.expected_qty === undefined && e.expected_qty !== undefined) m.expected_qty = e.expected_qty;
    out[first] = m as VariantUpdateEntry;
  }
  return out ?? list;
}

const P = sqlNames(products);
const V = sqlNames(variants);
const K = sqlNames(skus);
// ?1 product id, ?2 variant id, ?3 SKU: the product one names, the variant a SKU names, its version.
const RESOLVE = `
  SELECT p.${P.id} AS id, ${VERSION_SQL} AS version,
    (SELECT k.${K.variantId} FROM ${K.$} AS k WHERE k.${K.sku} = ?3) AS variant
  FROM ${P.$} AS p WHERE p.${P.id} = coalesce(?1,
    (SELECT v.${V.productId} FROM ${V.$} AS v WHERE v.${V.id} = ?2),
    (SELECT k.${K.productId} FROM ${K.$} AS k WHERE k.${K.sku} = ?3))`;

/** The product the batch writes and the conditions it re-checks (./variants-sql.ts, GUARDS). */
export type Resolved = {
  productId: number;
  /** The version an If-Match named. */
  version?: number;
  /** The variant a variant id selects, or the SKU's owner (null: the product's own SKU). */
  selected?: { variantId: number } | { sku: string; variantId: number | null };
};

/**
 * The product and the conditions of the batch: a read first only for a selection by variant id or
 * SKU, or an If-Match naming tags (its version); undefined when the JavaScript plan must answer
 * (nothing selected, or another version: it words the 404 or 412 as it reads them).
 */
export async function resolve(db: DB, list: SqlList, ifMatch?: IfMatch): Promise<Resolved | undefined> {
  const s = list.selector;
  const tags = ifMatch && !ifMatch.any;
  if ("productId" in s && !tags) return { productId: s.productId };
  const row = await stmt(
    db,
    RESOLVE,
    "productId" in s ? s.productId : null,
    "variantId" in s ? s.variantId : null,
    "sku" in s ? s.sku : null,
  ).first<{ id: number; version: number; variant: number | null }>();
  if (!row) return undefined;
  if (tags && !ifMatch.tags.includes(productETag(row.id, row.version))) return undefined;
  const selected =
    "variantId" in s ? { variantId: s.variantId } : "sku" in s ? { sku: s.sku, variantId: row.variant } : undefined;
  return { productId: row.id, ...(tags ? { version: row.version } : {}), ...(selected ? { selected } : {}) };
}
