import type { DB } from "../../db/client";
import { toProduct } from "../../db/rows";
import { products, skus, variants } from "../../db/schema";
import { sqlNames } from "../../platform/columns";
import { runBatch, stmt } from "../../platform/d1";
import type { ItemOutcome } from "../create";
import type { ProductRow, VariantRow } from "../present";
import type { ProductUpdate } from "../schema";
import { PRODUCT_SIZE_SQL, textBytes, variantSizeSql } from "../size";
import { VERSION_SQL } from "../version";
import { STRUCTURE_COLUMNS } from "./guard";

// The read of a PUT round (the selected products, their variants, the owners of every SKU the
// body names) and the selection of each item's target from it (docs/products.md, "Updating products").

export type UpdateItem = { index: number; data: ProductUpdate };
export type Status = 400 | 404 | 409 | 413;
export type Failed = Extract<ItemOutcome, { ok: false }>;

/** Errors of one item; the item answers with the status of its first error. */
export class Failures {
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

export const fail = (status: Status, message: string): Failed => ({ ok: false, status, errors: [message] });

// ---------------------------------------------------------------------------------------------
// Read

// Every product a selector can point at: by id, through one of its variants, or through a SKU.
// Each list is joined from json_each, never `IN (SELECT value FROM json_each(?))`, whose list
// SQLite first copies into a scratch index that D1 bills as rows read (docs/design.md, "Writes").
const P = sqlNames(products);
const V = sqlNames(variants);
const K = sqlNames(skus);
// DISTINCT over UNION ALL: UNION's own dedupe is billed as a row read per row it keeps.
const TARGETS = `SELECT DISTINCT id FROM (
  SELECT p.${P.id} AS id FROM json_each(?1) AS j CROSS JOIN ${P.$} AS p ON p.${P.id} = j.value
  UNION ALL SELECT v.${V.productId} FROM json_each(?2) AS j CROSS JOIN ${V.$} AS v ON v.${V.id} = j.value
  UNION ALL SELECT k.${K.productId} FROM json_each(?3) AS j CROSS JOIN ${K.$} AS k ON k.${K.sku} = j.value)`;
// A product's answer size estimate (docs/products.md, "Updating products") and its structure, which
// the write's guard holds (./guard.ts), are made of its row and its variants' rows: each is read
// once, the product's share here and each variant's with it in READ_VARIANTS (snapshotOf sums
// them), never by a pass of its own over the variants. The size is read only when an item of the
// request can change a text (?4), since a change of counts and prices leaves the estimate as it is.
// Rows keep the columns' SQL names (src/db/rows.ts maps them).
export const READ_PRODUCTS = `SELECT p.*, iif(?4, ${PRODUCT_SIZE_SQL}, 0) AS answer_size,
  json_array(p.${P.sku}, p.${P.optionNames}, p.${P.disableMinusqty}) AS structure,
  ${VERSION_SQL} AS version FROM (${TARGETS}) AS t CROSS JOIN ${P.$} AS p ON p.${P.id} = t.id`;
// Only the columns a plan decides on (a sync reads up to 2,048 variants). Unordered: an ORDER BY is
// billed as a row read per row sorted; snapshotOf puts each product's variants in their order
// (position, then id), which the product index mostly gives already.
const PLAN_COLUMNS = [
  "id",
  "productId",
  "sku",
  "option1",
  "option2",
  "option3",
  "option4",
  "option5",
  "price",
  "beforePrice",
  "purchasePrice",
  "qty",
  "qtyLocation",
  "gtin",
  "supplierSku",
  "weight",
  "visible",
  "images",
  "position",
] as const satisfies readonly (keyof VariantRow)[];
/** A variant as a plan reads it. */
export type PlanVariant = Pick<VariantRow, (typeof PLAN_COLUMNS)[number]>;
/** A variant's part of its product's structure (STRUCTURE_SQL's element) and of its answer size. */
type VariantShares = { s: string; z: number };
// Each variant as one JSON array (its plan columns, then its size share) beside its structure
// element: D1's binding turns every cell of a result into an object property by way of a
// [name, value] pair, which at 2,048 variants of 22 columns was the read's largest cost
// (docs/design.md, "Writes"); two cells a row and one JSON.parse of a short array cost a fraction.
const READ_VARIANTS = `SELECT json_array(${PLAN_COLUMNS.map((k) => `v.${V[k]}`).join(", ")},
  iif(?4, ${variantSizeSql("v")}, 0)) AS r, json_array(${STRUCTURE_COLUMNS.map((c) => `v.${c}`).join(", ")}) AS s
  FROM (${TARGETS}) AS t CROSS JOIN ${V.$} AS v ON v.${V.productId} = t.id`;

/** A read variant from its row: the plan columns by name, in one order so every object shares its shape. */
function planVariant(row: Record<string, unknown>): PlanVariant & VariantShares {
  const cells = JSON.parse(row.r as string) as unknown[];
  const v: Record<string, unknown> = {};
  for (let i = 0; i < PLAN_COLUMNS.length; i++) v[PLAN_COLUMNS[i]] = cells[i];
  v.z = cells[PLAN_COLUMNS.length];
  v.s = row.s;
  return v as PlanVariant & VariantShares;
}
const READ_OWNERS = `SELECT k.${K.sku} AS sku, k.${K.productId} AS product_id, k.${K.variantId} AS variant_id
  FROM json_each(?1) AS j CROSS JOIN ${K.$} AS k ON k.${K.sku} = j.value`;
export const READ_SLUGS = `SELECT p.${P.slug} AS slug, p.${P.id} AS id
  FROM json_each(?1) AS j CROSS JOIN ${P.$} AS p ON p.${P.slug} = j.value`;

/** The keys of an item that change no text of its product (its answer size stays as it is). */
const COUNTS_AND_PRICES = new Set([
  "product_id",
  "variant_id",
  "stock",
  "qty",
  "price",
  "before_price",
  "purchase_price",
  "adjust",
  "expected_qty",
  "expected_stock",
]);
/** Whether an item can change its product's answer size: a text, a list, or a SKU it sets rather than selects by. */
const changesSize = (d: ProductUpdate) =>
  Object.entries(d).some(
    ([k, v]) =>
      v !== undefined &&
      !COUNTS_AND_PRICES.has(k) &&
      (k !== "sku" || d.product_id !== undefined || d.variant_id !== undefined),
  );

export type Snapshot = {
  products: Map<number, ProductRow>;
  variants: Map<number, PlanVariant[]>;
  variantById: Map<number, PlanVariant>;
  owners: Map<string, { productId: number; variantId: number | null }>;
  /** The products that have a slug the body gives. */
  slugs: Map<string, number>;
  /** Each product's answer size estimate as read (see products/size.ts). */
  sizes: Map<number, number>;
  /** Each product's structure as read, for the write's guard (./guard.ts). */
  structures: Map<number, string>;
  /** Each product's version as read (src/products/version.ts). */
  versions: Map<number, number>;
};

/** The SKUs a body names (as selector or new value), so their owners are known before planning. */
export function namedSkus(d: ProductUpdate): string[] {
  const out: string[] = d.sku ? [d.sku] : [];
  for (const list of [d.variants?.sync, d.variants?.add, d.variants?.update]) {
    for (const e of list ?? []) if (e.sku) out.push(e.sku);
  }
  return out;
}

/** An item's SKU when it selects the product by it (no id given). */
const selectorSku = (d: ProductUpdate) =>
  d.variant_id === undefined && d.product_id === undefined && d.sku !== null ? d.sku : undefined;

export async function readSnapshot(db: DB, items: UpdateItem[]): Promise<Snapshot> {
  const ids = (pick: (d: ProductUpdate) => unknown) =>
    JSON.stringify(items.flatMap(({ data }) => (pick(data) === undefined ? [] : [pick(data)])));
  const pids = ids((d) => d.product_id);
  const vids = ids((d) => d.variant_id);
  const selecting = items.flatMap(({ data }) => selectorSku(data) ?? []);
  const selectors = JSON.stringify(selecting);
  // A selecting SKU's owner is among the rows the selection reads (snapshotOf): only the SKUs a
  // body gives as new values are looked up in the registry on their own.
  const given = items.flatMap(({ data }) => {
    const named = namedSkus(data);
    return selectorSku(data) ? named.slice(1) : named;
  });
  const slugs = items.flatMap((i) => (i.data.slug ? [i.data.slug] : []));
  const sized = items.some((i) => changesSize(i.data)) ? 1 : 0;
  // A lookup with nothing to look up is left out of the batch (a stock tool's items give no new
  // SKU or slug): each statement is D1 time, whatever it finds.
  const results = await runBatch(db, [
    stmt(db, READ_PRODUCTS, pids, vids, selectors, sized),
    stmt(db, READ_VARIANTS, pids, vids, selectors, sized),
    ...(given.length ? [stmt(db, READ_OWNERS, JSON.stringify(given))] : []),
    ...(slugs.length ? [stmt(db, READ_SLUGS, JSON.stringify(slugs))] : []),
  ]);
  let at = 2;
  const next = (asked: boolean) => (asked ? results[at++].results : []);
  const [ps, vs] = results;
  return snapshotOf(ps.results, vs.results, next(given.length > 0), next(slugs.length > 0), new Set(selecting));
}

/** The snapshot from the read's results; `selectors`, the SKUs items select by (their owners are read rows). */
type Rows = Record<string, unknown>[];
function snapshotOf(ps: Rows, vs: Rows, os: Rows, ss: Rows, selectors: Set<string>): Snapshot {
  const snap: Snapshot = {
    products: new Map(),
    variants: new Map(),
    variantById: new Map(),
    owners: new Map(),
    slugs: new Map(ss.map((r) => [String(r.slug), Number(r.id)])),
    sizes: new Map(),
    structures: new Map(),
    versions: new Map(),
  };
  for (const row of ps) {
    const p = toProduct(row);
    snap.products.set(p.id, p);
    snap.sizes.set(p.id, Number(row.answer_size));
    snap.structures.set(p.id, String(row.structure));
    snap.versions.set(p.id, Number(row.version));
    snap.variants.set(p.id, []);
    if (p.sku !== null && selectors.has(p.sku)) snap.owners.set(p.sku, { productId: p.id, variantId: null });
  }
  for (const row of vs) {
    const v = planVariant(row);
    snap.variants.get(v.productId)?.push(v);
    snap.variantById.set(v.id, v);
    if (v.sku !== null && selectors.has(v.sku)) snap.owners.set(v.sku, { productId: v.productId, variantId: v.id });
  }
  for (const [id, list] of snap.variants) {
    if (!inOrder(list)) list.sort(byPosition);
    // STRUCTURE_SQL's text, from SQLite's own JSON of each part: json_group_array joins with commas.
    const head = snap.structures.get(id) as string;
    const shares = list as (PlanVariant & VariantShares)[];
    snap.structures.set(id, `${head.slice(0, -1)},[${shares.map((v) => v.s).join(",")}]]`);
    const p = snap.products.get(id) as ProductRow;
    let size = snap.sizes.get(id) as number;
    if (size) {
      const names = textBytes(p.optionNames);
      for (const v of shares) size += v.z + names;
      snap.sizes.set(id, size);
    }
  }
  for (const o of os) {
    snap.owners.set(String(o.sku), { productId: Number(o.product_id), variantId: o.variant_id as number | null });
  }
  return snap;
}

const byPosition = (a: PlanVariant, b: PlanVariant) => a.position - b.position || a.id - b.id;
function inOrder(list: PlanVariant[]) {
  for (let i = 1; i < list.length; i++) if (byPosition(list[i - 1], list[i]) > 0) return false;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Selection (docs/products.md, "Updating products")

/** An item's product, and with `version` the version an If-Match made its write depend on. */
export type Target = { item: UpdateItem; product: ProductRow; variant?: PlanVariant; bySku: boolean; version?: number };

export function select(item: UpdateItem, snap: Snapshot): Target | Failed {
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
  return unselected();
}

/** The 400 of an item that names no product (no variant id, product id or SKU). */
export const unselected = () =>
  fail(400, "product_id: give variant_id, product_id or sku to select the product to update");
