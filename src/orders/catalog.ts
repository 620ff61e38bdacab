import { toProduct, toVariant } from "../db/rows";
import { products, skus, variants } from "../db/schema";
import { sqlNames } from "../platform/columns";
import { type DB, STALE_READ_GUARD, stmt } from "../platform/d1";
import { optionNames, type ProductRow, type VariantRow, variantValues } from "../products/present";
import type { Money } from "./totals";

// The catalog rows an order's lines may refer to, read in one round trip, and how a line finds
// what it sells in them (docs/orders.md, "Orders": most specific identifier wins, the others must agree).

/** `hasVariants` 1 when the product has any variant (a line must then name one). */
export type CatalogProduct = ProductRow & { hasVariants: number };
export type Catalog = {
  products: Map<number, CatalogProduct>;
  variants: Map<number, VariantRow>;
  skus: Map<string, { productId: number; variantId: number | null }>;
};

export type Selector = { product_id?: number; variant_id?: number | null; sku?: string };

const K = sqlNames(skus);
const V = sqlNames(variants);
const P = sqlNames(products);

// Each list is joined from its json_each, so a selector costs an index seek of each table it
// passes (an `IN (subquery)` first copies the list into a scratch b-tree, read again). A row named
// twice (by id and by SKU) comes twice; toCatalog keeps one.
const READ_SKUS = `SELECT k.${K.sku}, k.${K.productId}, k.${K.variantId} FROM json_each(?1) AS j JOIN ${K.$} AS k ON k.${K.sku} = j.value`;
const READ_VARIANTS = `
  SELECT v.* FROM json_each(?1) AS j JOIN ${V.$} AS v ON v.${V.id} = j.value
  UNION ALL
  SELECT v.* FROM json_each(?2) AS j JOIN ${K.$} AS k ON k.${K.sku} = j.value JOIN ${V.$} AS v ON v.${V.id} = k.${K.variantId}`;
export const HAS_VARIANTS = `EXISTS (SELECT 1 FROM ${V.$} AS v WHERE v.${V.productId} = p.${P.id}) AS has_variants`;
const READ_PRODUCTS = `
  SELECT p.*, ${HAS_VARIANTS} FROM json_each(?3) AS j JOIN ${P.$} AS p ON p.${P.id} = j.value
  UNION ALL
  SELECT p.*, ${HAS_VARIANTS} FROM json_each(?1) AS j JOIN ${V.$} AS x ON x.${V.id} = j.value
    JOIN ${P.$} AS p ON p.${P.id} = x.${V.productId}
  UNION ALL
  SELECT p.*, ${HAS_VARIANTS} FROM json_each(?2) AS j JOIN ${K.$} AS k ON k.${K.sku} = j.value
    JOIN ${P.$} AS p ON p.${P.id} = k.${K.productId}`;

/** The three reads of the rows `selectors` may name; runs alone or at the end of a larger read batch. */
export function catalogStatements(db: DB, selectors: Selector[]): D1PreparedStatement[] {
  const vids = new Set<number>();
  const skuSet = new Set<string>();
  const pids = new Set<number>();
  for (const s of selectors) {
    if (typeof s.variant_id === "number") vids.add(s.variant_id);
    if (s.sku !== undefined) skuSet.add(s.sku);
    if (s.product_id !== undefined) pids.add(s.product_id);
  }
  const [v, sk, p] = [JSON.stringify([...vids]), JSON.stringify([...skuSet]), JSON.stringify([...pids])];
  return [stmt(db, READ_SKUS, sk), stmt(db, READ_VARIANTS, v, sk), stmt(db, READ_PRODUCTS, v, sk, p)];
}

/** The catalog of catalogStatements' results, and of an update's stored lines' variants and products after them. */
export function toCatalog([skus, variants, products, ...stored]: D1Result<Record<string, unknown>>[]): Catalog {
  const [lineVariants = [], lineProducts = []] = stored.map((r) => r.results);
  return {
    skus: new Map(
      skus.results.map((r) => [
        r[K.sku] as string,
        { productId: r[K.productId] as number, variantId: r[K.variantId] as number | null },
      ]),
    ),
    variants: new Map([...variants.results, ...lineVariants].map((r) => [r.id as number, toVariant(r)])),
    products: new Map(
      [...products.results, ...lineProducts].map((r) => [
        r.id as number,
        { ...toProduct(r), hasVariants: r.has_variants as number },
      ]),
    ),
  };
}

/** Fails its batch unless each product of `read` (id to updated_at, as the plan read it) is unchanged. */
export const readGuard = (db: DB, read: Map<number, number>) =>
  stmt(db, STALE_READ_GUARD, JSON.stringify([...read].map(([id, updated_at]) => ({ id, updated_at }))));

/** What a line sells, as the snapshot the order keeps (docs/orders.md, "Orders"). */
export type Item = {
  productId: number;
  variantId: number | null;
  sku: string | null;
  title: string;
  options: { name: string; value: string }[];
  catalogPrice: Money;
  taxRate: number;
  stockKey: string;
  noMinus: boolean;
  stock: number;
  productUpdatedAt: number;
};

export type Line = Item & { qty: number; unitPrice: Money; path: string };

/** How a refusal or notice names what a line sells: its SKU, else its variant or product by id. */
export const itemName = (l: { sku: string | null; productId: number; variantId: number | null }) =>
  l.sku ?? (l.variantId === null ? `product ${l.productId}` : `variant ${l.variantId}`);

/** What a line sells: variant `v` of `p`, or without `v` the product itself (which has no variants). */
function itemOf(p: CatalogProduct, v?: VariantRow): Item {
  const values = v && variantValues(v);
  return {
    productId: p.id,
    variantId: v ? v.id : null,
    sku: v ? v.sku : p.sku,
    title: p.title,
    options: values ? optionNames(p).map((name, i) => ({ name, value: values[i] })) : [],
    catalogPrice: v ? v.price : p.price,
    taxRate: p.taxRate,
    stockKey: v ? `v${v.id}` : `p${p.id}`,
    noMinus: (v ? v.noMinus : p.disableMinusqty) === 1,
    stock: v ? v.qty : p.stock,
    productUpdatedAt: p.updatedAt,
  };
}

const fromProduct = (p: CatalogProduct, path: string): Item | string =>
  p.hasVariants ? `${path}: product ${p.id} has variants: name one by variant_id or by its sku` : itemOf(p);

/** What a line names by its most specific identifier (variant_id, sku, product_id), the others agreeing. */
export function resolve(sel: Selector, path: string, cat: Catalog, visibleOnly = false): Item | string {
  // For a storefront a hidden product or variant does not exist: the same words as a missing one.
  const shown = <T extends { visible: number }>(r: T | undefined) =>
    r && (!visibleOnly || r.visible === 1) ? r : undefined;
  if (typeof sel.variant_id === "number") {
    const v = shown(cat.variants.get(sel.variant_id));
    const p = v && shown(cat.products.get(v.productId));
    if (!v || !p) return `${path}.variant_id: no variant ${sel.variant_id}`;
    if (sel.product_id !== undefined && sel.product_id !== p.id) {
      return `${path}.product_id: variant ${v.id} belongs to product ${p.id}, not ${sel.product_id}`;
    }
    // The product's SKU is accepted beside a variant_id: clients often send the parent SKU.
    if (sel.sku !== undefined && sel.sku !== v.sku && sel.sku !== p.sku) {
      return `${path}.sku: ${sel.sku} is not the SKU of variant ${v.id}`;
    }
    return itemOf(p, v);
  }
  if (sel.sku !== undefined) {
    const owner = cat.skus.get(sel.sku);
    const p = owner && shown(cat.products.get(owner.productId));
    const v = owner && owner.variantId !== null ? shown(cat.variants.get(owner.variantId)) : undefined;
    if (!owner || !p || (owner.variantId !== null && !v)) {
      return `${path}.sku: no product or variant has SKU ${sel.sku}`;
    }
    if (sel.product_id !== undefined && sel.product_id !== p.id) {
      return `${path}.product_id: SKU ${sel.sku} belongs to product ${p.id}, not ${sel.product_id}`;
    }
    if (!v) return fromProduct(p, path);
    if (sel.variant_id === null) return `${path}.variant_id: SKU ${sel.sku} is a variant's, not a product's`;
    return itemOf(p, v);
  }
  const p = sel.product_id === undefined ? undefined : shown(cat.products.get(sel.product_id));
  if (!p) return `${path}.product_id: no product ${sel.product_id}`;
  return fromProduct(p, path);
}
