import type { DB } from "../db/client";
import type { Catalog } from "./catalog";

// Catalog cache: a create planned in JavaScript in one round trip.
//
// Planning in JavaScript needs the catalog (prices, titles, tax rates, options, stock flags), so
// such an order takes a read and a write. The rows the read path saw are kept per D1 binding (one
// per isolate), product by product, and an order whose every line they resolve is planned from
// them and written in ONE batch, whose first statement fails it unless every product it used still
// has the updated_at it was read with. (An order they cannot plan is planned in SQL in one batch
// when it can be, cold.ts; that path reads no rows for this cache. So the cache serves what only
// JavaScript plans, discounts and line edits at creation and keyed requests, once the read path
// has run for their products, and any order of those products after that.) That is sound because every change of a product, of one of its variants, or of
// the owner of one of their SKUs moves its product's updated_at (strictly: max(now, old + 1); all
// PUT paths do, and POST creates new products); orders only take stock, which the plan does not
// trust from the cache: the stock floor CHECKs decide, as they do on the read path. So whenever
// the cached rows could be wrong (the batch's stale-read guard fails), or the plan found anything to refuse (an unknown SKU, too
// little stock, any error, whose exact words need fresh rows), the request takes the read path,
// from scratch, as if the cache did not exist; a failed batch was rolled back whole.

type CachedCatalog = Catalog & { owned: Map<number, { variants: number[]; skus: string[] }> };

export const catalogCache = new WeakMap<object, CachedCatalog>();
const CACHE_MAX_PRODUCTS = 2000;

/** Keeps what a read saw, replacing everything cached about the products it read. */
export function remember(db: DB, cat: Catalog) {
  let c = catalogCache.get(db.$binding);
  if (!c || c.products.size + cat.products.size > CACHE_MAX_PRODUCTS) {
    c = { products: new Map(), variants: new Map(), skus: new Map(), owned: new Map() };
    catalogCache.set(db.$binding, c);
  }
  for (const [id, p] of cat.products) {
    const old = c.owned.get(id);
    for (const v of old?.variants ?? []) c.variants.delete(v);
    for (const sku of old?.skus ?? []) if (c.skus.get(sku)?.productId === id) c.skus.delete(sku);
    c.products.set(id, p);
    c.owned.set(id, { variants: [], skus: [] });
  }
  for (const [id, v] of cat.variants) {
    if (!cat.products.has(v.productId)) continue;
    c.variants.set(id, v);
    c.owned.get(v.productId)?.variants.push(id);
  }
  for (const [sku, owner] of cat.skus) {
    if (!cat.products.has(owner.productId)) continue;
    c.skus.set(sku, owner);
    c.owned.get(owner.productId)?.skus.push(sku);
  }
}

export const forget = (db: DB) => catalogCache.delete(db.$binding);
