import { type PublicView, shownTo } from "../src/keys/public";
import { dateText, moneyText } from "../src/platform/query";

// The reference presenters of products in the modelled dialect (docs/modelled-reads.md, "Modelled
// reads"), in JavaScript over D1's row objects: what src/products/modelled-json.ts builds in SQL must
// equal what these make (test/products.list.rows.test.ts). The modelled API's field names and JSON types. Ids, prices, quantities and flags are strings there; a variant's
// disable_minusqty is a boolean and a product's stock a number. Missing text is "" rather than
// null, so that a client that reads every field as a string never meets a null.

export type Row = Record<string, unknown>;

const s = (v: unknown) => (v === null || v === undefined ? "" : String(v));
const flagText = (v: unknown) => (v === 1 ? "1" : "0");

/** A product's price: "899" when whole, else two decimals ("199.50"); "" when there is none. */
function priceText(cents: unknown): string {
  if (typeof cents !== "number") return "";
  return cents % 100 === 0 ? String(cents / 100) : moneyText(cents);
}
const maybeMoney = (cents: unknown) => (typeof cents === "number" ? moneyText(cents) : "");

type StoredImage = { url: string; alttext?: string };

/** Stored images to the modelled object keyed by position from "1": {"1": {image, alttext}}. */
function imagesObject(json: unknown) {
  const out: Record<string, { image: string; alttext: string }> = {};
  if (typeof json !== "string" || json === "[]") return out;
  (JSON.parse(json) as StoredImage[]).forEach((img, i) => {
    out[String(i + 1)] = { image: img.url, alttext: img.alttext ?? "" };
  });
  return out;
}

/** Stored category paths (names) as the modelled lists of {"category": name}, head category first. */
const categoryPaths = (json: unknown) =>
  (typeof json === "string" ? (JSON.parse(json) as string[][]) : []).map((path) =>
    path.map((category) => ({ category })),
  );

/** The fields of every product in a list (without include_details). No STORE_URL in tests: url "". */
export function modelledProduct(p: Row) {
  const hasVariants = Number(p.variant_count) > 0;
  // A product with variants has no stock of its own: its stock is the sum of theirs.
  const stock = hasVariants ? Number(p.variant_qty) : (p.stock as number);
  const categories = categoryPaths(p.categories);
  return {
    id: String(p.id),
    sku: s(p.sku),
    hasVariants: hasVariants ? "1" : "0",
    title: s(p.title),
    visible: flagText(p.visible),
    qty: String(stock),
    stock,
    price: priceText(p.price),
    before_price: priceText(p.before_price),
    purchase_price: priceText(p.purchase_price),
    tax_rate: s(p.tax_rate),
    weight: p.weight === null ? "0" : s(p.weight),
    gtin: s(p.gtin),
    qty_location: s(p.qty_location),
    disable_minusqty: flagText(p.disable_minusqty),
    supplier_name: s(p.supplier_name),
    supplier_sku: s(p.supplier_sku),
    date_modified: dateText(p.updated_at as number),
    url: "",
    headcategory_name: categories[0]?.[0]?.category ?? "",
    categories,
  };
}

/** One variant (include_details). */
function modelledVariant(v: Row, names: string[]) {
  const values: { name: string; val: string }[] = [];
  for (let i = 0; i < names.length; i++) values.push({ name: names[i], val: s(v[`option${i + 1}_value`]) });
  return {
    id: String(v.id),
    product_id: String(v.product_id),
    sku: s(v.sku),
    price: moneyText(v.price as number),
    before_price: maybeMoney(v.before_price),
    purchase_price: maybeMoney(v.purchase_price),
    qty: String(v.qty),
    weight: v.weight === null ? "0" : s(v.weight),
    gtin: s(v.gtin),
    supplier_sku: s(v.supplier_sku),
    qty_location: s(v.qty_location),
    image_id: "",
    images: imagesObject(v.images),
    hidden: v.visible === 1 ? "0" : "1",
    preorder: "0",
    preselected: "0",
    min_purchase_quantity: "",
    max_purchase_quantity: "",
    disable_minusqty: v.no_minus === 1,
    values,
  };
}

/** A product with the detail fields (include_details=true): the list's fields, then these. */
export function modelledProductDetails(p: Row, vs: Row[]) {
  const names: string[] = p.option_names === "[]" ? [] : JSON.parse(p.option_names as string);
  return {
    ...modelledProduct(p),
    description: s(p.description),
    seo_title: s(p.seo_title),
    seo_description: s(p.seo_description),
    datafield_1: s(p.datafield_1),
    datafield_2: s(p.datafield_2),
    datafield_3: s(p.datafield_3),
    brand: s(p.brand),
    images: imagesObject(p.images),
    variants: vs.map((v) => modelledVariant(v, names)),
    // Bundles do not exist here: no product has bundle content.
    product_package_products: [] as never[],
  };
}

export type ModelledProduct = ReturnType<typeof modelledProduct> | ReturnType<typeof modelledProductDetails>;

/** Hidden: a product with visible "0"/0, or a variant with hidden "1" or visible 0. */
export const isHidden = (p: Row) => p.visible === 0 || p.visible === "0" || p.hidden === "1";

const stockOf = (p: Row): number => (typeof p.stock === "number" ? p.stock : Number(p.qty ?? 0));

/**
 * One presented product or variant as a publishable key sees it (docs/keys.md, "Publishable
 * keys"): its public fields only, hidden variants gone, exact stock as `availability` unless the
 * key has the stock scope. The reference every storefront answer SQLite builds is compared with.
 */
export function publicFields(p: Row, view: PublicView): Row {
  const out: Row = {};
  // A product with variants has the stock of the variants the key sees.
  const shownVariants = Array.isArray(p.variants) ? (p.variants as Row[]).filter((x) => !isHidden(x)) : undefined;
  const counted =
    shownVariants && (p.variants as Row[]).length
      ? { ...p, stock: shownVariants.reduce((n, x) => n + Number(x.qty), 0) }
      : p;
  for (const [k, v] of Object.entries(counted)) {
    if (!shownTo(view, k)) continue;
    if (k === "variants" && shownVariants) out[k] = shownVariants.map((x) => publicFields(x, view));
    else if (k === "qty" && counted !== p) out[k] = String(counted.stock);
    else out[k] = v;
  }
  if (!view.stock && (p.stock !== undefined || p.qty !== undefined)) {
    out.availability = stockOf(counted) > 0 ? "in_stock" : "out_of_stock";
  }
  return out;
}

/** A products answer as a publishable key sees it: hidden products and variants gone, public fields only. */
export function publicProducts<T>(body: T, view: PublicView): T {
  if (Array.isArray(body)) return body.filter((p) => !isHidden(p)).map((p) => publicFields(p, view)) as T;
  return publicFields(body as Record<string, unknown>, view) as T;
}
