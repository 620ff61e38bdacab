import { optionNames, type VariantRow } from "../present";
import { MAX_VARIANTS, type VariantEntry, type VariantUpdateEntry } from "../schema";
import { MAX_ANSWER_BYTES, tooLarge } from "../size";
import { comboKey, type Located, sameNames, VALUE_KEYS, valuesOf } from "../variants";
import { categoriesAndSlug } from "./categories";
import type { Read } from "./refusal-read";
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
  showValues,
  updateEntries,
  updateEntry,
  type VariantState,
} from "./states";

// The words of a variant list the SQL plan refused (./variants-sql.ts). The batch that refused it
// wrote nothing and said only that a constraint failed; a read batch then runs the same PLAN,
// reads which stored variant each entry matched (`matches`, in list order) beside the product,
// its variants and the owners of the SKUs and slug the body names (./refusal-read.ts: lean, only
// what a check can refuse), and this file words what the batch refused, with the errors, order
// and status of ./plan.ts, without matching the entries again: an entry's variant is the one the
// plan found.

/** What the read says: the errors; "plan" for a list the SQL plan does not take (./plan.ts plans
 * it); `slug`, the slug derived for a product that has none, which the batch did not write (it
 * is written again with it); undefined when nothing is refused now (a concurrent writer changed
 * the product since). */
export type Refusal = Failed | "plan" | { slug: string } | undefined;

/** What an item nothing refuses claims that no product has yet: SKUs, and a slug (the round's clash, ./diagnose.ts). */
export type Claims = { skus: Located<string>[]; slug?: string };

const belowZero = (path: string, what: string, from: number, to: number, col = "qty") =>
  `${path}: would take the ${col} of ${what} from ${from} to ${to}; it cannot go below 0 while disable_minusqty is on`;

/** How the read is worded: of several lists (the first matched as stored), with what an item
 * nothing refuses claims, for a product found without a slug. */
type Wording = { several?: boolean; claims?: Claims; slugless?: boolean };

/**
 * `lean`: the read has only the columns the checks read, and of a sync or update only the entries
 * and variants a check can refuse (`only`; `sound` counts the variants left out); "full" when
 * nothing else is refused, as the answer size needs the rest (./refusal-read.ts). `several`: the
 * item has two or three lists (a selected variant's leading entry is one), read in full, the
 * matches those of its sync if it has one. `claims` takes what an item nothing refuses claims.
 */
export function refusal(
  t: Target,
  { snap, matches, only, sound }: Read,
  lean: boolean,
  { several = false, claims, slugless = false }: Wording = {},
): Refusal | "full" {
  const d = t.item.data;
  const p = t.product;
  const f = new Failures();
  const product = productOf(t);
  const slug = categoriesAndSlug(t, snap, product, f, {});
  // A product without a slug gets one derived on its first change (where the body gives none),
  // which the batch writes only once a read found none (`slugless`).
  if (p.slug === null && d.slug === undefined && !slugless) return { slug: product.slug as string };
  countsTwice(d, f);
  // A selected variant takes the body's variant fields before the lists (of several: the leading
  // entry; beside one list, only product-only fields, so nothing changes), as ./plan.ts orders them.
  const stored = snap.variants.get(p.id) ?? [];
  const before = t.variant || several ? stored.map(fromRow) : [];
  if (t.variant) selectedVariant(t, before, f);

  const current = optionNames(p);
  const { sync, add, update, names } = listNames(d, current, f);
  if (f.any) return f.outcome();
  // Without option names the plan matches nothing (every entry lacks them); otherwise it gave a
  // row per entry (of several lists, per entry of the sync: the first list matched as stored).
  const count = several ? sync.length : sync.length + add.length + update.length;
  const matched = names.length ? matches : new Array<null>(count).fill(null);
  const syncs = d.variants?.sync !== undefined;
  if (matched.length !== count && (!several || syncs)) return "plan";

  const price = (product.price as number | undefined) ?? p.price;
  const c: Context = { matches: matched, snap, stored, names, price, productId: p.id, f, only, syncs };
  const deleted: VariantRow[] = [];
  let states: VariantState[];
  if (several) states = composed(before, sync, add, update, c, current.length, deleted);
  else if (syncs) states = synced(sync, c, current.length, deleted);
  else if (add.length) states = added(add, c);
  else states = updated(update, c);
  // A lean read leaves out the variants no check refuses (./refusal-read.ts).
  const skus = finalState(t, snap, product, states, sound, f);
  if (f.any) return f.outcome();
  if (lean) return "full";
  const finalNames = states.length ? names : [];
  if (!sameNames(finalNames, current)) product.option_names = finalNames;
  const size = sizeAfter(snap.sizes.get(p.id) ?? 0, p, product, deleted, states);
  if (size > MAX_ANSWER_BYTES) return fail(413, tooLarge(`product ${p.id}`, size));
  if (claims) Object.assign(claims, { skus, slug });
  return undefined;
}

/**
 * Two or three lists, applied in order as ./plan.ts applies them to the stored variants' states
 * (`before`, with the selected variant's fields): the sync from the plan's matches (the first
 * list matches the variants as stored, which the leading entry leaves as they were: it gives no
 * SKU or values), then an add and an update on the states the lists before leave (an add's
 * combination or SKU is another's as the sync left them, an update's variant one the sync kept),
 * which the plan's matches against the stored variants would not say.
 */
function composed(
  before: VariantState[],
  sync: Located<VariantEntry>[],
  add: Located<VariantEntry>[],
  update: Located<VariantUpdateEntry>[],
  c: Context,
  options: number,
  deleted: VariantRow[],
): VariantState[] {
  let states = before;
  if (c.syncs) {
    states = synced(sync, c, options, deleted, new Map(before.map((s) => [s.id as number, s])));
  }
  addEntries(states, add, c.names, c.price, c.f);
  updateEntries(states, update, c.names, c.productId, c.f);
  return states;
}

/** What the checks of one list share: the plan's matches, the read, the option names, the price
 * a new variant takes, and the errors. */
type Context = {
  matches: (number | null)[];
  snap: Snapshot;
  stored: VariantRow[];
  names: string[];
  price: number;
  productId: number;
  f: Failures;
  /** The entries a lean sync or update read (./refusal-read.ts); undefined: all. */
  only?: Set<number>;
  /** Whether the item has a sync list (of several, the first after a leading entry). */
  syncs: boolean;
};

/**
 * A sync's states in list order; `deleted` takes the variants no entry matched. `before`: the
 * stored variants' states as a leading entry left them.
 */
function synced(
  sync: Located<VariantEntry>[],
  c: Context,
  options: number,
  deleted: VariantRow[],
  before?: Map<number, VariantState>,
) {
  const { matches, snap, names, f } = c;
  const matched = new Map<number, string>();
  const states: VariantState[] = [];
  sync.forEach(({ entry, path }, i) => {
    if (c.only && !c.only.has(i)) return;
    const row = matches[i] === null ? undefined : snap.variantById.get(matches[i] as number);
    // An entry naming its variant by SKU without values keeps the variant's values.
    const keeps = entry.sku && row && names.length === options && !VALUE_KEYS.some((k) => entry[k] !== undefined);
    const v = keeps ? { values: fromRow(row).cur.values, errors: [] } : valuesOf(entry, names, path);
    for (const e of v.errors) f.add(400, e);
    if (!v.values) return;
    const other = row && matched.get(row.id);
    if (row && other) {
      f.add(
        409,
        entry.sku
          ? `${path}.sku: matches variant ${row.id} (SKU ${entry.sku}), already matched by ${other}`
          : `${path}: same option values as ${other}`,
      );
    } else if (row) {
      matched.set(row.id, path);
      const s = before?.get(row.id) ?? fromRow(row);
      applyEntry(s, entry, path, f);
      set(s, "values", v.values, path);
      set(s, "position", i, path);
      states.push(s);
    } else states.push(created(entry, v.values, c.price, i, path));
  });
  for (const row of c.stored) if (!matched.has(row.id)) deleted.push(row);
  return states;
}

/** The stored variants, then an add's entries after the last of them. */
function added(add: Located<VariantEntry>[], c: Context) {
  const { matches, snap, names, f } = c;
  const states = c.stored.map(fromRow);
  // Earlier entries of the list, which the plan did not match against.
  const combos = new Map<string, string>();
  const skus = new Map<string, string>();
  let position = states.reduce((m, s) => Math.max(m, s.cur.position), -1);
  add.forEach(({ entry, path }, i) => {
    const v = valuesOf(entry, names, path);
    for (const e of v.errors) f.add(400, e);
    if (!v.values) return;
    const key = comboKey(v.values);
    const dup = combos.get(key) ?? (matches[i] === null ? undefined : `variant ${matches[i]}`);
    if (dup) f.add(409, `${path}: option combination ${showValues(v.values)} already exists (${dup})`);
    if (entry.sku) {
      const owner = snap.owners.get(entry.sku);
      const own = owner && owner.productId === c.productId && owner.variantId !== null;
      const skuDup = skus.get(entry.sku) ?? (own ? `variant ${owner.variantId}` : undefined);
      if (skuDup) f.add(409, `${path}.sku: SKU ${entry.sku} already exists (${skuDup})`);
      skus.set(entry.sku, path);
    }
    combos.set(key, path);
    states.push(created(entry, v.values, c.price, ++position, path));
  });
  return states;
}

/** The stored variants with an update's entries applied. */
function updated(update: Located<VariantUpdateEntry>[], c: Context) {
  const { matches, names, f } = c;
  const states = c.stored.map(fromRow);
  const byId = new Map(states.map((s) => [s.id as number, s]));
  update.forEach(({ entry, path }, i) => {
    if (c.only && !c.only.has(i)) return;
    const s = matches[i] === null ? undefined : byId.get(matches[i] as number);
    if (!s) {
      f.add(404, `${path}.variant_id: variant ${entry.variant_id} is not a variant of product ${c.productId}`);
      return;
    }
    updateEntry(s, entry, path, names, f);
  });
  return states;
}

/**
 * The checks of the product as the list leaves it: what the batch's constraints refuse. `sound`:
 * how many variants it leaves beside `states` that no check refuses.
 */
function finalState(
  t: Target,
  snap: Snapshot,
  product: Record<string, unknown>,
  states: VariantState[],
  sound: number,
  f: Failures,
): Located<string>[] {
  const p = t.product;
  const count = states.length + sound;
  if (count > MAX_VARIANTS) {
    f.add(400, `variants: a product has at most ${MAX_VARIANTS} variants; this request would leave ${count}`);
  }
  // The product's own count beside the list (./variants-route.ts routes it only to be refused).
  const d = t.item.data;
  const expectedPath = d.expected_stock === undefined ? "expected_qty" : "expected_stock";
  const expected = d.expected_qty ?? d.expected_stock;
  if (!t.variant && count) {
    ownCountsRefused(d, f);
  }
  if (!t.variant && !count && expected !== undefined && p.stock !== expected) {
    f.add(409, `${expectedPath}: product ${p.id} has stock ${p.stock}, not ${expected}`);
  }
  for (const s of states) {
    if (!s.expected || !s.row) continue;
    const { qty, path } = s.expected;
    if (s.row.qty !== qty) f.add(409, `${path}: ${s.label} has qty ${s.row.qty}, not ${qty}`);
  }
  const negative: string[] = [];
  if (((product.disable_minusqty as number | undefined) ?? p.disableMinusqty) === 1) {
    for (const s of states) {
      if (s.cur.qty >= 0) continue;
      if (s.adjust !== undefined) f.add(409, belowZero(s.qtyPath ?? s.label, s.label, s.cur.qty - s.adjust, s.cur.qty));
      else if (s.qtyPath) f.add(400, `${s.qtyPath}: must not be negative while disable_minusqty is on`);
      else negative.push(s.cur.sku ?? s.label);
    }
    // A product with variants has no stock of its own: the write clears a negative one.
    const adjust = t.variant ? undefined : d.adjust;
    const stock = ((product.stock as number | undefined) ?? p.stock) + (adjust ?? 0);
    if (stock < 0) {
      if (adjust !== undefined) f.add(409, belowZero("adjust", `product ${p.id}`, p.stock, stock, "stock"));
      else if (product.stock !== undefined) f.add(400, "stock: must not be negative while disable_minusqty is on");
      else if (!count) negative.push(p.sku ?? `product ${p.id}`);
    }
  }
  return finalChecks(states, product, p, snap, negative, f);
}
