import type { orders, products, variants } from "../db/schema";

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

// One object literal with every key in its final order (no spread, no keys built per variant):
// this runs once per variant of every product answer, up to 2,048 of them.
function presentVariant(v: VariantRow, names: string[]) {
  const [n1 = null, n2 = null, n3 = null, n4 = null, n5 = null] = names;
  return {
    variant_id: v.id,
    sku: v.sku,
    variant_option1_name: n1,
    variant_option1_value: n1 ? v.option1 : null,
    variant_option2_name: n2,
    variant_option2_value: n2 ? v.option2 : null,
    variant_option3_name: n3,
    variant_option3_value: n3 ? v.option3 : null,
    variant_option4_name: n4,
    variant_option4_value: n4 ? v.option4 : null,
    variant_option5_name: n5,
    variant_option5_value: n5 ? v.option5 : null,
    price: toMoney(v.price),
    before_price: maybeMoney(v.beforePrice),
    purchase_price: maybeMoney(v.purchasePrice),
    qty: v.qty,
    qty_location: v.qtyLocation,
    gtin: v.gtin,
    supplier_sku: v.supplierSku,
    weight: v.weight,
    visible: v.visible,
    images: parseList(v.images),
  };
}

/** A product as GET /v1/products/{id} returns it: interface.md 2.7 names, variants as 2.8. */
export function presentProduct(p: ProductRow, vs: VariantRow[]) {
  const names = optionNames(p);
  return {
    product_id: p.id,
    sku: p.sku,
    title: p.title,
    price: toMoney(p.price),
    before_price: maybeMoney(p.beforePrice),
    purchase_price: maybeMoney(p.purchasePrice),
    tax_rate: p.taxRate,
    // A product with variants has no stock of its own: its stock is the sum of their qty.
    stock: vs.length ? vs.reduce((n, v) => n + v.qty, 0) : p.stock,
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
    metadata: p.metadata === null ? null : JSON.parse(p.metadata),
    variants: vs.map((v) => presentVariant(v, names)),
    created_at: iso(p.createdAt),
    updated_at: iso(p.updatedAt),
  };
}
export type ProductOut = ReturnType<typeof presentProduct>;

/** Groups variant rows (ordered by product) under their products, keeping the products' order. */
export function presentProducts(ps: ProductRow[], vs: VariantRow[]) {
  const byProduct = new Map<number, VariantRow[]>();
  for (const v of vs) {
    const list = byProduct.get(v.productId);
    if (list) list.push(v);
    else byProduct.set(v.productId, [v]);
  }
  return ps.map((p) => presentProduct(p, byProduct.get(p.id) ?? []));
}
