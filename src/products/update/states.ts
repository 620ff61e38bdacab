import { skuTaken } from "../create";
import { PRODUCT_FIELD_NAMES, PRODUCT_ONLY_FIELDS, type ProductFieldName, productField } from "../fields";
import type { PresentedVariant, ProductRow } from "../present";
import { variantValues } from "../present";
import { OPTION_SLOTS, type ProductUpdate, type VariantEntry, type VariantUpdateEntry } from "../schema";
import {
  agreedNames,
  comboKey,
  LOCATED,
  type Located,
  namesOf,
  sameNames,
  VALUE_KEYS,
  VARIANT_VALUES,
  valuesMoved,
  valuesOf,
  variantColumns,
} from "../variants";
import type { Failures, PlanVariant, Snapshot, Target } from "./select";

// A product's variants as an update plan (./plan.ts) changes them: each an existing row with its
// changes or a new one; the write batch (./write.ts) writes what differs from the row.

const VARIANT_FIELDS = ["sku", ...VARIANT_VALUES, "images"] as const;

// A variant's own fields as answers show them, plus where it stands and its option values. A
// stored variant's images stay the row's text until the request sets them (most never do).
type VariantCols = Omit<Pick<PresentedVariant, (typeof VARIANT_FIELDS)[number]>, "images"> & {
  images?: PresentedVariant["images"];
  position: number;
  values: string[];
};
type Col = keyof VariantCols;
const COLS: Col[] = [...VARIANT_FIELDS, "position", "values"];
const BIT = Object.fromEntries(COLS.map((c, i) => [c, 1 << i])) as Record<Col, number>;

/** Whether the request set a column of the state (to any value, the stored one included). */
export const changes = (s: VariantState, col: Col) => (s.changed & BIT[col]) !== 0;

/** A variant as it will be after the request: an existing row with its changes, or a new one. */
export type VariantState = {
  id?: number;
  row?: PlanVariant;
  cur: VariantCols;
  /** The columns the request set, one bit each (see changes): no Set per variant. */
  changed: number;
  label: string;
  skuPath: string;
  qtyPath?: string;
  /** The entry that set the option values, which a clash of combinations names. */
  valuesPath?: string;
  /** What the request adds to the stored qty (docs/stock.md), when it sets no count. */
  adjust?: number;
  /** The qty before this item, where an earlier item of the round changed the variant. */
  before?: number;
  /** The stored qty the request expects, and the path that gave it. */
  expected?: { qty: number; path: string };
};

export function fromRow(v: PlanVariant): VariantState {
  const label = `variant ${v.id}`;
  return {
    id: v.id,
    row: v,
    label,
    skuPath: label,
    changed: 0,
    cur: {
      sku: v.sku,
      price: v.price,
      before_price: v.beforePrice,
      purchase_price: v.purchasePrice,
      qty: v.qty,
      qty_location: v.qtyLocation,
      gtin: v.gtin,
      supplier_sku: v.supplierSku,
      weight: v.weight,
      visible: v.visible,
      position: v.position,
      values: variantValues(v),
    },
  };
}

export function set(s: VariantState, col: Col, value: unknown, path: string) {
  (s.cur as Record<Col, unknown>)[col] = col === "images" && value === null ? [] : value;
  s.changed |= BIT[col];
  if (col === "qty") {
    s.qtyPath = path;
    s.adjust = undefined;
  }
  if (col === "sku") s.skuPath = path;
  if (col === "values") s.valuesPath = path;
}

/**
 * A relative change of the qty (`adjust`) and a condition on the stored one (`expected_qty`): the
 * write adds the amount to the count as it is when the batch runs, and the batch's guard holds the
 * condition (./write.ts), so a sale in between is neither lost nor overwritten.
 */
export function adjustQty(s: VariantState, amount: number | undefined, path: string, f: Failures) {
  if (amount === undefined) return;
  // After a count set by this request, the amount moves that count: the sum is a count too.
  if (!changes(s, "qty") || s.adjust !== undefined) s.adjust = (s.adjust ?? 0) + amount;
  s.cur.qty += amount;
  s.changed |= BIT.qty;
  s.qtyPath = path;
  if (Math.abs(s.cur.qty) > 1_000_000_000) f.add(400, `${path}: would take qty to ${s.cur.qty}, past 1000000000`);
}

/** Applies the fields an entry gives; absent fields keep their value. */
export function applyEntry(s: VariantState, e: VariantEntry | VariantUpdateEntry, path: string, f: Failures) {
  for (const col of VARIANT_FIELDS) {
    const v = e[col];
    // set() keeps the path of sku and qty only (for their errors): build no other strings.
    if (v !== undefined) set(s, col, v, col === "qty" || col === "sku" ? `${path}.${col}` : path);
  }
  if (!("variant_id" in e)) return;
  if (e.qty !== undefined && e.adjust !== undefined) {
    f.add(400, `${path}.adjust: give qty (the new count) or adjust (the change), not both`);
  }
  if (e.expected_qty !== undefined) s.expected ??= { qty: e.expected_qty, path: `${path}.expected_qty` };
  adjustQty(s, e.adjust, `${path}.adjust`, f);
}

/** A new variant's state, from its entry (a variant without a price takes the product's). */
export function created(e: VariantEntry, values: string[], price: number, position: number, path: string) {
  return {
    label: path,
    skuPath: `${path}.sku`,
    qtyPath: e.qty === undefined ? undefined : `${path}.qty`,
    changed: 0,
    cur: { ...variantColumns(e, price), position, values },
  } satisfies VariantState;
}

/** A state to change without changing the one it was copied from (a prior plan's, ./plan.ts). */
export const copyState = (s: VariantState): VariantState => ({
  ...s,
  cur: { ...s.cur },
  expected: undefined,
  before: s.cur.qty,
});

/** Whether an item carries a variant list (a sync, even empty, or an add or update with entries). */
export const carriesList = (d: ProductUpdate) =>
  d.variants?.sync !== undefined || !!d.variants?.add?.length || !!d.variants?.update?.length;

const located = <T>(list: T[] | undefined, name: string): Located<T>[] =>
  (list ?? []).map((entry, i) => ({ entry, path: `variants.${name}[${i}]` }));
/**
 * An item's lists with each entry's path, and the option names they leave the product with (docs/products.md,
 * "Updating products"): all entries of the request agree; a sync may rename; add and update use
 * the product's names (`current`), unless it has none yet. Disagreements are added to `f`.
 */
export function listNames(d: ProductUpdate, current: string[], f: Failures) {
  const sync = located(d.variants?.sync, "sync");
  const add = located(d.variants?.add, "add");
  const update = located(d.variants?.update, "update");
  const agreed = agreedNames([...sync, ...add, ...update], ...LOCATED);
  for (const e of agreed.errors) f.add(400, e);
  let names = current;
  if (d.variants?.sync) names = agreedNames(sync, ...LOCATED).names ?? (sync.length ? current : []);
  if (!names.length && agreed.names) names = agreed.names;
  else if (agreed.names && !sameNames(names, agreed.names)) {
    for (const { entry, path } of [...add, ...update]) {
      const given = namesOf(entry).names;
      if (given && !sameNames(given, names)) {
        f.add(
          400,
          `${path}.variant_option1_name: option names differ from the product's (${names.join(", ")}); rename options with variants.sync`,
        );
      }
    }
  }
  return { sync, add, update, names };
}

/** Option values as errors show them: the product's options, empty ones after the first left out. */
export const showValues = (values: string[]) => `(${values.filter((v, i) => v !== "" || i === 0).join(", ")})`;

/**
 * The checks of what a request leaves, in their order: a combination two variants have, the
 * negative counts gathered under disable_minusqty, a SKU used twice or another product's. Returns
 * the SKUs no product has yet (the plan's claims across the items of a round).
 */
export function finalChecks(
  states: VariantState[],
  product: Record<string, unknown>,
  p: ProductRow,
  snap: Pick<Snapshot, "owners">,
  negative: string[],
  f: Failures,
): Located<string>[] {
  // Only when nothing failed yet: an add entry already reported its clash with the same variant.
  // Stored rows keep distinct combinations (a unique index): two can meet only through a new
  // variant or changed values.
  const seen = new Map<string, VariantState>();
  const moved = !f.any && states.some(valuesMoved);
  for (const s of moved ? states : []) {
    const key = comboKey(s.cur.values);
    const other = seen.get(key);
    if (!other) {
      seen.set(key, s);
      continue;
    }
    // Named by an entry (a new variant's, or the one that set the values), whichever comes first.
    const [by, of] = s.valuesPath || s.id === undefined || !other.valuesPath ? [s, other] : [other, s];
    f.add(
      409,
      `${by.valuesPath ?? by.label}: option combination ${showValues(s.cur.values)} is also used by ${of.label}`,
    );
  }
  if (negative.length) {
    f.add(409, `disable_minusqty: stock is negative for ${negative.join(", ")}; set their stock first`);
  }
  const finalSku = "sku" in product ? (product.sku as string | null) : p.sku;
  // A SKU the body leaves the product as stored has no path of the body to name: it is refused
  // as the product's own (docs/products.md, "Variants").
  const stored = "sku" in product ? null : p.sku;
  const used = new Map<string, string>();
  const claims: Located<string>[] = [];
  // `kept`: a SKU the product's row or variant keeps as stored, which the product owns already
  // (the registry's), so it is no claim; owners knows only the SKUs the body names.
  const check = (sku: string, path: string, kept: boolean) => {
    const other = used.get(sku);
    const owner = snap.owners.get(sku);
    if (other && sku === stored) f.add(409, `${path}: SKU ${sku} is the product's own SKU`);
    else if (other) f.add(409, `${path}: SKU ${sku} is also used by ${other}`);
    else if (owner && owner.productId !== p.id) f.add(409, skuTaken(path, sku, owner.productId));
    else if (!owner && !kept) claims.push({ entry: sku, path });
    used.set(sku, path);
  };
  if (finalSku !== null) check(finalSku, "sku", finalSku === p.sku);
  for (const s of states) if (s.cur.sku !== null) check(s.cur.sku, s.skuPath, s.cur.sku === s.row?.sku);
  return claims;
}

/**
 * The product row an item's body sets: its product fields, or only the product's own when it
 * selects a variant (which takes the rest); a SKU that selected the target is no new value.
 */
export function productOf(t: Target): Record<string, unknown> {
  const d = t.item.data;
  const product: Record<string, unknown> = { id: t.product.id };
  for (const key of t.variant ? PRODUCT_ONLY_FIELDS : PRODUCT_FIELD_NAMES) {
    if (key === "sku" && t.bySku) continue;
    const v = d[key];
    if (v !== undefined) product[key] = key === "images" && v === null ? [] : v;
  }
  return product;
}

/** The count an item expects of its own stock or of the variant it selects (docs/stock.md), and its key. */
export const expectedOf = (d: ProductUpdate) => ({
  qty: d.expected_qty ?? d.expected_stock,
  path: d.expected_stock === undefined ? "expected_qty" : "expected_stock",
});

/** The item's own counts beside variants, whose qty is the product's stock: each refused. */
export function ownCountsRefused(d: ProductUpdate, f: Failures) {
  const { qty, path } = expectedOf(d);
  const refuse = (key: string) =>
    f.add(400, `${key}: the product has variants, whose qty is its stock: select a variant or use variants.update`);
  if (d.stock !== undefined) refuse("stock");
  if (d.adjust !== undefined) refuse("adjust");
  if (qty !== undefined) refuse(path);
}

/** Body fields that change a selected variant (`variant` in ../fields.ts), each with its column: stock sets qty. */
const BODY_TO_VARIANT = PRODUCT_FIELD_NAMES.flatMap((k) =>
  productField(k)?.variant ? [[k, k === "stock" ? "qty" : k] as [ProductFieldName, Col]] : [],
);

/** The body's variant fields applied to the variant the item selects, before its lists (docs/stock.md); its state. */
export function selectedVariant(t: Target, states: VariantState[], f: Failures): VariantState {
  const d = t.item.data;
  const s = states.find((x) => x.id === t.variant?.id) as VariantState;
  for (const [from, col] of BODY_TO_VARIANT) {
    if (from === "sku" && t.bySku) continue;
    const v = d[from];
    if (v !== undefined) set(s, col, v, from);
  }
  const { qty, path } = expectedOf(d);
  if (qty !== undefined) s.expected = { qty, path };
  adjustQty(s, d.adjust, "adjust", f);
  return s;
}

/**
 * An add's entries after the variants the lists before leave (`states`, which it extends): a
 * combination or SKU one of them has is a conflict. Whether a new variant takes the price given.
 */
export function addEntries(
  states: VariantState[],
  add: Located<VariantEntry>[],
  names: string[],
  price: number,
  f: Failures,
): boolean {
  if (!add.length) return false;
  let inherits = false;
  const combos = new Map(states.map((s) => [comboKey(s.cur.values), s.label]));
  const ownSkus = new Map(states.flatMap((s) => (s.cur.sku === null ? [] : [[s.cur.sku, s.label] as const])));
  let position = states.reduce((m, s) => Math.max(m, s.cur.position), -1);
  for (const { entry, path } of add) {
    const v = valuesOf(entry, names, path);
    for (const e of v.errors) f.add(400, e);
    if (!v.values) continue;
    const key = comboKey(v.values);
    const dup = combos.get(key);
    if (dup) f.add(409, `${path}: option combination ${showValues(v.values)} already exists (${dup})`);
    const skuDup = entry.sku ? ownSkus.get(entry.sku) : undefined;
    if (entry.sku && skuDup) f.add(409, `${path}.sku: SKU ${entry.sku} already exists (${skuDup})`);
    if (entry.price === undefined) inherits = true;
    combos.set(key, path);
    if (entry.sku) ownSkus.set(entry.sku, path);
    states.push(created(entry, v.values, price, ++position, path));
  }
  return inherits;
}

/** An update's entries, in order, on the stored variants the lists before leave (a new one has no id). */
export function updateEntries(
  states: VariantState[],
  update: Located<VariantUpdateEntry>[],
  names: string[],
  productId: number,
  f: Failures,
) {
  if (!update.length) return;
  const byId = new Map<number, VariantState>();
  for (const s of states) if (s.id !== undefined) byId.set(s.id, s);
  for (const { entry, path } of update) {
    const s = byId.get(entry.variant_id);
    if (!s) {
      f.add(404, `${path}.variant_id: variant ${entry.variant_id} is not a variant of product ${productId}`);
      continue;
    }
    // The fields it gives, and option values only for the product's options.
    applyEntry(s, entry, path, f);
    const values = [...s.cur.values];
    let changed = false;
    for (const n of OPTION_SLOTS) {
      const v = entry[VALUE_KEYS[n - 1]];
      if (v === undefined) continue;
      if (n > names.length) f.add(400, `${path}.variant_option${n}_value: the product has no option ${n}`);
      values[n - 1] = v;
      changed = true;
    }
    if (changed) set(s, "values", values, path);
  }
}
