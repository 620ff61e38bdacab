import { optionNames, type VariantRow } from "../present";
import { MAX_VARIANTS } from "../schema";
import { MAX_ANSWER_BYTES, tooLarge } from "../size";
import { comboKey, type Located, sameNames, VALUE_KEYS, valuesOf } from "../variants";
import { categoriesAndSlug } from "./categories";
import { type Failed, Failures, fail, type Snapshot, type Target } from "./select";
import { sizeAfter } from "./size";
import {
  addEntries,
  applyEntry,
  countsTwice,
  created,
  finalChecks,
  fromRow,
  listNames,
  ownCountsRefused,
  productOf,
  selectedVariant,
  set,
  updateEntries,
  type VariantState,
  writes,
} from "./states";

// The plan of one product's update (docs/products.md, "Updating products"): decided in JS from the round's
// snapshot, without database access, as rows for the statements of the write batch.

// ---------------------------------------------------------------------------------------------
// Plan

/** An adjustment refused by the stock floor, with the count it found. */
const belowZero = (path: string, what: string, col: string, from: number, to: number) =>
  `${path}: would take the ${col} of ${what} from ${from} to ${to}; it cannot go below 0 while disable_minusqty is on`;

export type Plan = {
  index: number;
  productId: number;
  /** The product's structure as read, and its price when a new variant inherits it (./guard.ts). */
  guard: {
    id: number;
    structure: string;
    price?: number;
    stock?: number;
    categories?: string;
    slug?: null;
    /** Stored counts the item expects: [variant id, or null for the product's stock, qty]. */
    expect?: [number | null, number][];
    /** The product version an If-Match named (src/products/version.ts). */
    version?: number;
  };
  product: Record<string, unknown>;
  deletes: number[];
  park: { id: number; sku: boolean; options: boolean }[];
  updates: Record<string, unknown>[];
  inserts: Record<string, unknown>[];
  /** SKUs the product will have that it does not own yet, checked across the items of a round. */
  claims: Located<string>[];
  /** A slug the client gave that the product does not have yet, checked likewise. */
  slugClaim?: string;
};

/** Everything about one product's update, decided from the snapshot; no database access. */
export function plan(t: Target, snap: Snapshot): Plan | Failed {
  const d = t.item.data;
  const p = t.product;
  const f = new Failures();

  const product = productOf(t);
  // What the plan derives from the categories or slug it read, for the guard.
  const depends: Pick<Plan["guard"], "categories" | "slug"> = {};
  const slugClaim = categoriesAndSlug(t, snap, product, f, depends);

  // The count's guards of the item's own stock (docs/stock.md).
  countsTwice(d, f);
  const expectedPath = d.expected_stock === undefined ? "expected_qty" : "expected_stock";
  const expected = d.expected_qty ?? d.expected_stock;

  let states = (snap.variants.get(p.id) ?? []).map(fromRow);
  if (t.variant) selectedVariant(t, states, f);
  else if (d.adjust !== undefined) product.adjust = d.adjust;

  const current = optionNames(p);
  const { sync, add, update, names } = listNames(d, current, f);
  if (f.any) return f.outcome();
  const newPrice = (product.price as number | undefined) ?? p.price;

  // 1. sync: the full list; matched by SKU when the entry has one, else by option values.
  const deletes: number[] = [];
  // Whether a new variant takes the product's price, so the plan depends on it.
  let inherits = false;
  if (d.variants?.sync) {
    const bySku = new Map(states.flatMap((s) => (s.cur.sku === null ? [] : [[s.cur.sku, s] as const])));
    const byCombo = new Map(states.map((s) => [comboKey(s.cur.values), s]));
    const matched = new Map<VariantState, string>();
    const next: VariantState[] = [];
    sync.forEach(({ entry, path }, i) => {
      // An entry naming an existing variant by SKU and giving no option values (a stock sync of
      // {sku, qty}) keeps that variant's values; values are needed only to create or to change.
      const known = entry.sku ? bySku.get(entry.sku) : undefined;
      const keeps = known && names.length === current.length && !VALUE_KEYS.some((k) => entry[k] !== undefined);
      const v = keeps ? { values: known.cur.values, errors: [] } : valuesOf(entry, names, path);
      for (const e of v.errors) f.add(400, e);
      if (!v.values) return;
      const s = entry.sku ? known : byCombo.get(comboKey(v.values));
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
    for (const s of states) if (!matched.has(s)) deletes.push(s.id as number);
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
  if (!t.variant && states.length) {
    ownCountsRefused(d, f);
  }
  // Conditions on the stored counts, as read; the write's guard holds them until it commits.
  const expect: [number | null, number][] = [];
  if (!t.variant && !states.length && expected !== undefined) {
    if (p.stock !== expected) f.add(409, `${expectedPath}: product ${p.id} has stock ${p.stock}, not ${expected}`);
    expect.push([null, expected]);
  }
  for (const s of states) {
    if (!s.expected || !s.row) continue;
    const { qty, path } = s.expected;
    if (s.row.qty !== qty) f.add(409, `${path}: ${s.label} has qty ${s.row.qty}, not ${qty}`);
    expect.push([s.row.id, qty]);
  }
  // Whether the plan writes a stock derived from the one it read, so it depends on it.
  let clearsStock = false;
  const flagOn = ((product.disable_minusqty as number | undefined) ?? p.disableMinusqty) === 1;
  const negative: string[] = [];
  if (flagOn) {
    for (const s of states) {
      if (s.cur.qty >= 0) continue;
      if (s.adjust !== undefined)
        f.add(409, belowZero(s.qtyPath ?? s.label, s.label, "qty", s.cur.qty - s.adjust, s.cur.qty));
      else if (s.qtyPath) f.add(400, `${s.qtyPath}: must not be negative while disable_minusqty is on`);
      else negative.push(s.cur.sku ?? s.label);
    }
    const adjust = product.adjust as number | undefined;
    const stock = ((product.stock as number | undefined) ?? p.stock) + (adjust ?? 0);
    if (stock < 0) {
      if (adjust !== undefined) f.add(409, belowZero("adjust", `product ${p.id}`, "stock", p.stock, stock));
      else if (product.stock !== undefined) f.add(400, "stock: must not be negative while disable_minusqty is on");
      // A product with variants does not use its own stock: clearing it lets the flag go on.
      else if (states.length) {
        product.stock = 0;
        clearsStock = true;
      } else negative.push(p.sku ?? `product ${p.id}`);
    }
  }
  const claims = finalChecks(states, product, p, snap, negative, f);
  if (f.any) return f.outcome();

  const finalNames = states.length ? names : [];
  if (!sameNames(finalNames, current)) product.option_names = finalNames;
  const deleted = deletes.map((id) => snap.variantById.get(id) as VariantRow);
  const size = sizeAfter(snap.sizes.get(p.id) ?? 0, p, product, deleted, states);
  if (size > MAX_ANSWER_BYTES) return fail(413, tooLarge(`product ${p.id}`, size));
  return {
    index: t.item.index,
    productId: p.id,
    guard: {
      id: p.id,
      structure: snap.structures.get(p.id) ?? "",
      ...(inherits && product.price === undefined ? { price: p.price } : {}),
      ...(clearsStock ? { stock: p.stock } : {}),
      ...(expect.length ? { expect } : {}),
      ...(t.version === undefined ? {} : { version: t.version }),
      ...depends,
    },
    product,
    deletes,
    claims,
    slugClaim,
    ...writes(p.id, states),
  };
}
