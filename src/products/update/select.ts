import { toProduct } from "../../db/rows";
import { products, skus, variants } from "../../db/schema";
import { sqlNames } from "../../platform/columns";
import { type DB, runBatch, stmt } from "../../platform/d1";
import { READ_OWNERS, READ_SLUGS } from "../create";
import { PRODUCT_FIELD_NAMES, productField, VARIANT_FIELDS } from "../fields";
import type { ProductRow, VariantRow } from "../present";
import type { ItemOutcome } from "../route";
import { OPTION_SLOTS, type ProductUpdate } from "../schema";
import { PRODUCT_SIZE_SQL, textBytes, variantSizeSql } from "../variants";
import { VERSION_SQL } from "../version";
import { STRUCTURE_COLUMNS } from "./write";

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
// the write's guard holds (./write.ts), are made of its row and its variants' rows: each is read
// once, the product's share here and each variant's with it in READ_VARIANTS (readSnapshot sums
// them), never by a pass of its own over the variants. The size is read only when an item of the
// request can change a text (?4), since a change of counts and prices leaves the estimate as it is.
// Rows keep the columns' SQL names (src/db/rows.ts maps them).
export const READ_PRODUCTS = `SELECT p.*, iif(?4, ${PRODUCT_SIZE_SQL}, 0) AS answer_size,
  json_array(p.${P.sku}, p.${P.optionNames}, p.${P.disableMinusqty}) AS structure,
  ${VERSION_SQL} AS version FROM (${TARGETS}) AS t CROSS JOIN ${P.$} AS p ON p.${P.id} = t.id`;
// Only the columns a plan decides on (a sync reads up to 2,048 variants). Unordered: an ORDER BY is
// billed as a row read per row sorted; readSnapshot puts each product's variants in their order
// (position, then id), which the product index mostly gives already.
const PLAN_COLUMNS = [
  "id",
  "productId",
  ...OPTION_SLOTS.map((n) => `option${n}` as const),
  ...Object.values(VARIANT_FIELDS).map((f) => f.column),
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
/** The keys of an item that change no text of its product (its answer size stays as it is): ids, counts, no-text fields. */
const COUNTS_AND_PRICES = new Set<string>(["product_id", "variant_id", "adjust", "expected_qty", "expected_stock"]);
for (const k of PRODUCT_FIELD_NAMES) if (!productField(k)?.kind.text) COUNTS_AND_PRICES.add(k);
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
  /** Each product as read: its answer size estimate (../variants.ts), structure (./write.ts) and version (../version.ts). */
  read: Map<number, { size: number; structure: string; version: number }>;
};

/** An item's SKU when it selects the product by it (no id given). */
const selectorSku = (d: ProductUpdate) =>
  d.variant_id === undefined && d.product_id === undefined && d.sku !== null ? d.sku : undefined;

/** A round's read, in one batch, as the snapshot its items are planned on. */
export async function readSnapshot(db: DB, items: UpdateItem[]): Promise<Snapshot> {
  const ids = (pick: (d: ProductUpdate) => unknown) =>
    JSON.stringify(items.flatMap(({ data }) => (pick(data) === undefined ? [] : [pick(data)])));
  const pids = ids((d) => d.product_id);
  const vids = ids((d) => d.variant_id);
  const selecting = ids(selectorSku);
  // A selecting SKU's owner is among the rows the selection reads: only the SKUs a body gives as
  // new values are looked up in the registry on their own.
  const given: string[] = [];
  for (const { data: d } of items) {
    if (d.sku && selectorSku(d) === undefined) given.push(d.sku);
    for (const list of [d.variants?.sync, d.variants?.add, d.variants?.update]) {
      for (const e of list ?? []) if (e.sku) given.push(e.sku);
    }
  }
  const slugs = items.flatMap((i) => (i.data.slug ? [i.data.slug] : []));
  const sized = items.some((i) => changesSize(i.data)) ? 1 : 0;
  // A lookup with nothing to look up is left out of the batch (a stock tool's items give no new
  // SKU or slug): each statement is D1 time, whatever it finds.
  const results = await runBatch(db, [
    stmt(db, READ_PRODUCTS, pids, vids, selecting, sized),
    stmt(db, READ_VARIANTS, pids, vids, selecting, sized),
    ...(given.length ? [stmt(db, READ_OWNERS, JSON.stringify(given))] : []),
    ...(slugs.length ? [stmt(db, READ_SLUGS, JSON.stringify(slugs))] : []),
  ]);
  let at = 2;
  const next = (asked: boolean) => (asked ? results[at++].results : []);
  const [ps, vs] = results;
  const os = next(given.length > 0);
  const ss = next(slugs.length > 0);
  const selectors = new Set(items.flatMap(({ data }) => selectorSku(data) ?? []));
  const snap: Snapshot = {
    products: new Map(),
    variants: new Map(),
    variantById: new Map(),
    owners: new Map(),
    slugs: new Map(ss.map((r) => [String(r.slug), Number(r.id)])),
    read: new Map(),
  };
  for (const row of ps.results) {
    const p = toProduct(row);
    snap.products.set(p.id, p);
    const read = { size: Number(row.answer_size), structure: String(row.structure), version: Number(row.version) };
    snap.read.set(p.id, read);
    snap.variants.set(p.id, []);
    if (p.sku !== null && selectors.has(p.sku)) snap.owners.set(p.sku, { productId: p.id, variantId: null });
  }
  for (const row of vs.results) {
    const v = planVariant(row);
    snap.variants.get(v.productId)?.push(v);
    snap.variantById.set(v.id, v);
    if (v.sku !== null && selectors.has(v.sku)) snap.owners.set(v.sku, { productId: v.productId, variantId: v.id });
  }
  for (const [id, list] of snap.variants) {
    if (!inOrder(list)) list.sort(byPosition);
    // STRUCTURE_SQL's text, from SQLite's own JSON of each part: json_group_array joins with commas.
    const read = snap.read.get(id) as { size: number; structure: string };
    const shares = list as (PlanVariant & VariantShares)[];
    read.structure = `${read.structure.slice(0, -1)},[${shares.map((v) => v.s).join(",")}]]`;
    let size = read.size;
    if (size) {
      const names = textBytes((snap.products.get(id) as ProductRow).optionNames);
      for (const v of shares) size += v.z + names;
      read.size = size;
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
    const variant = owner?.variantId == null ? undefined : snap.variantById.get(owner.variantId);
    if (!owner || !product || (owner.variantId !== null && !variant)) {
      return fail(404, `sku: no product or variant has SKU ${d.sku}`);
    }
    return { item, product, variant, bySku: true };
  }
  return fail(400, "product_id: give variant_id, product_id or sku to select the product to update");
}
