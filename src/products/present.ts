import type { orders, products, variants } from "../db/schema";
import { productUrl } from "./categories";

export type ProductRow = typeof products.$inferSelect;
export type VariantRow = typeof variants.$inferSelect;
export type OrderRow = typeof orders.$inferSelect;

/** Minor units to the JSON number clients expect (19950 -> 199.5). */
export const toMoney = (cents: number) => cents / 100;
const maybeMoney = (cents: number | null) => (cents === null ? null : toMoney(cents));
const iso = (ms: number) => new Date(ms).toISOString();

export const optionNames = (p: Pick<ProductRow, "optionNames">): string[] => JSON.parse(p.optionNames);
export const variantValues = (v: VariantRow): string[] => [v.option1, v.option2, v.option3, v.option4, v.option5];

/** Stored JSON text to its value; most variants have no images, and "[]" needs no parser. */
export const parseList = (json: string): unknown[] => (json === "[]" ? [] : JSON.parse(json));

/** The variant columns an answer shows, as productReads selects them (snake_case, raw D1 rows). */
export type VariantOutRow = {
  id: number;
  product_id: number;
  sku: string | null;
  option1_value: string;
  option2_value: string;
  option3_value: string;
  option4_value: string;
  option5_value: string;
  price: number;
  before_price: number | null;
  purchase_price: number | null;
  qty: number;
  qty_location: string | null;
  gtin: string | null;
  supplier_sku: string | null;
  weight: number | null;
  visible: number;
  images: string;
};

/**
 * Presents a product's variants straight from D1's rows: no mapped row object in between, and
 * the option names resolved once per product rather than per variant. One object literal with
 * every key in its final order (no spread, no keys built per variant): this runs for every
 * variant of every product answer, up to 2,048 of them, and was a third of a large GET's CPU.
 */
function presentVariants(vs: VariantOutRow[], names: string[]) {
  const [n1 = null, n2 = null, n3 = null, n4 = null, n5 = null] = names;
  const out = new Array(vs.length);
  for (let i = 0; i < vs.length; i++) {
    const v = vs[i];
    out[i] = {
      variant_id: v.id,
      sku: v.sku,
      variant_option1_name: n1,
      variant_option1_value: n1 ? v.option1_value : null,
      variant_option2_name: n2,
      variant_option2_value: n2 ? v.option2_value : null,
      variant_option3_name: n3,
      variant_option3_value: n3 ? v.option3_value : null,
      variant_option4_name: n4,
      variant_option4_value: n4 ? v.option4_value : null,
      variant_option5_name: n5,
      variant_option5_value: n5 ? v.option5_value : null,
      price: v.price / 100,
      before_price: v.before_price === null ? null : v.before_price / 100,
      purchase_price: v.purchase_price === null ? null : v.purchase_price / 100,
      qty: v.qty,
      qty_location: v.qty_location,
      gtin: v.gtin,
      supplier_sku: v.supplier_sku,
      weight: v.weight,
      visible: v.visible,
      images: v.images === "[]" ? [] : (JSON.parse(v.images) as unknown[]),
    };
  }
  return out as PresentedVariant[];
}

export type PresentedVariant = {
  variant_id: number;
  sku: string | null;
  variant_option1_name: string | null;
  variant_option1_value: string | null;
  variant_option2_name: string | null;
  variant_option2_value: string | null;
  variant_option3_name: string | null;
  variant_option3_value: string | null;
  variant_option4_name: string | null;
  variant_option4_value: string | null;
  variant_option5_name: string | null;
  variant_option5_value: string | null;
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
};

/** A product as GET /v1/products/{id} returns it: interface.md 2.7 names, variants as 2.8. */
export function presentProduct(p: ProductRow, vs: VariantOutRow[]) {
  const names = optionNames(p);
  let stock = p.stock;
  if (vs.length) {
    stock = 0;
    for (const v of vs) stock += v.qty;
  }
  return {
    product_id: p.id,
    sku: p.sku,
    title: p.title,
    price: toMoney(p.price),
    before_price: maybeMoney(p.beforePrice),
    purchase_price: maybeMoney(p.purchasePrice),
    tax_rate: p.taxRate,
    // A product with variants has no stock of its own: its stock is the sum of their qty.
    stock,
    qty_location: p.qtyLocation,
    // A string, as the interface sends it ("1" on).
    disable_minusqty: String(p.disableMinusqty),
    visible: p.visible,
    description: p.description,
    gtin: p.gtin,
    supplier_name: p.supplierName,
    supplier_sku: p.supplierSku,
    datafield_1: p.datafield1,
    datafield_2: p.datafield2,
    datafield_3: p.datafield3,
    seo_description: p.seoDescription,
    seo_title: p.seoTitle,
    weight: p.weight,
    images: parseList(p.images),
    // Paths of names, head category first (docs/products.md, "Categories, URLs and images").
    categories: parseList(p.categories) as string[][],
    slug: p.slug,
    url: productUrl(p.slug),
    metadata: p.metadata === null ? null : JSON.parse(p.metadata),
    variants: presentVariants(vs, names),
    created_at: iso(p.createdAt),
    updated_at: iso(p.updatedAt),
  };
}
export type ProductOut = ReturnType<typeof presentProduct>;

/** Groups variant rows (ordered by product) under their products, keeping the products' order. */
export function presentProducts(ps: ProductRow[], vs: VariantOutRow[]) {
  // The common answer is one product: its rows are all the rows, no grouping needed.
  if (ps.length === 1) return [presentProduct(ps[0], vs)];
  const byProduct = new Map<number, VariantOutRow[]>();
  for (const v of vs) {
    const list = byProduct.get(v.product_id);
    if (list) list.push(v);
    else byProduct.set(v.product_id, [v]);
  }
  return ps.map((p) => presentProduct(p, byProduct.get(p.id) ?? []));
}
