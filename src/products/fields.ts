import type { products } from "../db/schema";

// A product's own fields, described once (CONTRIBUTING.md, "Adding a product field"): each body
// field by its name (the same as its column's), the Drizzle table's key of that column, and how
// the writes treat it. The insert of a create, the update of a PUT, which fields a variant
// selection leaves to the product, and the 2 MiB size estimate are derived from this list.

type Column = keyof typeof products.$inferSelect;

type ProductField = {
  /** The products table's key (src/db/schema.ts) of the column named like the field. */
  column: Column;
  /** What a create stores when the body leaves the field out; required fields have none. */
  initial?: unknown;
  /** Stored as JSON text (written with `->`, not `->>`); "object": kept only when an object. */
  json?: "value" | "object";
  /** Text counted in the answer's size estimate (products/size.ts). */
  text?: true;
  /** With a variant selected (PUT by a variant's SKU or variant_id), the field changes the variant. */
  variant?: true;
};

export const PRODUCT_FIELDS = {
  sku: { column: "sku", initial: null, text: true, variant: true },
  title: { column: "title", text: true },
  price: { column: "price", variant: true },
  before_price: { column: "beforePrice", initial: null, variant: true },
  purchase_price: { column: "purchasePrice", initial: null, variant: true },
  tax_rate: { column: "taxRate", initial: 25 },
  stock: { column: "stock", initial: 0, variant: true },
  qty_location: { column: "qtyLocation", initial: null, text: true, variant: true },
  disable_minusqty: { column: "disableMinusqty", initial: 0 },
  visible: { column: "visible", initial: 1, variant: true },
  description: { column: "description", initial: null, text: true },
  gtin: { column: "gtin", initial: null, text: true, variant: true },
  supplier_name: { column: "supplierName", initial: null, text: true },
  supplier_sku: { column: "supplierSku", initial: null, text: true, variant: true },
  datafield_1: { column: "datafield1", initial: null, text: true },
  datafield_2: { column: "datafield2", initial: null, text: true },
  datafield_3: { column: "datafield3", initial: null, text: true },
  seo_description: { column: "seoDescription", initial: null, text: true },
  seo_title: { column: "seoTitle", initial: null, text: true },
  weight: { column: "weight", initial: null, variant: true },
  images: { column: "images", initial: [], json: "value", text: true },
  metadata: { column: "metadata", initial: null, json: "object", text: true },
} as const satisfies Record<string, ProductField>;

export type ProductFieldName = keyof typeof PRODUCT_FIELDS;
const entries = Object.entries(PRODUCT_FIELDS) as [ProductFieldName, ProductField][];

/** Every field, in the order above. */
export const PRODUCT_FIELD_NAMES = entries.map(([name]) => name);
/** Fields stored as plain values (not JSON text). */
export const SCALAR_FIELDS = entries.filter(([, f]) => !f.json).map(([name]) => name);
/** Fields that stay the product's when a variant is selected (docs/products.md, "Updating products"). */
export const PRODUCT_ONLY_FIELDS = entries.filter(([, f]) => !f.variant).map(([name]) => name);
type Described = typeof PRODUCT_FIELDS;
/** The fields stored as plain text. */
export type TextFieldName = {
  [K in ProductFieldName]: Described[K] extends { text: true }
    ? Described[K] extends { json: string }
      ? never
      : K
    : never;
}[ProductFieldName];
/** Plain text fields of the size estimate, with their key on a products row. */
export const TEXT_FIELDS = entries
  .filter(([, f]) => f.text && !f.json)
  .map(([name, f]) => [name as TextFieldName, f.column] as const);

/** SQL: the value of field `name` in the JSON row `row` as the column stores it. */
export function fieldValueSql(row: string, name: ProductFieldName) {
  const f: ProductField = PRODUCT_FIELDS[name];
  if (f.json === "object") return `iif(json_type(${row}, '$.${name}') = 'object', ${row}->'${name}', NULL)`;
  return `${row}${f.json ? "->" : "->>"}'${name}'`;
}

/** A create body's fields as the insert stores them, a left-out field as its `initial` value. */
export function withInitials<P extends Partial<Record<ProductFieldName, unknown>>>(p: P) {
  const out: Record<string, unknown> = {};
  for (const [name, f] of entries) out[name] = p[name] ?? f.initial;
  return out as { [K in ProductFieldName]: Exclude<P[K], undefined> | Initial<K> };
}

type Initial<K extends ProductFieldName> = (typeof PRODUCT_FIELDS)[K] extends { initial: infer I }
  ? I extends readonly []
    ? never[]
    : I
  : never;
