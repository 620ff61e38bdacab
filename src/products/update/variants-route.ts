import type { DB } from "../../db/client";
import { products, skus, variants } from "../../db/schema";
import { sqlNames } from "../../platform/columns";
import { fitsOneValue, jsonChunks, stmt } from "../../platform/d1";
import { derivedSlug, tooManyPaths, withHead } from "../categories";
import type { IfMatch } from "../create";
import { PRODUCT_FIELD_NAMES, PRODUCT_ONLY_FIELDS } from "../fields";
import { parseList } from "../kinds";
import { EXPECTED, packed, packedRows, VARIANT_ID } from "../packed";
import type { VariantEntry, VariantUpdateEntry } from "../schema";
import { sharedNames } from "../variants";
import { productETag, VERSION_SQL } from "../version";
import { merged, REFUSED } from "./merged";
import { type Failed, fail, type UpdateItem, unselected } from "./select";

// Which PUT items the SQL plan (./variants-sql.ts; several items: ./variants-rounds.ts) takes, and
// what it binds for them: every item with a variant list. Items without one take the general
// planner (./plan.ts).

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
// of its own: refused, OWN_STOCK); categories as given, with a head category placed among them (one
// merged into the stored paths, and a slug derived from the stored title: `resolve` reads them),
// and a slug (null: derived from the title given).
const BESIDE = new Set<string>(PRODUCT_FIELD_NAMES.filter((n) => n !== "stock"));
// A variant selected by variant_id or SKU takes the body's variant fields (price, stock, ...) as a
// leading update entry (a SKU's variant filled in by `resolve`; the product's own SKU makes them
// the product's, as `resolve` routes it again). Product-only fields go to its product either way.
const PRODUCT_ONLY = new Set<string>(PRODUCT_ONLY_FIELDS);
// The product's own count beside a non-empty list, when the item names the product: always refused
// (the list leaves it with variants, or an update names variants it does not have).
const OWN_STOCK = new Set(["stock", "adjust", "expected_qty", "expected_stock"]);

/** A body key's value as the product row of UPDATE_PRODUCT_FIELDS takes it; undefined: not here. */
function beside(key: string, v: unknown): unknown {
  if (BESIDE.has(key)) return key === "images" && v === null ? [] : v;
  if (key === "slug") return typeof v === "string" ? v : undefined;
  if (key !== "categories") return undefined;
  const paths = (v ?? []) as string[][];
  return tooManyPaths(paths) ? undefined : paths;
}

/**
 * How the item names its product: by id, or through a variant id or SKU the batch re-checks. A
 * variant id beside a product id selects the variant (`of`: the product it must be a variant of,
 * checked on the read, `misplaced`), as ./select.ts selects it. `none`: the item names no product,
 * the 400 ./select.ts words (`resolve` answers it without a read).
 */
type Selector = { productId: number } | { variantId: number; of?: number } | { sku: string } | { none: true };

function selectorOf(d: UpdateItem["data"]): Selector {
  if (d.variant_id !== undefined) {
    return d.product_id === undefined ? { variantId: d.variant_id } : { variantId: d.variant_id, of: d.product_id };
  }
  if (d.product_id !== undefined) return { productId: d.product_id };
  return typeof d.sku === "string" ? { sku: d.sku } : { none: true };
}

/** The one item of a body this path takes (./variants-sql.ts); several: ./variants-rounds.ts. */
export function variantsInSql(items: UpdateItem[]) {
  return items.length === 1 ? variantInSql(items[0]) : undefined;
}

/** The item as this path takes it, with its list bound as packed entries; undefined: it has no list (./plan.ts plans it). */
export function variantInSql(item: UpdateItem) {
  const d = item.data;
  const selector = selectorOf(d);
  const listed = d.variants?.sync !== undefined || d.variants?.add?.length || d.variants?.update?.length;
  // Naming no product, it is refused before anything else is (./select.ts).
  if ("none" in selector) return listed ? { item, selector, lists: [] } : undefined;
  // A count given twice (./states.ts, countsTwice) beside a list is refused whatever is stored:
  // worded from a read of the product alone, as names that disagree are.
  if (
    listed &&
    ((d.stock !== undefined && d.adjust !== undefined) ||
      (d.expected_qty !== undefined && d.expected_stock !== undefined))
  ) {
    return { item, selector, lists: [], refused: "counts" as Refused };
  }
  const byId = "productId" in selector;
  let product: Record<string, unknown> | undefined;
  let deriveSlug = false;
  let own = false;
  let stored: Stored | undefined;
  let tooMany = false;
  // A variant selected by id or SKU takes the body's variant fields first (./plan.ts,
  // BODY_TO_VARIANT): a leading update entry of its own.
  let lead: Record<string, unknown> | undefined;
  for (const [key, v] of Object.entries(d)) {
    if (v === undefined || key === "product_id" || key === "variants") continue;
    if (byId && OWN_STOCK.has(key)) {
      own = true;
      continue;
    }
    if (!byId && (key === "variant_id" || (key === "sku" && "sku" in selector))) continue;
    if (!byId && (OWN_STOCK.has(key) || (BESIDE.has(key) && !PRODUCT_ONLY.has(key)))) {
      // Selected by SKU, the variant is known after `resolve` reads it (BY_SKU until then).
      lead ??= { variant_id: "variantId" in selector ? selector.variantId : BY_SKU };
      lead[key === "stock" ? "qty" : key === "expected_stock" ? "expected_qty" : key] = v;
      continue;
    }
    // A head category with the paths given is placed among them here (none is no change), else
    // among the stored paths `resolve` reads; a slug derived again, from the title given or the
    // stored one `resolve` reads.
    if (key === "headcategory_name" && (v === null || d.categories !== undefined)) continue;
    if (key === "headcategory_name" && typeof v === "string") {
      stored = { ...stored, head: v };
      continue;
    }
    if (key === "slug" && v === null) {
      if (typeof d.title === "string") deriveSlug = true;
      else stored = { ...stored, slug: true };
      continue;
    }
    const value = beside(key, key === "categories" ? withHead((v ?? []) as string[][], d.headcategory_name) : v);
    if (value === undefined) {
      if (key !== "categories") return undefined;
      tooMany = true;
      continue;
    }
    product ??= {};
    product[key] = value;
  }
  // Paths given past the bound (a head category placed among them) are refused whatever is
  // stored: worded from a read, as names that disagree are.
  if (tooMany) return { item, selector, lists: [], product, refused: "paths" as Refused, stored };
  // The lists in the order they apply: each is planned against what the one
  // before it left, in the same batch.
  // An empty add or update changes nothing; an empty sync deletes every variant (below).
  const given = LISTS.flatMap(([key, mode]) => {
    const entries: (VariantEntry | VariantUpdateEntry)[] | undefined = d.variants?.[key];
    return entries && (entries.length || mode === MODE.sync) ? [{ mode, given: entries }] : [];
  });
  // Entries that disagree on option names are refused whatever is stored: worded from a read of the
  // product alone (./refusals.ts stops at these errors, before any match).
  const shared = sharedNames(given.flatMap((l) => l.given));
  if (shared === false) {
    return { item, selector, lists: [], product, refused: "names" as Refused, stored };
  }
  // An empty sync deletes every variant: alone, the product's own count beside it then applies to
  // the product; an add after it gives the product its only variants, an update's entries name
  // variants the sync deleted (refused whatever is stored: worded from a read, ./diagnose.ts).
  const emptied = given[0]?.mode === MODE.sync && !given[0].given.length && !lead;
  const empty = emptied && given.length === 1;
  // A selected variant's fields before an empty sync are a leading entry like any (the sync then
  // deletes every variant, the selected one too).
  if (!given.length) return undefined;
  if (emptied && d.variants?.update?.length)
    return { item, selector, lists: [], product, refused: "emptied" as Refused, stored };
  let ownExpected: number | undefined;
  if (empty && own) {
    product = {
      ...product,
      ...(d.stock === undefined ? {} : { stock: d.stock }),
      ...(d.adjust === undefined ? {} : { adjust: d.adjust }),
    };
    ownExpected = d.expected_qty ?? d.expected_stock;
    own = false;
  }
  // An update's expected_qty is of the count as read, which a sync or the leading entry before it
  // may change: the batch then checks them before the lists (`expected`, [variant id, qty] pairs).
  const { sync, update } = d.variants ?? {};
  const beforeSync = (sync !== undefined || lead) && update?.some((e) => e.expected_qty !== undefined);
  if (lead) given.unshift({ mode: MODE.update, given: [lead as VariantUpdateEntry] });
  // A count below 0 the leading entry leaves, which the lists after may lift: the batch turns the
  // stock floor of its product's variants on after the last list (./variants-sql.ts, RESTORE_FLOOR).
  const floor = lead !== undefined && ((lead.qty as number) < 0 || (lead.adjust as number) < 0);
  let expected: string | undefined;
  let asGiven = false;
  const lists = [];
  for (const [i, { mode, given: entries }] of given.entries()) {
    const names = sharedNames(entries) || undefined;
    const ranges: [number, number][] = [];
    const once = mode === MODE.update ? merged(entries as VariantUpdateEntry[], ranges) : entries;
    // Merged entries refused as given: worded from a read. Beside other lists, the read runs the
    // plan of the first list (./diagnose.ts), so the lists travel as given.
    if (once === REFUSED && given.length === 1) {
      return { item, selector, lists: [], product, refused: "merged" as Refused, stored };
    }
    if (once === REFUSED) asGiven = true;
    let list = once === REFUSED ? entries : once;
    if (beforeSync && mode === MODE.update && !(lead && i === 0)) {
      const updates = list as VariantUpdateEntry[];
      expected = JSON.stringify(
        updates.flatMap((e) => (e.expected_qty === undefined ? [] : [[e.variant_id, e.expected_qty]])),
      );
      list = updates.map(({ expected_qty: _, ...e }) => e);
    }
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
    const stock =
      mode === MODE.update &&
      (list as VariantUpdateEntry[]).some((e) => e.adjust !== undefined || e.expected_qty !== undefined);
    const entriesOf = list.length ? parts : [];
    const checks = ranges.length ? JSON.stringify(ranges) : undefined;
    lists.push({ mode, entries: entriesOf, names: list.length ? (names ?? null) : [], stock, ranges: checks });
  }
  // The first expected_qty of a variant holds (./states.ts): the leading entry's, whose variant's
  // update entries then expect nothing (of a SKU's variant, known once `resolve` reads it).
  if (lead?.expected_qty !== undefined && lead.variant_id !== BY_SKU) {
    expected = leadHolds(expected, lead.variant_id as number);
  }
  if (deriveSlug) product = { ...product, slug: null };
  // Not written: the read that words a refusal runs the plan for the matches (./diagnose.ts).
  const refused: Refused | undefined = own ? "stock" : asGiven ? "merged" : undefined;
  const borrowed = borrowNames(lists, shared);
  return {
    item,
    selector,
    lists,
    product,
    refused,
    stored,
    expected,
    ownExpected,
    lead: lead !== undefined,
    floor,
    borrowed,
  };
}

/**
 * A sync whose entries name no options beside a list naming them: the sync is matched with those
 * names where the product has none yet, and the other list's entries are refused where it has
 * others (./states.ts, listNames). The sync takes them (the plan would otherwise match it
 * with none, and plan no rows), and a guard refuses the batch where the product has other names
 * (./variants-guards.ts, namesGuard), worded from a read. Returns the names borrowed.
 */
function borrowNames(lists: { mode: number; names: string[] | null; entries: unknown[] }[], shared?: string[]) {
  const sync = lists.find((l) => l.mode === MODE.sync);
  if (!shared || !sync?.entries.length || sync.names !== null) return undefined;
  sync.names = shared;
  return shared;
}

/** The update entries' expected counts (`expected`) but those of the leading entry's variant. */
function leadHolds(expected: string | undefined, variantId: number): string | undefined {
  if (expected === undefined) return undefined;
  const pairs = (JSON.parse(expected) as [number, number][]).filter(([id]) => id !== variantId);
  return pairs.length ? JSON.stringify(pairs) : undefined;
}

/** The leading entry's variant id until `resolve` reads the variant a SKU names. */
const BY_SKU = -1;

/** What the product fields beside the list derive from the stored product: a head category
 * merged into its paths, a slug derived from its title. */
type Stored = { head?: string; slug?: true };

/**
 * Why the body is refused whatever is stored: its entries' option names; the product's own count
 * beside the list; a count given twice (`stock` and `adjust`, or both expected counts); update
 * entries after an empty sync ("emptied"); update entries on one variant that give `qty` and
 * `adjust` or take a count past the largest ("merged"); category paths given past the bound
 * ("paths").
 */
export type Refused = "names" | "stock" | "counts" | "emptied" | "merged" | "paths";

export type SqlList = NonNullable<ReturnType<typeof variantInSql>>;

const P = sqlNames(products);
const V = sqlNames(variants);
const K = sqlNames(skus);
// ?1 product id, ?2 variant id, ?3 SKU: the product one names, the variant a SKU names, its
// version and what product fields beside the list derive from.
const RESOLVE = `
  SELECT p.${P.id} AS id, ${VERSION_SQL} AS version, p.${P.categories} AS categories, p.${P.title} AS title,
    (SELECT k.${K.variantId} FROM ${K.$} AS k WHERE k.${K.sku} = ?3) AS variant
  FROM ${P.$} AS p WHERE p.${P.id} = coalesce(?1,
    (SELECT v.${V.productId} FROM ${V.$} AS v WHERE v.${V.id} = ?2),
    (SELECT k.${K.productId} FROM ${K.$} AS k WHERE k.${K.sku} = ?3))`;

/** The product the batch writes and the conditions it re-checks (./variants-guards.ts, `conditions`). */
export type Resolved = {
  productId: number;
  /** The version an If-Match named. */
  version?: number;
  /** The variant a variant id selects, or the SKU's owner (null: the product's own SKU). */
  selected?: { variantId: number } | { sku: string; variantId: number | null };
  /** The stored categories a head category was merged into, as read (the batch re-checks them). */
  categories?: string;
  /** Product fields derived from what was read (categories, slug), written beside the list's. */
  fields?: Record<string, unknown>;
  /** The If-Match names none of the product's versions: the answer is the 412, nothing is written. */
  changed?: true;
  /** Refused by what was read (a head category merged past the bound on paths): worded from a read, not written. */
  refused?: true;
  /** The product had no slug: `fields` gives the one derived (the batch re-checks it still has none). */
  slugless?: true;
};

/** An item of a round: its lists as routed (`variantInSql`) and its product (`resolve`). */
export type RoundItem = { list: SqlList; resolved: Resolved };

/** The 404 of a selection that finds nothing (the 400 of none), in the words of ./select.ts. */
export function notFound({ selector: s }: SqlList): Failed {
  if ("none" in s) return unselected();
  if ("variantId" in s) return fail(404, `variant_id: variant ${s.variantId} not found`);
  if ("sku" in s) return fail(404, `sku: no product or variant has SKU ${s.sku}`);
  return fail(404, `product_id: product ${s.productId} not found`);
}

/** The 404 of a variant selected beside the id of a product it is not a variant of, in the words of ./select.ts. */
export function misplaced({ selector: s }: SqlList, row: ResolveRow): Failed | undefined {
  if (!("variantId" in s) || s.of === undefined || s.of === row.id) return undefined;
  return fail(404, `variant_id: variant ${s.variantId} is not a variant of product ${s.of}`);
}

/**
 * The product and the conditions of the batch: a read first only for a selection by variant id or
 * SKU, or an If-Match naming tags (its version; `changed` when it names none of them); the 404
 * when the read finds nothing selected (before any If-Match, as ./select.ts selects); undefined
 * when the item cannot be routed (`resolvedFrom`; none is known).
 */
export async function resolve(db: DB, list: SqlList, ifMatch?: IfMatch): Promise<Resolved | Failed | undefined> {
  const s = list.selector;
  if ("none" in s) return notFound(list);
  const tags = ifMatch && !ifMatch.any;
  if ("productId" in s && !tags && !list.stored) return { productId: s.productId };
  const row = await stmt(
    db,
    RESOLVE,
    "productId" in s ? s.productId : null,
    "variantId" in s ? s.variantId : null,
    "sku" in s ? s.sku : null,
  ).first<ResolveRow>();
  if (!row) return notFound(list);
  const other = misplaced(list, row);
  if (other) return other;
  if (tags && !ifMatch.tags.includes(productETag(row.id, row.version))) return { productId: row.id, changed: true };
  return resolvedFrom(list, row, tags);
}

/** What RESOLVE reads of an item's product (./variants-round-read.ts reads it for several). */
export type ResolveRow = {
  id: number;
  version: number;
  variant: number | null;
  categories: string;
  title: string;
};

/** The product and the batch's conditions from what was read; undefined: not routed (none known). */
export function resolvedFrom(list: SqlList, row: ResolveRow, tags?: boolean): Resolved | undefined {
  const s = list.selector;
  const selected =
    "variantId" in s ? { variantId: s.variantId } : "sku" in s ? { sku: s.sku, variantId: row.variant } : undefined;
  const out: Resolved = {
    productId: row.id,
    ...(tags ? { version: row.version } : {}),
    ...(selected ? { selected } : {}),
  };
  if (list.lead && "sku" in s && row.variant === null) {
    // The product's own SKU: the fields beside the list are the product's, as when it is named by
    // id (the SKU selects it, no new value); the batch still re-checks the SKU's owner.
    const again = variantInSql({ ...list.item, data: { ...list.item.data, sku: undefined, product_id: row.id } });
    if (!again) return undefined;
    Object.assign(list, { lead: false, expected: undefined, ownExpected: undefined, floor: false }, again, {
      item: list.item,
      selector: s,
    });
  }
  if (list.lead && "sku" in s && row.variant !== null) {
    const [[part]] = list.lists[0].entries;
    const entries = JSON.parse(part) as unknown[][];
    entries[0][VARIANT_ID] = row.variant;
    list.lists[0].entries = [[JSON.stringify(entries), 0, entries.length]];
    if (typeof entries[0][EXPECTED] === "number") list.expected = leadHolds(list.expected, row.variant);
  }
  const { head, slug } = list.stored ?? {};
  if (head !== undefined) {
    const categories = withHead(parseList(row.categories) as string[][], head);
    out.categories = row.categories;
    // Past the bound on paths: refused, worded from a read (./diagnose.ts).
    if (tooManyPaths(categories)) return { ...out, refused: true };
    out.fields = { categories };
  }
  if (slug) out.fields = { ...out.fields, slug: derivedSlug(row.title, row.id) };
  return out;
}
