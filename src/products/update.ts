import type { DB } from "../db/client";
import { toProduct, toVariant } from "../db/rows";
import { afterLostRace, isConstraintError, runBatch, STALE_READ_GUARD, stmt } from "../platform/d1";
import { runClaimed } from "../platform/idempotency";
import { INSERT_VARIANTS, type ItemOutcome, type ProductRef, type Recorder, skuTaken } from "./create";
import { optionNames, type ProductRow, parseList, type VariantRow, variantValues } from "./present";
import { presentReads, productReads } from "./read";
import { MAX_VARIANTS, OPTION_SLOTS, type ProductUpdate, type VariantEntry, type VariantUpdateEntry } from "./schema";
import {
  agreedNames,
  comboKey,
  type Located,
  namesOf,
  sameNames,
  VALUE_KEYS,
  valuesOf,
  variantColumns,
} from "./variants";

// PUT /v1/products (contract 4). Per round: one read batch (the selected products, their
// variants, the owners of every SKU the body names), a plan per product in JS, then one write
// batch for all of them. Lists travel as one JSON parameter each, so the number of statements is
// fixed whatever the number of products or variants (contract 7).

export type UpdateItem = { index: number; data: ProductUpdate };
type Status = 400 | 404 | 409;
type Failed = Extract<ItemOutcome, { ok: false }>;

/** Errors of one item; the item answers with the status of its first error. */
class Failures {
  status: Status | undefined;
  readonly errors: string[] = [];
  add(status: Status, message: string) {
    this.status ??= status;
    this.errors.push(message);
  }
  get any() {
    return this.errors.length > 0;
  }
  outcome(): Failed {
    return { ok: false, status: this.status ?? 400, errors: this.errors };
  }
}

const fail = (status: Status, message: string): Failed => ({ ok: false, status, errors: [message] });

// ---------------------------------------------------------------------------------------------
// Read

// Every product a selector can point at: by id, through one of its variants, or through a SKU.
const TARGETS = `
  SELECT id FROM products WHERE id IN (SELECT value FROM json_each(?1))
  UNION SELECT product_id FROM variants WHERE id IN (SELECT value FROM json_each(?2))
  UNION SELECT product_id FROM skus WHERE sku IN (SELECT value FROM json_each(?3))`;
const READ_PRODUCTS = `SELECT * FROM products WHERE id IN (${TARGETS})`;
const READ_VARIANTS = `SELECT * FROM variants WHERE product_id IN (${TARGETS}) ORDER BY product_id, position, id`;
const READ_OWNERS = "SELECT * FROM skus WHERE sku IN (SELECT value FROM json_each(?1))";

type Snapshot = {
  products: Map<number, ProductRow>;
  variants: Map<number, VariantRow[]>;
  variantById: Map<number, VariantRow>;
  owners: Map<string, { productId: number; variantId: number | null }>;
};

/** The SKUs a body names (as selector or new value), so their owners are known before planning. */
function namedSkus(d: ProductUpdate): string[] {
  const out: string[] = d.sku ? [d.sku] : [];
  for (const list of [d.variants?.sync, d.variants?.add, d.variants?.update]) {
    for (const e of list ?? []) if (e.sku) out.push(e.sku);
  }
  return out;
}

async function readSnapshot(db: DB, items: UpdateItem[]): Promise<Snapshot> {
  const ids = (pick: (d: ProductUpdate) => unknown) =>
    JSON.stringify(items.flatMap(({ data }) => (pick(data) === undefined ? [] : [pick(data)])));
  const pids = ids((d) => d.product_id);
  const vids = ids((d) => d.variant_id);
  const selectors = ids((d) => (d.variant_id === undefined && d.product_id === undefined ? d.sku : undefined));
  const [ps, vs, os] = await runBatch(db, [
    stmt(db, READ_PRODUCTS, pids, vids, selectors),
    stmt(db, READ_VARIANTS, pids, vids, selectors),
    stmt(db, READ_OWNERS, JSON.stringify(items.flatMap((i) => namedSkus(i.data)))),
  ]);
  const snap: Snapshot = { products: new Map(), variants: new Map(), variantById: new Map(), owners: new Map() };
  for (const row of ps.results) {
    const p = toProduct(row);
    snap.products.set(p.id, p);
    snap.variants.set(p.id, []);
  }
  for (const row of vs.results) {
    const v = toVariant(row);
    snap.variants.get(v.productId)?.push(v);
    snap.variantById.set(v.id, v);
  }
  for (const o of os.results) {
    snap.owners.set(String(o.sku), { productId: Number(o.product_id), variantId: o.variant_id as number | null });
  }
  return snap;
}

// ---------------------------------------------------------------------------------------------
// Selection (contract 4.1)

type Target = { item: UpdateItem; product: ProductRow; variant?: VariantRow; bySku: boolean };

function select(item: UpdateItem, snap: Snapshot): Target | Failed {
  const d = item.data;
  if (d.variant_id !== undefined) {
    const v = snap.variantById.get(d.variant_id);
    const product = v && snap.products.get(v.productId);
    if (!v || !product) return fail(404, `variant_id: variant ${d.variant_id} not found`);
    if (d.product_id !== undefined && v.productId !== d.product_id) {
      return fail(404, `variant_id: variant ${d.variant_id} is not a variant of product ${d.product_id}`);
    }
    return { item, product, variant: v, bySku: false };
  }
  if (d.product_id !== undefined) {
    const product = snap.products.get(d.product_id);
    return product ? { item, product, bySku: false } : fail(404, `product_id: product ${d.product_id} not found`);
  }
  if (d.sku !== undefined && d.sku !== null) {
    const owner = snap.owners.get(d.sku);
    const product = owner && snap.products.get(owner.productId);
    if (!owner || !product) return fail(404, `sku: no product or variant has SKU ${d.sku}`);
    const variant = owner.variantId === null ? undefined : snap.variantById.get(owner.variantId);
    if (owner.variantId !== null && !variant) return fail(404, `sku: no product or variant has SKU ${d.sku}`);
    return { item, product, variant, bySku: true };
  }
  return fail(400, "product_id: give variant_id, product_id or sku to select the product to update");
}

// ---------------------------------------------------------------------------------------------
// Plan

// Fields that always belong to the product, also when a variant was selected (contract 4.1).
const PRODUCT_ONLY = [
  "title",
  "description",
  "tax_rate",
  "supplier_name",
  "datafield_1",
  "datafield_2",
  "datafield_3",
  "seo_description",
  "seo_title",
  "images",
  "metadata",
  "disable_minusqty",
] as const;
const PRODUCT_FIELDS = [
  ...PRODUCT_ONLY,
  "sku",
  "price",
  "before_price",
  "purchase_price",
  "stock",
  "qty_location",
  "visible",
  "gtin",
  "supplier_sku",
  "weight",
] as const;
/** Body fields that change a selected variant, and the variant column each sets. */
const BODY_TO_VARIANT = [
  ["sku", "sku"],
  ["price", "price"],
  ["before_price", "before_price"],
  ["purchase_price", "purchase_price"],
  ["stock", "qty"],
  ["qty_location", "qty_location"],
  ["gtin", "gtin"],
  ["supplier_sku", "supplier_sku"],
  ["weight", "weight"],
  ["visible", "visible"],
] as const;
const VARIANT_FIELDS = [
  "sku",
  "price",
  "before_price",
  "purchase_price",
  "qty",
  "qty_location",
  "gtin",
  "supplier_sku",
  "weight",
  "visible",
  "images",
] as const;

type VariantCols = {
  sku: string | null;
  price: number;
  before_price: number | null;
  purchase_price: number | null;
  qty: number;
  qty_location: string | null;
  gtin: string | null;
  supplier_sku: string | null;
  weight: number | null;
  visible: number;
  images: unknown[];
  position: number;
  values: string[];
};
type Col = keyof VariantCols;

/** A variant as it will be after the request: an existing row with its changes, or a new one. */
type VariantState = {
  id?: number;
  row?: VariantRow;
  cur: VariantCols;
  changed: Set<Col>;
  label: string;
  skuPath: string;
  qtyPath?: string;
};

function fromRow(v: VariantRow): VariantState {
  const label = `variant ${v.id}`;
  return {
    id: v.id,
    row: v,
    label,
    skuPath: label,
    changed: new Set(),
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
      images: parseList(v.images),
      position: v.position,
      values: variantValues(v),
    },
  };
}

function set(s: VariantState, col: Col, value: unknown, path: string) {
  (s.cur as Record<Col, unknown>)[col] = col === "images" && value === null ? [] : value;
  s.changed.add(col);
  if (col === "qty") s.qtyPath = path;
  if (col === "sku") s.skuPath = path;
}

/** Applies the fields an entry gives; absent fields keep their value. */
function applyEntry(s: VariantState, e: VariantEntry | VariantUpdateEntry, path: string) {
  for (const col of VARIANT_FIELDS) {
    const v = e[col];
    // set() keeps the path of sku and qty only (for their errors): build no other strings.
    if (v !== undefined) set(s, col, v, col === "qty" || col === "sku" ? `${path}.${col}` : path);
  }
}

function created(e: VariantEntry, values: string[], price: number, position: number, path: string): VariantState {
  const s: VariantState = {
    label: path,
    skuPath: `${path}.sku`,
    qtyPath: e.qty === undefined ? undefined : `${path}.qty`,
    changed: new Set(),
    cur: { ...variantColumns(e, price), position, values },
  };
  return s;
}

const showValues = (values: string[]) => `(${values.filter((v, i) => v !== "" || i === 0).join(", ")})`;

type Plan = {
  index: number;
  productId: number;
  updatedAt: number;
  product: Record<string, unknown>;
  deletes: number[];
  park: { id: number; sku: boolean; options: boolean }[];
  updates: Record<string, unknown>[];
  inserts: Record<string, unknown>[];
  /** SKUs the product will have that it does not own yet, checked across the items of a round. */
  claims: Located<string>[];
};

const located = <T>(list: T[] | undefined, name: string): Located<T>[] =>
  (list ?? []).map((entry, i) => ({ entry, path: `variants.${name}[${i}]` }));

/** Everything about one product's update, decided from the snapshot; no database access. */
function plan(t: Target, snap: Snapshot): Plan | Failed {
  const d = t.item.data;
  const p = t.product;
  const f = new Failures();

  const product: Record<string, unknown> = { id: p.id };
  for (const key of t.variant ? PRODUCT_ONLY : PRODUCT_FIELDS) {
    // When sku selected the target, the body's sku is the selector, not a new value.
    if (key === "sku" && t.bySku) continue;
    const v = d[key];
    if (v !== undefined) product[key] = key === "images" && v === null ? [] : v;
  }

  let states = (snap.variants.get(p.id) ?? []).map(fromRow);
  if (t.variant) {
    const s = states.find((x) => x.id === t.variant?.id) as VariantState;
    for (const [from, col] of BODY_TO_VARIANT) {
      if (from === "sku" && t.bySku) continue;
      const v = d[from];
      if (v !== undefined) set(s, col, v, from);
    }
  }

  // Option names (contract 4.3): all entries of the request agree; sync may rename, add and
  // update must use the product's names, unless it has none yet.
  const sync = located(d.variants?.sync, "sync");
  const add = located(d.variants?.add, "add");
  const update = located(d.variants?.update, "update");
  const agreed = agreedNames([...sync, ...add, ...update]);
  for (const e of agreed.errors) f.add(400, e);
  const current = optionNames(p);
  let names = current;
  if (d.variants?.sync) names = agreedNames(sync).names ?? (sync.length ? current : []);
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
  if (f.any) return f.outcome();
  const newPrice = (product.price as number | undefined) ?? p.price;

  // 1. sync: the full list; matched by SKU when the entry has one, else by option values.
  const deletes: number[] = [];
  if (d.variants?.sync) {
    const bySku = new Map(states.flatMap((s) => (s.cur.sku === null ? [] : [[s.cur.sku, s] as const])));
    const byCombo = new Map(states.map((s) => [comboKey(s.cur.values), s]));
    const matched = new Map<VariantState, string>();
    const next: VariantState[] = [];
    sync.forEach(({ entry, path }, i) => {
      const v = valuesOf(entry, names, path);
      for (const e of v.errors) f.add(400, e);
      if (!v.values) return;
      const s = entry.sku ? bySku.get(entry.sku) : byCombo.get(comboKey(v.values));
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
        applyEntry(s, entry, path);
        set(s, "values", v.values, path);
        set(s, "position", i, path);
        next.push(s);
      } else next.push(created(entry, v.values, newPrice, i, path));
    });
    for (const s of states) if (!matched.has(s)) deletes.push(s.id as number);
    states = next;
  }

  // 2. add: new variants; an existing SKU or option combination is a conflict.
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
    const s = created(entry, v.values, newPrice, ++position, path);
    combos.set(key, path);
    if (entry.sku) ownSkus.set(entry.sku, path);
    states.push(s);
  }

  // 3. update: only the given fields of a variant of this product.
  const byId = new Map(states.flatMap((s) => (s.id === undefined ? [] : [[s.id, s] as const])));
  for (const { entry, path } of update) {
    const s = byId.get(entry.variant_id);
    if (!s) {
      f.add(404, `${path}.variant_id: variant ${entry.variant_id} is not a variant of product ${p.id}`);
      continue;
    }
    applyEntry(s, entry, path);
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

  // The state after the request, checked whole.
  if (states.length > MAX_VARIANTS) {
    f.add(400, `variants: a product has at most ${MAX_VARIANTS} variants; this request would leave ${states.length}`);
  }
  if (!t.variant && d.stock !== undefined && states.length) {
    f.add(400, "stock: the product has variants, whose qty is its stock: select a variant or use variants.update");
  }
  const flagOn = ((product.disable_minusqty as number | undefined) ?? p.disableMinusqty) === 1;
  const negative: string[] = [];
  if (flagOn) {
    for (const s of states) {
      if (s.cur.qty >= 0) continue;
      if (s.qtyPath) f.add(400, `${s.qtyPath}: must not be negative while disable_minusqty is on`);
      else negative.push(s.cur.sku ?? s.label);
    }
    const stock = (product.stock as number | undefined) ?? p.stock;
    if (stock < 0) {
      if (product.stock !== undefined) f.add(400, "stock: must not be negative while disable_minusqty is on");
      // A product with variants does not use its own stock: clearing it lets the flag go on.
      else if (states.length) product.stock = 0;
      else negative.push(p.sku ?? `product ${p.id}`);
    }
  }
  // Only when nothing failed yet: an add entry already reported its clash with the same variant.
  const seen = new Map<string, string>();
  for (const s of f.any ? [] : states) {
    const key = comboKey(s.cur.values);
    const other = seen.get(key);
    if (other) f.add(409, `${s.label}: option combination ${showValues(s.cur.values)} is also used by ${other}`);
    else seen.set(key, s.label);
  }
  if (negative.length) {
    f.add(409, `disable_minusqty: stock is negative for ${negative.join(", ")}; set their stock first`);
  }
  const finalSku = "sku" in product ? (product.sku as string | null) : p.sku;
  const skus: Located<string>[] = finalSku === null ? [] : [{ entry: finalSku, path: "sku" }];
  for (const s of states) if (s.cur.sku !== null) skus.push({ entry: s.cur.sku, path: s.skuPath });
  const used = new Map<string, string>();
  const claims: Located<string>[] = [];
  for (const { entry: sku, path } of skus) {
    const other = used.get(sku);
    const owner = snap.owners.get(sku);
    if (other) f.add(409, `${path}: SKU ${sku} is also used by ${other}`);
    else if (owner && owner.productId !== p.id) f.add(409, skuTaken(path, sku, owner.productId));
    else if (!owner) claims.push({ entry: sku, path });
    used.set(sku, path);
  }
  if (f.any) return f.outcome();

  const finalNames = states.length ? names : [];
  if (!sameNames(finalNames, current)) product.option_names = finalNames;
  return {
    index: t.item.index,
    productId: p.id,
    updatedAt: p.updatedAt,
    product,
    deletes,
    claims,
    ...writes(p.id, states),
  };
}

const OPTION_COLUMNS = OPTION_SLOTS.map((n) => `option${n}_value`);

/** Rows for the variant statements of the write batch. */
function writes(productId: number, states: VariantState[]) {
  const park: Plan["park"] = [];
  const updates: Record<string, unknown>[] = [];
  const inserts: Record<string, unknown>[] = [];
  for (const s of states) {
    if (!s.row || s.id === undefined) {
      const { values, ...cols } = s.cur;
      inserts.push({ product_id: productId, ...cols, option_values: values });
      continue;
    }
    if (!s.changed.size) continue;
    const row: Record<string, unknown> = { id: s.id };
    for (const col of s.changed) {
      if (col !== "values") row[col] = s.cur[col];
      else for (const [i, v] of s.cur.values.entries()) row[OPTION_COLUMNS[i]] = v;
    }
    updates.push(row);
    const sku = s.cur.sku !== s.row.sku;
    // Values that were never set are the row's own.
    const options = s.changed.has("values") && comboKey(s.cur.values) !== comboKey(variantValues(s.row));
    if (sku || options) park.push({ id: s.id, sku, options });
  }
  return { park, updates, inserts };
}

// ---------------------------------------------------------------------------------------------
// Write

/** `col = the JSON row's value when it has the key (null clears), else the current value`. */
const keep = (table: string, col: string, json = false) =>
  `${col} = iif(json_type(j.value, '$.${col}') IS NULL, ${table}.${col}, j.value${json ? "->" : "->>"}'${col}')`;

// Makes the batch fail (tax_rate 101 breaks a CHECK) when a product changed since it was read,
// so a plan made from a stale read never lands; the constraint error makes the caller re-plan.

const DELETE_VARIANTS = "DELETE FROM variants WHERE id IN (SELECT value FROM json_each(?1))";

// SQLite checks UNIQUE per row during a multi-row UPDATE, so variants whose SKU or options
// change first get values no other row can have; swaps between variants then succeed.
const PARK_VARIANTS = `
  UPDATE variants SET
    sku = iif(j.value->>'sku', NULL, variants.sku),
    option1_value = iif(j.value->>'options', char(1) || 'parked ' || variants.id, variants.option1_value)
  FROM json_each(?1) AS j WHERE variants.id = j.value->>'id'`;

const PRODUCT_SCALARS = [
  "sku",
  "title",
  "price",
  "before_price",
  "purchase_price",
  "tax_rate",
  "stock",
  "qty_location",
  "disable_minusqty",
  "visible",
  "description",
  "gtin",
  "supplier_name",
  "supplier_sku",
  "datafield_1",
  "datafield_2",
  "datafield_3",
  "seo_description",
  "seo_title",
  "weight",
];
// updated_at always moves forward, so the guard sees every write, even two in one millisecond.
const UPDATE_PRODUCTS = `
  UPDATE products SET ${PRODUCT_SCALARS.map((c) => keep("products", c)).join(", ")},
    ${keep("products", "images", true)}, ${keep("products", "option_names", true)},
    metadata = CASE WHEN json_type(j.value, '$.metadata') IS NULL THEN products.metadata
      WHEN json_type(j.value, '$.metadata') = 'object' THEN j.value->'metadata' ELSE NULL END,
    updated_at = max(?2, products.updated_at + 1)
  FROM json_each(?1) AS j WHERE products.id = j.value->>'id'`;

const VARIANT_SCALARS = [
  "sku",
  "option1_value",
  "option2_value",
  "option3_value",
  "option4_value",
  "option5_value",
  "price",
  "before_price",
  "purchase_price",
  "qty",
  "qty_location",
  "gtin",
  "supplier_sku",
  "weight",
  "visible",
  "position",
];
// no_minus is set with qty in the same row update, so the stock floor CHECK sees the new pair.
const UPDATE_VARIANTS = `
  UPDATE variants SET ${VARIANT_SCALARS.map((c) => keep("variants", c)).join(", ")},
    ${keep("variants", "images", true)},
    no_minus = (SELECT products.disable_minusqty FROM products WHERE products.id = variants.product_id),
    updated_at = ?2
  FROM json_each(?1) AS j WHERE variants.id = j.value->>'id'`;

// The variants this request did not touch follow their product's disable_minusqty.
const SYNC_NO_MINUS = `
  UPDATE variants SET no_minus = p.disable_minusqty FROM products AS p
  WHERE p.id = variants.product_id AND variants.no_minus <> p.disable_minusqty
    AND variants.product_id IN (SELECT value FROM json_each(?1))`;

/**
 * The one write batch of a round, for all its products: the only place it is assembled, so
 * anything that must commit with the update (an idempotency record) is added here. Order
 * matters: deletes and parking free SKUs and option combinations before anything takes them,
 * the product row (with disable_minusqty) is written before its variants copy the flag, and the
 * last two statements read the result back so the answer needs no further round trip.
 */
function writeBatch(db: DB, plans: Plan[], now: number) {
  const json = (rows: unknown[]) => JSON.stringify(rows);
  const ids = json(plans.map((p) => p.productId));
  return [
    stmt(db, STALE_READ_GUARD, json(plans.map((p) => ({ id: p.productId, updated_at: p.updatedAt })))),
    stmt(db, DELETE_VARIANTS, json(plans.flatMap((p) => p.deletes))),
    stmt(db, PARK_VARIANTS, json(plans.flatMap((p) => p.park))),
    stmt(db, UPDATE_PRODUCTS, json(plans.map((p) => p.product)), now),
    stmt(db, UPDATE_VARIANTS, json(plans.flatMap((p) => p.updates)), now),
    stmt(db, INSERT_VARIANTS, json(plans.flatMap((p) => p.inserts)), now),
    stmt(db, SYNC_NO_MINUS, ids),
    ...productReads(db, "p.id IN (SELECT value FROM json_each(?1))", ids),
  ];
}

// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------
// Fast path: one SKU's stock and/or price

// The most common PUT by far is a stock (or price) sync of one SKU: `{"sku": "X", "stock": 5}`.
// It needs no plan: the statements below select the row by SKU themselves, set the fields and
// read the product back, all in ONE batch, so the happy path is one round trip instead of a read
// and a write. The constraints do the checking that the plan would do: the stock floor CHECKs
// refuse a negative stock while disable_minusqty is on (the batch fails and rolls back whole),
// and nothing matches an unknown SKU or a product SKU whose product has variants. In each of
// those cases the caller runs the general path, which then answers with its exact error. It also
// bumps products.updated_at like every write, so a concurrent general-path plan made before this
// write fails its guard and is planned again.

const FAST_KEYS = new Set(["sku", "stock", "price"]);

/** `{"sku": "...", "stock"?: n, "price"?: n}` and nothing else: what the fast path handles. */
export function isFastStockUpdate(d: ProductUpdate): d is ProductUpdate & { sku: string } {
  if (typeof d.sku !== "string" || (d.stock === undefined && d.price === undefined)) return false;
  for (const [key, value] of Object.entries(d)) if (value !== undefined && !FAST_KEYS.has(key)) return false;
  return true;
}

// ?1 sku, ?2 stock or NULL, ?3 price or NULL, ?4 now. A variant SKU sets the variant's qty and
// price (contract 4.1) and only moves its product's updated_at; a product SKU sets the product's
// stock and price, except stock on a product with variants (a 400 the general path words).
const FAST_VARIANT = `
  UPDATE variants SET qty = coalesce(?2, qty), price = coalesce(?3, price), updated_at = ?4
  WHERE id = (SELECT variant_id FROM skus WHERE sku = ?1)`;
const FAST_PRODUCT = `
  UPDATE products SET
    stock = iif(k.variant_id IS NULL, coalesce(?2, products.stock), products.stock),
    price = iif(k.variant_id IS NULL, coalesce(?3, products.price), products.price),
    updated_at = max(?4, products.updated_at + 1)
  FROM (SELECT product_id, variant_id FROM skus WHERE sku = ?1) AS k
  WHERE products.id = k.product_id
    AND NOT (k.variant_id IS NULL AND ?2 IS NOT NULL
             AND EXISTS (SELECT 1 FROM variants WHERE variants.product_id = products.id))`;

/**
 * The fast path's one batch. Returns the item's outcome, or undefined when the general path must
 * answer (unknown SKU, stock on a product with variants, a stock floor refused the write); in
 * every one of those cases nothing was written.
 */
async function fastStockUpdate(
  db: DB,
  d: ProductUpdate & { sku: string },
  now: number,
): Promise<ItemOutcome | undefined> {
  let results: D1Result<Record<string, unknown>>[];
  try {
    results = await runBatch(db, [
      stmt(db, FAST_VARIANT, d.sku, d.stock ?? null, d.price ?? null, now),
      stmt(db, FAST_PRODUCT, d.sku, d.stock ?? null, d.price ?? null, now),
      ...productReads(db, "p.id = (SELECT product_id FROM skus WHERE sku = ?1)", d.sku),
    ]);
  } catch (e) {
    if (isConstraintError(e)) return undefined;
    throw e;
  }
  const [, , ps, vs] = results;
  const product = presentReads(ps, vs).products[0];
  if (!product) return undefined;
  if (product.sku === d.sku && product.variants.length && d.stock !== undefined) return undefined;
  return { ok: true, product };
}

/**
 * Updates products, each item on its own and atomically. Items naming the same product are
 * applied in order, one per round (each round reads afresh), since a plan is only valid against
 * the state it was made from. A write batch that fails on a constraint (a concurrent change
 * since the read) rolled back whole and is planned again from a fresh read.
 */
export async function updateProducts(
  db: DB,
  items: UpdateItem[],
  now: number,
  recorder?: Recorder,
): Promise<Map<number, ItemOutcome>> {
  const outcomes = new Map<number, ItemOutcome>();
  // An Idempotency-Key answer is recorded in the effect's batch by the general path; the fast
  // path leaves those requests to it.
  if (items.length === 1 && !recorder && isFastStockUpdate(items[0].data)) {
    const fast = await fastStockUpdate(db, items[0].data, now);
    if (fast) return outcomes.set(items[0].index, fast);
  }
  let pending = items;
  let attempt = 0;
  let recorded = false;
  while (pending.length) {
    const snap = await readSnapshot(db, pending);
    const plans: Plan[] = [];
    const later: UpdateItem[] = [];
    const inRound = new Set<number>();
    const claimed = new Map<string, string>();
    for (const item of pending) {
      const t = select(item, snap);
      if ("ok" in t) {
        outcomes.set(item.index, t);
        continue;
      }
      if (inRound.has(t.product.id)) {
        later.push(item);
        continue;
      }
      inRound.add(t.product.id);
      const planned = plan(t, snap);
      if ("ok" in planned) {
        outcomes.set(item.index, planned);
        continue;
      }
      const clash = planned.claims.filter((c) => claimed.has(c.entry));
      if (clash.length) {
        const errors = clash.map(
          (c) => `${c.path}: SKU ${c.entry} is also claimed by item ${claimed.get(c.entry)} of this request`,
        );
        outcomes.set(item.index, { ok: false, status: 409, errors });
        continue;
      }
      for (const c of planned.claims) claimed.set(c.entry, `[${item.index}]`);
      plans.push(planned);
    }
    // Items naming one product twice are the only requests with more than one round. The key is
    // claimed in the first batch that writes (so of concurrent requests with it exactly one takes
    // effect) and its answer completed in the last, which knows every outcome; a request stopped
    // between rounds leaves the record's "stopped partway" answer for its retries.
    let head: D1PreparedStatement[] = [];
    if (recorder && later.length && !recorded) head = recorder.pending();
    else if (recorder && !later.length) {
      const planned = new Map<number, ItemOutcome<ProductRef>>(outcomes as Map<number, ItemOutcome<never>>);
      for (const p of plans) planned.set(p.index, { ok: true, product: { $product: p.productId } });
      head = recorded ? recorder.complete(planned) : recorder.claim(planned);
    }
    if (!plans.length && head.length) {
      await runClaimed(db, recorder?.idem, head, []);
      recorded = true;
    }
    if (plans.length) {
      let results: D1Result<Record<string, unknown>>[];
      try {
        results = await runClaimed(db, recorder?.idem, head, writeBatch(db, plans, now));
      } catch (e) {
        if (!isConstraintError(e)) throw e;
        await afterLostRace(++attempt, "the product");
        continue;
      }
      if (head.length) recorded = true;
      const [ps, vs] = results.slice(-2);
      const out = new Map(presentReads(ps, vs).products.map((p) => [p.product_id, p]));
      for (const plan of plans) {
        const product = out.get(plan.productId);
        outcomes.set(
          plan.index,
          product ? { ok: true, product } : fail(404, `product ${plan.productId} was deleted meanwhile`),
        );
      }
    }
    pending = later;
  }
  return outcomes;
}
