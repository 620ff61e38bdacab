import { z } from "zod";
import { clearable, id, opt, precompile, req, sku, str } from "../platform/fields";
import { categoryName, categoryPaths, slug } from "./categories";
import { type Field, OPTION_KEYS, PRODUCT_FIELDS, type Shape, VARIANT_FIELDS } from "./fields";
import { stock } from "./kinds";

// Wire schemas of a product and a variant entry (docs/products.md), field names as the API
// this is modelled on sends them. `create` mode is POST /v1/products; `update` mode is PUT, where
// every field is optional and `null` clears an optional one (docs/products.md, "Updating products").

/**
 * Variants per product (docs/products.md, "Limits"): 2,048 with up to five options, as the
 * modelled API allows. What its largest writes cost is measured in workerd in bench/README.md.
 */
export const MAX_VARIANTS = 2048;
export const OPTION_SLOTS = [1, 2, 3, 4, 5] as const;

export { image } from "./kinds";

/** How each mode takes a field by its `write`: required on create, clearable by null on update. */
const WRAP = {
  create: { required: req, optional: opt, clearable: opt },
  update: { required: opt, optional: opt, clearable },
};

/** The validators of the fields `described` (./fields.ts) in `mode`. */
function shapeOf<D extends Record<string, Field>, M extends "create" | "update">(described: D, mode: M) {
  const shape: Record<string, z.ZodType> = {};
  for (const [name, f] of Object.entries(described)) shape[name] = WRAP[mode][f.write](f.kind.zod);
  return shape as Shape<D, M>;
}

/** The option names and values of a variant entry. */
const OPTIONS = Object.fromEntries(OPTION_KEYS.map((k) => [k, opt(str(255))])) as unknown as Record<
  (typeof OPTION_KEYS)[number],
  z.ZodType<string | undefined>
>;
/** Variant fields; `update` entries also carry variant_id. */
const variantShape = <M extends "create" | "update">(mode: M) => ({ ...OPTIONS, ...shapeOf(VARIANT_FIELDS, mode) });

export const variantEntry = z.object(variantShape("create"), { error: "must be an object" });
// Stock changes that cannot lose updates (docs/stock.md): `adjust`
// moves the stored count by a signed amount instead of setting it, and `expected_qty` makes the
// entry conditional on the stored count. Update entries only: a created variant has no count yet.
const stockGuards = {
  adjust: opt(
    stock.describe(
      "A signed whole number added to the stored count (stock or qty) as it is when the write runs; not with the count itself. Refused (409) where it would take the count below 0 while disable_minusqty is on.",
    ),
  ),
  expected_qty: opt(
    stock.describe("The entry applies only if the stored count is this number; else 409 saying the current count."),
  ),
};

export const variantUpdateEntry = z.object(
  { ...variantShape("update"), ...stockGuards, variant_id: req(id) },
  { error: "must be an object" },
);
export type VariantEntry = z.output<typeof variantEntry>;
export type VariantUpdateEntry = z.output<typeof variantUpdateEntry>;

const variantList = <T extends z.ZodType>(entry: T) =>
  z
    .array(entry, { error: "must be an array" })
    .max(MAX_VARIANTS, { error: `must have at most ${MAX_VARIANTS} entries` });

function productShape<M extends "create" | "update">(mode: M) {
  const o = mode === "create" ? opt : clearable;
  return {
    ...shapeOf(PRODUCT_FIELDS, mode),
    // docs/products.md, "Categories, URLs and images": null derives the slug from the title again,
    // and clears the categories.
    slug: o(slug),
    categories: o(categoryPaths),
    // The modelled API's create field, accepted on update too; null or "" change nothing.
    headcategory_name: clearable(categoryName),
  };
}

export const productCreate = z.object(
  {
    ...productShape("create"),
    variants: opt(z.object({ add: opt(variantList(variantEntry)) }, { error: "must be an object with an add array" })),
  },
  { error: "must be a product object" },
);
export type ProductCreate = z.output<typeof productCreate>;

export const productUpdate = z.object(
  {
    ...productShape("update"),
    ...stockGuards,
    // For a product without variants, its `stock` by the name the count has there.
    expected_stock: opt(stock.describe("expected_qty by the name of a product's own count.")),
    product_id: opt(id),
    variant_id: opt(id),
    variants: opt(
      z.object(
        {
          sync: opt(variantList(variantEntry)),
          add: opt(variantList(variantEntry)),
          update: opt(variantList(variantUpdateEntry)),
        },
        { error: "must be an object with sync, add and update arrays" },
      ),
    ),
  },
  { error: "must be a product object" },
);
export type ProductUpdate = z.output<typeof productUpdate>;

/** An item of DELETE /v1/products: the product named by its id or its own SKU. */
export const productDelete = z.object({ product_id: opt(id), sku: opt(sku) }, { error: "must be an object" });
export type ProductDelete = z.output<typeof productDelete>;

// Compiled while this module is evaluated (startup), the only time Workers allow it.
precompile(productCreate);
precompile(productUpdate);
precompile(productDelete);
