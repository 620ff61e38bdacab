import type { PRODUCT_FIELDS, VARIANT_FIELDS } from "./fields";

// The answers' key orders, beside the fields' descriptions (./fields.ts): described fields by name,
// and the entries each builder adds itself (ids, dates, categories, URLs, option values, stock
// sums...), the order's other names (its Special type). A described field missing from the order
// of a dialect that answers it is a type error ("missing"); a name that is neither is a Special
// that every builder of the answer must then give, or fail to typecheck.

type Products = typeof PRODUCT_FIELDS;
type Variants = typeof VARIANT_FIELDS;

/** The fields of `D` a dialect answers from their column: not computed; in the modelled one, those it names. */
type Plain<D, Dialect extends "own" | "modelled"> = {
  [K in keyof D]: D[K] extends { computed: true }
    ? never
    : Dialect extends "modelled"
      ? D[K] extends { modelled: string }
        ? K
        : never
      : K;
}[keyof D] &
  string;

/** `list` if it names every plain field of its dialect (`Need`), and with `Only` nothing else. */
const order =
  <Need extends string, Only extends string = string>() =>
  <const L extends readonly (Need | Only)[]>(
    list: L & ([Exclude<Need, L[number]>] extends [never] ? unknown : { missing: Exclude<Need, L[number]> }),
  ) =>
    list as L;

/** The names of order `L` that are not plain fields `D` of its dialect: what its builders add. */
type Specials<L extends readonly string[], D, Dialect extends "own" | "modelled"> = Exclude<
  L[number],
  Plain<D, Dialect>
>;

/** GET /v1/products/{id}: a product. */
export const OWN_PRODUCT = order<Plain<Products, "own">>()([
  "product_id",
  "sku",
  "title",
  "price",
  "before_price",
  "purchase_price",
  "tax_rate",
  "stock",
  "qty_location",
  "disable_minusqty",
  "visible",
  "description",
  "gtin",
  "supplier_name",
  "supplier_sku",
  "datafield_1",
  "datafield_2",
  "datafield_3",
  "seo_description",
  "seo_title",
  "brand",
  "weight",
  "images",
  "categories",
  "slug",
  "url",
  "metadata",
  "variants",
  "created_at",
  "updated_at",
]);

type OptionKey = `variant_option${1 | 2 | 3 | 4 | 5}_${"name" | "value"}`;
export const OPTION_KEYS = [1, 2, 3, 4, 5].flatMap((n) => [
  `variant_option${n}_name`,
  `variant_option${n}_value`,
]) as OptionKey[];

/** A variant of GET /v1/products/{id}. */
export const OWN_VARIANT = order<Plain<Variants, "own">>()([
  "variant_id",
  "sku",
  // variant_option1_name, variant_option1_value, ... variant_option5_value (OPTION_KEYS).
  "options",
  "price",
  "before_price",
  "purchase_price",
  "qty",
  "qty_location",
  "gtin",
  "supplier_sku",
  "weight",
  "visible",
  "images",
]);

/** The modelled dialect's product in a list; with include_details, MODELLED_DETAILS follow. */
export const MODELLED_BASE = order<never>()([
  "id",
  "sku",
  "hasVariants",
  "title",
  "visible",
  "qty",
  "stock",
  "price",
  "before_price",
  "purchase_price",
  "tax_rate",
  "weight",
  "gtin",
  "qty_location",
  "disable_minusqty",
  "supplier_name",
  "supplier_sku",
  "date_modified",
  "url",
  "headcategory_name",
  "categories",
]);

/** The detail fields (include_details=true) after MODELLED_BASE's, then the variants. */
export const MODELLED_DETAILS = order<Exclude<Plain<Products, "modelled">, (typeof MODELLED_BASE)[number]>, never>()([
  "description",
  "seo_title",
  "seo_description",
  "datafield_1",
  "datafield_2",
  "datafield_3",
  "brand",
  "images",
]);

/** A variant in the modelled dialect. */
export const MODELLED_VARIANT = order<Plain<Variants, "modelled">>()([
  "id",
  "product_id",
  "sku",
  "price",
  "before_price",
  "purchase_price",
  "qty",
  "weight",
  "gtin",
  "supplier_sku",
  "qty_location",
  "image_id",
  "images",
  "hidden",
  "preorder",
  "preselected",
  "min_purchase_quantity",
  "max_purchase_quantity",
  "disable_minusqty",
  "values",
]);

/** What the own dialect's builders add to a product's described fields, and to a variant's. */
export type OwnProductSpecial = Specials<typeof OWN_PRODUCT, Products, "own">;
export type OwnVariantSpecial = Specials<typeof OWN_VARIANT, Variants, "own">;
/** What the modelled dialect's builders add to a product's (in a list) and a variant's described fields. */
export type ModelledProductSpecial = Specials<typeof MODELLED_BASE, Products, "modelled">;
export type ModelledVariantSpecial = Specials<typeof MODELLED_VARIANT, Variants, "modelled">;
