import { z } from "zod";
import {
  clearable,
  flag,
  id,
  identifier,
  int,
  metadata,
  money,
  nonNegative,
  opt,
  req,
  sku,
  str,
} from "../platform/fields";
import { precompile } from "../platform/validate";
import { categoryName, categoryPaths, slug } from "./categories";

// Wire schemas of interface.md 2.7 (product) and 2.8 (variant entry), field names as the API
// this is modelled on sends them. `create` mode is POST /v1/products; `update` mode is PUT, where
// every field is optional and `null` clears an optional one (docs/products.md, "Updating products").

/**
 * Variants per product (docs/products.md, "Limits"): 2,048 with up to five options, as the
 * modelled API allows. What keeps its largest writes inside the free plan's 10 ms of CPU is how
 * they are done (a sync planned in SQL, src/products/update/variants-sql.ts), measured in workerd in
 * bench/README.md.
 */
export const MAX_VARIANTS = 2048;
/** Images per product and per variant (docs/products.md, "Updating products"). */
export const MAX_IMAGES = 50;
export const OPTION_SLOTS = [1, 2, 3, 4, 5] as const;

/** Whether `s` is an absolute https URL with a host (images are shown to shoppers' browsers). */
function isHttpsUrl(s: string) {
  try {
    const u = new URL(s);
    return u.protocol === "https:" && u.hostname !== "";
  } catch {
    return false;
  }
}
const imageUrl = str(2048).refine(isHttpsUrl, { error: "must be an https URL" });

// An image: {url, alttext}, the modelled API's {image, alttext} (as its reads show it), or a URL.
export const image = z.preprocess(
  (v) => (typeof v === "string" ? { url: v } : v),
  z
    .object(
      { url: opt(imageUrl), image: opt(imageUrl), alttext: opt(str(255)) },
      { error: "must be an object with url" },
    )
    .refine((o) => o.url !== undefined || o.image !== undefined, { path: ["url"], error: "is required" })
    .transform((o): Image => {
      const url = (o.url ?? o.image) as string;
      return o.alttext === undefined ? { url } : { url, alttext: o.alttext };
    }),
);
export type Image = { url: string; alttext?: string };

/**
 * images: an ordered array of {url, alttext} or of URLs, or an object keyed by position
 * ({"1": {"image": ...}}), stored as the ordered list (docs/products.md, "Categories, URLs and images").
 */
export const images = z
  .union([z.array(image), z.record(z.string().regex(/^\d+$/), image)], {
    error: "must be an array of {url, alttext} or of URLs, or an object keyed by position",
  })
  .transform((v): Image[] =>
    Array.isArray(v)
      ? v
      : Object.entries(v)
          .sort(([a], [b]) => Number(a) - Number(b))
          .map(([, img]) => img),
  )
  .refine((list) => list.length <= MAX_IMAGES, { error: `must have at most ${MAX_IMAGES} images` });

const STOCK_RANGE = 1_000_000_000;
export const stock = int(-STOCK_RANGE, STOCK_RANGE, `must be a whole number from -${STOCK_RANGE} to ${STOCK_RANGE}`);
// A flag like the others (docs/api.md, "Conventions": 1/0, "1"/"0", true/false), stored and answered as 1 or 0.
export const visible = flag;

function optionFields(make: <T extends z.ZodType>(s: T) => z.ZodType) {
  const shape: Record<string, z.ZodType> = {};
  for (const n of OPTION_SLOTS) {
    shape[`variant_option${n}_name`] = make(str(255));
    shape[`variant_option${n}_value`] = make(str(255));
  }
  return shape as Record<`variant_option${1 | 2 | 3 | 4 | 5}_${"name" | "value"}`, z.ZodType<string | undefined>>;
}

/** Variant fields; `update` entries also carry variant_id. */
function variantShape(mode: "create" | "update") {
  const o = mode === "create" ? opt : clearable;
  return {
    ...optionFields(opt),
    sku: o(sku),
    price: opt(money),
    purchase_price: o(money),
    before_price: o(money),
    qty: opt(stock),
    qty_location: o(str(255)),
    gtin: o(identifier(255)),
    supplier_sku: o(identifier(255)),
    weight: o(nonNegative),
    visible: opt(visible),
    images: o(images),
  };
}

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

function productShape(mode: "create" | "update") {
  const o = mode === "create" ? opt : clearable;
  return {
    sku: o(sku),
    title: mode === "create" ? req(str(255)) : opt(str(255)),
    price: mode === "create" ? req(money) : opt(money),
    before_price: o(money),
    purchase_price: o(money),
    tax_rate: opt(int(0, 100)),
    stock: opt(stock),
    qty_location: o(str(255)),
    disable_minusqty: opt(flag),
    visible: opt(visible),
    description: o(str(100_000)),
    gtin: o(identifier(255)),
    supplier_name: o(str(255)),
    supplier_sku: o(identifier(255)),
    datafield_1: o(str(255)),
    datafield_2: o(str(255)),
    datafield_3: o(str(255)),
    seo_description: o(str(255)),
    seo_title: o(str(255)),
    weight: o(nonNegative),
    images: o(images),
    metadata: o(metadata),
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
