import type { z } from "zod";
import { products, variants } from "../db/schema";
import { sqlNames } from "../platform/columns";
import type { clearable, opt, req } from "../platform/fields";
import {
  COUNT,
  FLAG,
  FLAG_TEXT,
  GRAMS,
  IDENTIFIER,
  IMAGES,
  type Kind,
  MONEY,
  type ModelledEncoding,
  OBJECT,
  PERCENT,
  SKU,
  text,
} from "./kinds";

// A product's and a variant's fields, described once (CONTRIBUTING.md, "Adding a product field").
// Everything that lists fields is derived from here: the request validators (./schema.ts), the
// create's insert and the update's columns, the presenter and the answers SQLite builds in both
// dialects (./present.ts, ./modelled-json.ts), the size estimates, the OpenAPI response
// schemas and what a publishable key sees (src/keys/public.ts). Leaving a described field out of
// an answer's key order (./key-order.ts) is a type error.

export type ProductColumn = keyof typeof products.$inferSelect;
export type VariantColumn = keyof typeof variants.$inferSelect;

type Described<C extends string> = {
  /** The table's key (src/db/schema/) of the column; the field's name is the column's name. */
  column: C;
  /** Its validator, and how each dialect answers it (./kinds.ts). */
  kind: Kind;
  /** required: a create must send it; clearable: an update's null clears it; optional: neither. */
  write: "required" | "optional" | "clearable";
  /** The modelled dialect's encoding (./kinds.ts MODELLED); left out: that dialect has no such field. */
  modelled?: ModelledEncoding;
  /** Who of the publishable keys sees it (docs/keys.md): none (false), or those with the scope. */
  shown?: false | "stock" | "datafields";
  /** The own dialect's description of it in the OpenAPI document, where its kind's says too little. */
  about?: string;
  /** Answered by each dialect in its own way (a product's stock: its variants' sum when it has some). */
  computed?: true;
};

type VariantField = Described<VariantColumn> & {
  /** SQL of what a new variant stores when its entry leaves the field out (`p` its product); left out: NULL. */
  absent?: string;
};

type ProductField = Described<ProductColumn> & {
  /** What a create stores when the body leaves the field out; left out: null (a required field has none). */
  initial?: unknown;
  /** With a variant selected (PUT by a variant's SKU or variant_id), the field changes the variant. */
  variant?: true;
};

/** The product's fields, in the order of the validator (and of the insert's columns). */
export const PRODUCT_FIELDS = {
  sku: { column: "sku", kind: SKU, write: "clearable", variant: true, modelled: "text" },
  title: { column: "title", kind: text(255), write: "required", modelled: "text" },
  price: { column: "price", kind: MONEY, write: "required", variant: true, modelled: "price" },
  before_price: { column: "beforePrice", kind: MONEY, write: "clearable", variant: true, modelled: "price" },
  purchase_price: {
    column: "purchasePrice",
    kind: MONEY,
    write: "clearable",
    variant: true,
    modelled: "price",
    shown: false,
  },
  tax_rate: { column: "taxRate", kind: PERCENT, write: "optional", initial: 25, modelled: "digits" },
  stock: { column: "stock", kind: COUNT, write: "optional", initial: 0, variant: true, computed: true, shown: "stock" },
  qty_location: {
    column: "qtyLocation",
    kind: text(255),
    write: "clearable",
    variant: true,
    modelled: "text",
    shown: false,
  },
  disable_minusqty: { column: "disableMinusqty", kind: FLAG_TEXT, write: "optional", initial: 0, modelled: "flag" },
  visible: { column: "visible", kind: FLAG, write: "optional", initial: 1, variant: true, modelled: "flag" },
  description: { column: "description", kind: text(100_000), write: "clearable", modelled: "text" },
  gtin: { column: "gtin", kind: IDENTIFIER, write: "clearable", variant: true, modelled: "text" },
  supplier_name: { column: "supplierName", kind: text(255), write: "clearable", modelled: "text", shown: false },
  supplier_sku: {
    column: "supplierSku",
    kind: IDENTIFIER,
    write: "clearable",
    variant: true,
    modelled: "text",
    shown: false,
  },
  datafield_1: { column: "datafield1", kind: text(255), write: "clearable", modelled: "text", shown: "datafields" },
  datafield_2: { column: "datafield2", kind: text(255), write: "clearable", modelled: "text", shown: "datafields" },
  datafield_3: { column: "datafield3", kind: text(255), write: "clearable", modelled: "text", shown: "datafields" },
  seo_description: { column: "seoDescription", kind: text(255), write: "clearable", modelled: "text" },
  seo_title: { column: "seoTitle", kind: text(255), write: "clearable", modelled: "text" },
  brand: { column: "brand", kind: text(255), write: "clearable", modelled: "text" },
  weight: { column: "weight", kind: GRAMS, write: "clearable", variant: true, modelled: "weight" },
  images: { column: "images", kind: IMAGES, write: "clearable", initial: [], modelled: "images" },
  metadata: { column: "metadata", kind: OBJECT, write: "clearable", shown: false },
} as const satisfies Record<string, ProductField>;

/** A variant's fields, in the order of its validator. */
export const VARIANT_FIELDS = {
  sku: { column: "sku", kind: SKU, write: "clearable", modelled: "text" },
  // A variant without a price of its own is sold at its product's.
  price: {
    column: "price",
    kind: MONEY,
    write: "optional",
    modelled: "money2",
    absent: `p.${sqlNames(products).price}`,
  },
  purchase_price: { column: "purchasePrice", kind: MONEY, write: "clearable", modelled: "money2", shown: false },
  before_price: { column: "beforePrice", kind: MONEY, write: "clearable", modelled: "money2" },
  qty: {
    column: "qty",
    kind: COUNT,
    write: "optional",
    modelled: "signedDigits",
    shown: "stock",
    about: "Stock of this variant.",
    absent: "0",
  },
  qty_location: { column: "qtyLocation", kind: text(255), write: "clearable", modelled: "text", shown: false },
  gtin: { column: "gtin", kind: IDENTIFIER, write: "clearable", modelled: "text" },
  supplier_sku: { column: "supplierSku", kind: IDENTIFIER, write: "clearable", modelled: "text", shown: false },
  weight: { column: "weight", kind: GRAMS, write: "clearable", modelled: "weight" },
  // The modelled dialect answers it inverted, as `hidden` (./modelled-json.ts).
  visible: { column: "visible", kind: FLAG, write: "optional", absent: "1" },
  images: { column: "images", kind: IMAGES, write: "clearable", modelled: "images", absent: "'[]'" },
} as const satisfies Record<string, VariantField>;

type Products = typeof PRODUCT_FIELDS;
type Variants = typeof VARIANT_FIELDS;

/** The fields of `D` whose name is not their column's SQL name in table `T`. */
type Misnamed<D, T> = {
  [K in keyof D]: D[K] extends { column: infer C extends keyof T }
    ? T[C] extends { _: { name: K } }
      ? never
      : K
    : never;
}[keyof D];
// A field's name is its column's (the create's insert and the update name columns by it).
true satisfies [Misnamed<Products, typeof products> | Misnamed<Variants, typeof variants>] extends [never]
  ? true
  : false;

export type ProductFieldName = keyof Products;
export type VariantFieldName = keyof Variants;

// The answers' key orders are in ./key-order.ts, checked against these descriptions; they are
// exported from here too, so that this module stays the one import for a field.
export {
  MODELLED_BASE,
  MODELLED_DETAILS,
  MODELLED_VARIANT,
  type ModelledProductSpecial,
  type ModelledVariantSpecial,
  OPTION_KEYS,
  OWN_PRODUCT,
  OWN_VARIANT,
  type OwnProductSpecial,
  type OwnVariantSpecial,
} from "./key-order";

// What the rest of the code reads of the description.

export type Field = Described<string> & { initial?: unknown; variant?: true };
const entries = Object.entries(PRODUCT_FIELDS) as [ProductFieldName, Field][];

/** A described field of a product or variant by its name. */
export const productField = (name: string): Field | undefined => (PRODUCT_FIELDS as Record<string, Field>)[name];
export const variantField = (name: string): Field | undefined => (VARIANT_FIELDS as Record<string, Field>)[name];

/** The Drizzle column of a described product or variant field. */
export const productColumn = (f: Field) => products[f.column as ProductColumn];
export const variantColumn = (f: Field) => variants[f.column as VariantColumn];

/** Every field, in the order above. */
export const PRODUCT_FIELD_NAMES = entries.map(([name]) => name);
/** Fields stored as plain values (not JSON text). */
export const SCALAR_FIELDS = entries.filter(([, f]) => !f.kind.json).map(([name]) => name);
/** Fields that stay the product's when a variant is selected (docs/products.md, "Updating products"). */
export const PRODUCT_ONLY_FIELDS = entries.filter(([, f]) => !f.variant).map(([name]) => name);
/** The fields the size estimates count as text (JSON ones included), with their key on a products row. */
export const TEXT_FIELDS = entries
  .filter(([, f]) => f.kind.text)
  .map(([name, f]) => [name as string, f.column as ProductColumn] as const);

/** SQL: the value of field `name` in the JSON row `row` as the column stores it. */
export function fieldValueSql(row: string, name: ProductFieldName) {
  const f: Field = PRODUCT_FIELDS[name];
  if (f.kind.json === "object") return `iif(json_type(${row}, '$.${name}') = 'object', ${row}->'${name}', NULL)`;
  return `${row}${f.kind.json ? "->" : "->>"}'${name}'`;
}

/** A create body's fields as the insert stores them, a left-out field as its `initial` value. */
export function withInitials<P extends Partial<Record<ProductFieldName, unknown>>>(p: P) {
  const out: Record<string, unknown> = {};
  for (const [name, f] of entries) out[name] = p[name] ?? f.initial ?? null;
  return out as { [K in ProductFieldName]: Exclude<P[K], undefined> | Initial<K> };
}

type Initial<K extends ProductFieldName> = Products[K] extends { initial: infer I }
  ? I extends readonly []
    ? never[]
    : I
  : Products[K] extends { write: "required" }
    ? never
    : null;

// The request validators' shapes (./schema.ts), typed field by field.

type Zod<F> = F extends { kind: { zod: infer Z extends z.ZodType } } ? Z : never;
/** Required on create, clearable by null on update, else optional (./schema.ts WRAP). */
type Write<F, Mode> = [F, Mode] extends [{ write: "required" }, "create"]
  ? ReturnType<typeof req<Zod<F>>>
  : [F, Mode] extends [{ write: "clearable" }, "update"]
    ? ReturnType<typeof clearable<Zod<F>>>
    : ReturnType<typeof opt<Zod<F>>>;
/** The validator shape of described fields `D` in `mode`. */
export type Shape<D, Mode extends "create" | "update"> = { -readonly [K in keyof D]: Write<D[K], Mode> };
