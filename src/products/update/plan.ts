import { MAX_ANSWER_BYTES, tooLarge } from "../size";
import type { Located } from "../variants";
import { categoriesAndSlug } from "./categories";
import { type Failed, Failures, fail, type Snapshot, type Target } from "./select";
import { sizeAfter } from "./size";
import { countsTwice, finalChecks, fromRow, ownCountsRefused, productOf, selectedVariant, writes } from "./states";

// The plan of one product's update without a variant list (docs/products.md, "Updating products"):
// its product fields, or a selected variant's own fields; decided in JS from the round's snapshot,
// without database access, as rows for the statements of the write batch. An item with a variant
// list is planned in SQL (./variants-sql.ts) and never reaches this plan (./index.ts).

// ---------------------------------------------------------------------------------------------
// Plan

/** An adjustment refused by the stock floor, with the count it found. */
const belowZero = (path: string, what: string, col: string, from: number, to: number) =>
  `${path}: would take the ${col} of ${what} from ${from} to ${to}; it cannot go below 0 while disable_minusqty is on`;

export type Plan = {
  index: number;
  productId: number;
  /** The product's structure as read (./guard.ts). */
  guard: {
    id: number;
    structure: string;
    stock?: number;
    categories?: string;
    slug?: null;
    /** Stored counts the item expects: [variant id, or null for the product's stock, qty]. */
    expect?: [number | null, number][];
    /** The product version an If-Match named (src/products/version.ts). */
    version?: number;
  };
  product: Record<string, unknown>;
  /** Variants whose SKU changes, parked first so that SKUs may swap (./write.ts). */
  park: { id: number; sku: boolean }[];
  updates: Record<string, unknown>[];
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

  // No variant list reaches this plan (./index.ts): the variants are the stored ones, a selected
  // variant's fields the only change to them.
  const states = (snap.variants.get(p.id) ?? []).map(fromRow);
  if (t.variant) selectedVariant(t, states, f);
  if (!t.variant && d.adjust !== undefined) product.adjust = d.adjust;
  if (f.any) return f.outcome();

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

  const size = sizeAfter(snap.sizes.get(p.id) ?? 0, p, product, [], states);
  if (size > MAX_ANSWER_BYTES) return fail(413, tooLarge(`product ${p.id}`, size));
  return {
    index: t.item.index,
    productId: p.id,
    guard: {
      id: p.id,
      structure: snap.structures.get(p.id) ?? "",
      ...(clearsStock ? { stock: p.stock } : {}),
      ...(expect.length ? { expect } : {}),
      ...(t.version === undefined ? {} : { version: t.version }),
      ...depends,
    },
    product,
    claims,
    slugClaim,
    ...writes(p.id, states),
  };
}
