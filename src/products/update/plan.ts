import { derivedSlug, tooManyPaths, withHead } from "../categories";
import { slugTaken } from "../create";
import { parseList } from "../kinds";
import { optionNames } from "../present";
import { MAX_VARIANTS, type VariantEntry } from "../schema";
import { comboKey, type Located, NONE, sameNames, sizeAfter, tooLarge, VALUE_KEYS, valuesOf } from "../variants";
import { type Failed, Failures, fail, type PlanVariant, type Snapshot, type Target } from "./select";
import {
  addEntries,
  applyEntry,
  carriesList,
  copyState,
  created,
  expectedOf,
  finalChecks,
  fromRow,
  listNames,
  ownCountsRefused,
  productOf,
  selectedVariant,
  set,
  updateEntries,
  type VariantState,
} from "./states";

// The plan of one item of PUT /v1/products, every body form (docs/products.md, "Updating
// products"): decided in JS from the round's read, without database access. The write batch
// (./write.ts) writes what the plan's states and product row differ in from the rows as read.

/** The fields of a stock tool's item: it sets only these of one SKU. */
const STOCK_TOOL = new Set(["sku", "stock", "price", "qty_location", "adjust", "expected_qty", "expected_stock"]);
const stockToolItem = (d: Record<string, unknown>) =>
  Object.entries(d).every(([k, v]) => v === undefined || STOCK_TOOL.has(k));

/**
 * Whether an entry gives no option values, or exactly `values` for `names` (what valuesOf would
 * give back without an error), so the variant keeps the values it has.
 */
function keepsValues(e: VariantEntry, names: string[], values: readonly string[]): boolean {
  let given = false;
  let same = names.length > 0;
  for (let i = 0; i < VALUE_KEYS.length; i++) {
    const v = e[VALUE_KEYS[i]];
    if (v !== undefined) given = true;
    if (i < names.length ? v !== values[i] : v !== undefined || values[i] !== "") same = false;
  }
  return !given || same;
}

/** An adjustment refused by the stock floor, with the count it found. */
const belowZero = (path: string, what: string, col: string, from: number, to: number) =>
  `${path}: would take the ${col} of ${what} from ${from} to ${to}; it cannot go below 0 while disable_minusqty is on`;

export type Guard = {
  id: number;
  structure: string;
  price?: number;
  stock?: number;
  categories?: string;
  slug?: null;
  /** Stored counts the plan was decided on: [variant id, or null for the product's stock, qty]. */
  expect?: [number | null, number][];
  /** The product version an If-Match named (src/products/version.ts). */
  version?: number;
};

export type Plan = {
  index: number;
  productId: number;
  /** What the plan depends on, checked by the batch (./write.ts). */
  guard: Guard;
  /** The product fields the body gives (API names), `adjust` a relative change of its stock. */
  product: Record<string, unknown>;
  /** The variants the product will have, each with its changes against the row read. */
  states: VariantState[];
  deletes: number[];
  /**
   * Whether the item matched a variant list or gave a new SKU: later items of the round naming
   * its product are planned in the next round, from a fresh read that knows the new variants and SKUs.
   */
  alone: boolean;
  /** SKUs the product will have that it does not own yet, checked across the items of a round. */
  claims: Located<string>[];
  /** A slug the client gave that the product does not have yet, checked likewise. */
  slugClaim?: string;
};

/**
 * A PUT item's categories and slug (docs/products.md, "Categories, URLs and images"), part of its
 * plan: sets them on the plan's product row when they change; answers the slug the
 * client gave, if the product takes it.
 */
function categoriesAndSlug(
  t: Target,
  snap: Snapshot,
  product: Record<string, unknown>,
  f: Failures,
  depends: Pick<Guard, "categories" | "slug">,
) {
  const d = t.item.data;
  const p = t.product;
  const head = d.headcategory_name ?? undefined;
  if (d.categories !== undefined || head !== undefined) {
    const stored = d.categories === undefined;
    // An earlier item of the round may have set them: a head category joins what it left.
    const earlier = product.categories as string[][] | undefined;
    const given = stored ? (earlier ?? (parseList(p.categories) as string[][])) : (d.categories ?? []);
    if (stored && earlier === undefined) depends.categories = p.categories;
    const next = withHead(given, head);
    const tooMany = tooManyPaths(next);
    if (tooMany) f.add(400, tooMany);
    else if (JSON.stringify(next) !== p.categories) product.categories = next;
    else delete product.categories;
  }
  if (typeof d.slug === "string") {
    if (d.slug === p.slug) return undefined;
    const owner = snap.slugs.get(d.slug);
    if (owner !== undefined && owner !== p.id) f.add(409, slugTaken(d.slug, owner));
    product.slug = d.slug;
    return d.slug;
  }
  // null derives it again; a product from before slugs existed gets one on its first change.
  if (d.slug === null || p.slug === null) {
    product.slug = derivedSlug((product.title as string | undefined) ?? p.title, p.id);
    if (d.slug === undefined) depends.slug = null;
  }
  return undefined;
}

/**
 * Everything about one item, decided from the read; no database access. `prior`: the plan an
 * earlier item of the round left for the same product (items without a variant list only), so
 * a stock tool's items over the variants of one product are one round.
 */
export function plan(t: Target, snap: Snapshot, prior?: Plan): Plan | Failed {
  const d = t.item.data;
  const p = t.product;
  const f = new Failures();

  const product: Record<string, unknown> = prior ? { ...prior.product } : { id: p.id };
  const given = productOf(t);
  // The product's own count as the items before leave it.
  const ownStock = ((prior?.product.stock as number | undefined) ?? p.stock) + ((prior?.product.adjust as number) || 0);
  for (const [k, v] of Object.entries(given)) product[k] = v;
  if (given.stock !== undefined) delete product.adjust;
  // What the plan derives from the categories or slug it read, for the guard.
  const depends: Pick<Guard, "categories" | "slug"> = {};
  const slugClaim = categoriesAndSlug(t, snap, product, f, depends);

  // The count's guards of the item's own stock (docs/stock.md): a count or a change, one expected count.
  if (d.stock !== undefined && d.adjust !== undefined) {
    f.add(400, "adjust: give stock (the new count) or adjust (the change), not both");
  }
  if (d.expected_qty !== undefined && d.expected_stock !== undefined) {
    f.add(400, "expected_stock: give expected_qty or expected_stock, not both");
  }
  const expected = expectedOf(d);

  // A prior plan's states are shared: the selected variant is copied before it changes.
  let states = prior ? prior.states.slice() : (snap.variants.get(p.id) ?? []).map(fromRow);
  if (prior && t.variant) {
    const at = states.findIndex((s) => s.id === t.variant?.id);
    if (at >= 0) states[at] = copyState(states[at]);
  }
  const selected = t.variant ? selectedVariant(t, states, f) : undefined;
  if (!t.variant && d.adjust !== undefined) {
    if (product.stock !== undefined && given.stock === undefined) product.stock = (product.stock as number) + d.adjust;
    else product.adjust = ((product.adjust as number | undefined) ?? 0) + d.adjust;
  }

  const current = optionNames(p);
  const { sync, add, update, names } = listNames(d, current, f);
  if (f.any) return f.outcome();
  const newPrice = (product.price as number | undefined) ?? p.price;

  // 1. sync: the full list; matched by SKU when the entry has one, else by option values.
  const deletes: number[] = prior ? [...prior.deletes] : [];
  // Whether a new variant takes the product's price, so the plan depends on it.
  let inherits = false;
  if (d.variants?.sync) {
    const bySku = new Map<string, VariantState>();
    for (const s of states) if (s.cur.sku !== null) bySku.set(s.cur.sku, s);
    // By option values only when an entry has no SKU (a stock sync names every variant by SKU),
    // keyed by the values as read, before any entry changes them.
    const byCombo = sync.every(({ entry }) => entry.sku)
      ? undefined
      : new Map(states.map((s) => [comboKey(s.cur.values), s]));
    const matched = new Map<VariantState, string>();
    const next: VariantState[] = [];
    sync.forEach(({ entry, path }, i) => {
      // An entry naming an existing variant by SKU and giving no option values (a stock sync of
      // {sku, qty}) keeps that variant's values; values are needed only to create or to change.
      const known = entry.sku ? bySku.get(entry.sku) : undefined;
      // Likewise an entry repeating the values it has (a full sync sent again): no array of its own.
      const keeps = known && names.length === current.length && keepsValues(entry, names, known.cur.values);
      const v = keeps ? { values: known.cur.values, errors: NONE } : valuesOf(entry, names, path);
      for (const e of v.errors) f.add(400, e);
      if (!v.values) return;
      const s = entry.sku ? known : byCombo?.get(comboKey(v.values));
      const other = s && matched.get(s);
      if (s && other) {
        f.add(
          409,
          entry.sku
            ? `${path}.sku: matches ${s.label} (SKU ${entry.sku}), already matched by ${other}`
            : `${path}: same option values as ${other}`,
        );
      } else if (s) {
        matched.set(s, path);
        applyEntry(s, entry, path, f);
        set(s, "values", v.values, path);
        set(s, "position", i, path);
        next.push(s);
      } else {
        if (entry.price === undefined) inherits = true;
        next.push(created(entry, v.values, newPrice, i, path));
      }
    });
    for (const s of states) if (!matched.has(s) && s.id !== undefined) deletes.push(s.id);
    states = next;
  }

  // 2. add: new variants; an existing SKU or option combination is a conflict.
  if (addEntries(states, add, names, newPrice, f)) inherits = true;

  // 3. update: only the given fields of a variant of this product.
  updateEntries(states, update, names, p.id, f);

  // The state after the request, checked whole.
  if (states.length > MAX_VARIANTS) {
    f.add(400, `variants: a product has at most ${MAX_VARIANTS} variants; this request would leave ${states.length}`);
  }
  if (!t.variant && states.length) ownCountsRefused(d, f);
  // Conditions on the counts as read (as the items before leave them); the write's guard holds
  // the stored counts they were decided on until it commits.
  // A stock tool's item (docs/products.md, "Stock tools") knows its SKUs: its count's refusal names the SKU.
  const tool = t.bySku && stockToolItem(d);
  const who = (s: VariantState) => (tool && s.id === t.variant?.id ? `SKU ${d.sku}` : s.label);
  const own = tool && !t.variant ? `SKU ${d.sku}` : `product ${p.id}`;
  const expect: [number | null, number][] = prior?.guard.expect ? [...prior.guard.expect] : [];
  if (!t.variant && !states.length && expected.qty !== undefined) {
    if (ownStock !== expected.qty) f.add(409, `${expected.path}: ${own} has stock ${ownStock}, not ${expected.qty}`);
    expect.push([null, p.stock]);
  }
  // Chained, only the selected variant's condition is this item's (the others' were checked); its
  // count is a condition even where a sync deletes it (expected as stored, before the lists).
  let conditions = prior ? [] : states;
  if (selected?.expected && (prior || !states.includes(selected))) conditions = [...conditions, selected];
  for (const s of conditions) {
    if (!s.expected || !s.row) continue;
    const { qty, path } = s.expected;
    const was = s.before ?? s.row.qty;
    if (was !== qty) f.add(409, `${path}: ${who(s)} has qty ${was}, not ${qty}`);
    expect.push([s.row.id, s.row.qty]);
  }
  // Whether the plan writes a stock derived from the one it read, so it depends on it.
  let clearsStock = prior?.guard.stock !== undefined;
  const flagOn = ((product.disable_minusqty as number | undefined) ?? p.disableMinusqty) === 1;
  const negative: string[] = [];
  if (flagOn) {
    for (const s of states) {
      if (s.cur.qty >= 0) continue;
      if (s.adjust !== undefined)
        f.add(409, belowZero(s.qtyPath ?? s.label, who(s), "qty", s.before ?? s.cur.qty - s.adjust, s.cur.qty));
      else if (s.qtyPath) f.add(400, `${s.qtyPath}: must not be negative while disable_minusqty is on`);
      else negative.push(s.cur.sku ?? s.label);
    }
    const adjust = product.adjust as number | undefined;
    const stock = ((product.stock as number | undefined) ?? p.stock) + (adjust ?? 0);
    if (stock < 0) {
      // Worded by what this item gave: a count an item before it left negative (with the flag
      // off) is refused as that item's stock sent alone would be.
      if (d.adjust !== undefined) f.add(409, belowZero("adjust", own, "stock", ownStock, stock));
      else if (given.stock !== undefined) f.add(400, "stock: must not be negative while disable_minusqty is on");
      // A product with variants does not use its own stock: clearing it lets the flag go on.
      else if (states.length) {
        product.stock = 0;
        delete product.adjust;
        clearsStock = true;
      } else negative.push(p.sku ?? `product ${p.id}`);
    }
  }
  const claims = finalChecks(states, product, p, snap, negative, f);
  if (f.any) return f.outcome();

  const finalNames = states.length ? names : [];
  if (!sameNames(finalNames, current)) product.option_names = finalNames;
  else delete product.option_names;
  const deleted = deletes.map((id) => snap.variantById.get(id) as PlanVariant);
  const tooBig = tooLarge(`product ${p.id}`, sizeAfter(snap.read.get(p.id)?.size ?? 0, p, product, deleted, states));
  if (tooBig) return fail(413, tooBig);
  const price = prior?.guard.price ?? (inherits && product.price === undefined ? p.price : undefined);
  return {
    index: t.item.index,
    productId: p.id,
    // Undefined members are left out of the guard's JSON: the batch checks only what the plan depends on.
    guard: {
      ...prior?.guard,
      id: p.id,
      structure: snap.read.get(p.id)?.structure ?? "",
      price,
      stock: clearsStock ? p.stock : undefined,
      expect: expect.length ? expect : undefined,
      version: t.version,
      ...depends,
    },
    product,
    states,
    deletes,
    alone: carriesList(d) || (d.sku !== undefined && !t.bySku),
    claims,
    slugClaim: slugClaim ?? prior?.slugClaim,
  };
}
