import { type ProductRow, variantValues } from "../present";
import { jsonBytes, PRODUCT_TEXT, textBytes, type VariantText, valueBytes, variantBytes } from "../size";
import type { PlanVariant } from "./select";
import { type VariantState, valuesMoved } from "./states";

// A plan's effect on its product's answer size (docs/products.md, "Updating products"): the size read with the product
// (SIZE_SQL) plus what the plan changes, by the formula of products/size.ts. Only what changes is
// measured, so a stock sync of 2,048 variants costs one comparison per variant.

/** Whether a state's text columns differ from its row's, compared in place (a sync sets them all). */
const textChanged = (s: VariantState, row: PlanVariant) =>
  s.cur.sku !== row.sku ||
  s.cur.qty_location !== row.qtyLocation ||
  s.cur.gtin !== row.gtin ||
  s.cur.supplier_sku !== row.supplierSku ||
  (s.cur.images !== undefined && JSON.stringify(s.cur.images) !== row.images) ||
  valuesMoved(s);

const rowText = (v: PlanVariant): VariantText => ({
  sku: v.sku,
  values: variantValues(v),
  qty_location: v.qtyLocation,
  gtin: v.gtin,
  supplier_sku: v.supplierSku,
  images: v.images,
});

const stateText = (s: VariantState): VariantText => ({
  sku: s.cur.sku,
  values: s.cur.values,
  qty_location: s.cur.qty_location,
  gtin: s.cur.gtin,
  supplier_sku: s.cur.supplier_sku,
  images: s.cur.images === undefined ? (s.row?.images ?? "[]") : JSON.stringify(s.cur.images),
});

/**
 * The product's answer size after the plan: `before` as read, its changed product fields (the
 * plan's product row, body names), the variants it deletes and the states of all it keeps.
 */
export function sizeAfter(
  before: number,
  p: ProductRow,
  product: Record<string, unknown>,
  deleted: PlanVariant[],
  states: VariantState[],
): number {
  let size = before;
  for (const [key, field] of PRODUCT_TEXT) {
    if (key in product) size += valueBytes(product[key]) - textBytes(p[field] as string | null);
  }
  // Every variant answers the option names.
  const oldNames = textBytes(p.optionNames);
  const newNames = "option_names" in product ? jsonBytes(product.option_names) : oldNames;
  size += states.length * newNames - deleted.length * oldNames;
  for (const v of deleted) size -= variantBytes(rowText(v));
  for (const s of states) {
    if (!s.row) size += variantBytes(stateText(s));
    else {
      size -= oldNames;
      if (textChanged(s, s.row)) size += variantBytes(stateText(s)) - variantBytes(rowText(s.row));
    }
  }
  return size;
}
