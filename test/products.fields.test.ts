import { describe, expect, it } from "vitest";
import { shownTo } from "../src/keys/public";
import { modelledProduct, modelledProductDetails, modelledVariant } from "../src/openapi/modelled";
import { productOut, variantOut } from "../src/openapi/responses";
import { type Field, PRODUCT_FIELDS, TEXT_FIELDS, VARIANT_FIELDS } from "../src/products/fields";
import { variantPresenters } from "../src/products/present";
import {
  productCreate,
  productUpdate,
  type VariantEntry,
  variantEntry,
  variantUpdateEntry,
} from "../src/products/schema";
import { entryBytes, variantBytes } from "../src/products/variants";
import { createProduct, get, post, put, uid } from "./helpers";

// One description per field (src/products/fields.ts): every place that lists fields is derived
// from it. The types already refuse a described field left out of an answer's key order; these
// tests hold what the types cannot: that each derived place really has each field, that the
// answers keep their key order (clients and the manual's examples read them in it), and one real
// field (brand) end to end.

const PRODUCT_KEYS = [
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
];
const OPTION_KEYS = [1, 2, 3, 4, 5].flatMap((n) => [`variant_option${n}_name`, `variant_option${n}_value`]);
const VARIANT_KEYS = [
  "variant_id",
  "sku",
  ...OPTION_KEYS,
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
];
const MODELLED_KEYS = [
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
];
const MODELLED_DETAIL_KEYS = [
  ...MODELLED_KEYS,
  "description",
  "seo_title",
  "seo_description",
  "datafield_1",
  "datafield_2",
  "datafield_3",
  "brand",
  "images",
  "variants",
  "product_package_products",
];
const MODELLED_VARIANT_KEYS = [
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
];

const products = Object.entries(PRODUCT_FIELDS) as [string, Field][];
const variants = Object.entries(VARIANT_FIELDS) as [string, Field][];

describe("every described field is in every derived place", () => {
  it.each(products)("product field %s", (name, f) => {
    expect(productCreate.shape).toHaveProperty(name);
    expect(productUpdate.shape).toHaveProperty(name);
    if (!f.computed) expect(productOut.shape).toHaveProperty(name);
    if (f.modelled) expect({ ...modelledProduct.shape, ...modelledProductDetails.shape }).toHaveProperty(name);
    if (f.kind.text && !f.kind.json) expect(TEXT_FIELDS.map(([n]) => n)).toContain(name);
    const view = { stock: false, datafields: false };
    expect(shownTo(view, name)).toBe(f.shown === undefined);
  });

  it.each(variants)("variant field %s", (name, f) => {
    expect(variantEntry.shape).toHaveProperty(name);
    expect(variantUpdateEntry.shape).toHaveProperty(name);
    expect(variantOut.shape).toHaveProperty(name);
    if (f.modelled) expect(modelledVariant.shape).toHaveProperty(name);
  });

  it.each(variants.filter(([, f]) => f.kind.text && !f.kind.json))(
    "variant text %s counts in the 2 MiB estimates",
    (name) => {
      const none = { values: [], images: "[]" };
      expect(variantBytes({ ...none, [name]: "abcd" })).toBe(variantBytes(none) + 4);
      expect(entryBytes({ [name]: "abcd" } as unknown as VariantEntry)).toBe(entryBytes({} as VariantEntry) + 4);
    },
  );

  it("the variant presenter is the literal made at startup, and the key-by-key fallback answers the same", () => {
    const { literal, byKey, gets } = variantPresenters;
    expect(literal).toBeDefined();
    const rows = [
      { id: 7, product_id: 1, sku: "A", option1_value: "S", option2_value: "Red", option3_value: "" },
      { id: 8, product_id: 1, sku: null, option1_value: "M", option2_value: "", option3_value: "" },
    ].map((r) => ({
      ...r,
      option4_value: "",
      option5_value: "",
      price: 1995,
      before_price: null,
      purchase_price: 1000,
      qty: -2,
      qty_location: "B2",
      gtin: null,
      supplier_sku: "X",
      weight: 1.5,
      visible: 0,
      images: '[{"url":"https://i.example/a.png"}]',
    }));
    const names = ["Size", "Colour", null, null, null];
    const made = literal?.(rows, names, gets);
    expect(JSON.stringify(made)).toBe(JSON.stringify(byKey(rows, names, gets)));
    expect(Object.keys(made?.[0] ?? {})).toEqual(VARIANT_KEYS);
  });

  it("the response schemas keep the answers' key order", () => {
    expect(Object.keys(productOut.shape)).toEqual(PRODUCT_KEYS);
    expect(Object.keys(variantOut.shape)).toEqual(VARIANT_KEYS);
    expect(Object.keys(modelledProduct.shape)).toEqual(MODELLED_KEYS);
    expect(Object.keys(modelledProductDetails.shape)).toEqual(MODELLED_DETAIL_KEYS);
    expect(Object.keys(modelledVariant.shape)).toEqual(MODELLED_VARIANT_KEYS);
  });
});

/** A product with a variant and every described text set, and its SKU. */
async function full(extra: Record<string, unknown> = {}) {
  const sku = uid("FIELDS");
  const p = await createProduct({
    sku,
    brand: "Acme",
    variants: { add: [{ sku: `${sku}-S`, variant_option1_name: "Size", variant_option1_value: "S", qty: 2 }] },
    ...extra,
  });
  return { p, sku };
}

describe("answers keep their key order", () => {
  it("GET /v1/products/{id} (built by SQLite) and a PUT's answer (the presenter)", async () => {
    const { p } = await full();
    expect(Object.keys(p)).toEqual(PRODUCT_KEYS);
    const got = (await get(`/v1/products/${p.product_id}`)).json;
    expect(Object.keys(got)).toEqual(PRODUCT_KEYS);
    expect(Object.keys(got.variants[0])).toEqual(VARIANT_KEYS);
    const r = await put("/v1/products", { product_id: p.product_id, title: "Renamed" });
    expect(r.status).toBe(200);
    expect(Object.keys(r.json.products[0])).toEqual(PRODUCT_KEYS);
    expect(Object.keys(r.json.products[0].variants[0])).toEqual(VARIANT_KEYS);
  });

  it("the modelled dialect, with and without details", async () => {
    const { p } = await full();
    const plain = (await get(`/v1/products?product_id=${p.product_id}`)).json;
    expect(Object.keys(plain)).toEqual(MODELLED_KEYS);
    const details = (await get(`/v1/products?product_id=${p.product_id}&include_details=true`)).json;
    expect(Object.keys(details)).toEqual(MODELLED_DETAIL_KEYS);
    expect(Object.keys(details.variants[0])).toEqual(MODELLED_VARIANT_KEYS);
  });
});

describe("brand", () => {
  it("is stored on create and answered in both dialects", async () => {
    const { p } = await full({ brand: "  Acme & Co  " });
    expect(p.brand).toBe("  Acme & Co  ");
    expect((await get(`/v1/products/${p.product_id}`)).json.brand).toBe("  Acme & Co  ");
    const details = (await get(`/v1/products?product_id=${p.product_id}&include_details=true`)).json;
    expect(details.brand).toBe("  Acme & Co  ");
    // A detail field: a list without include_details leaves it out.
    expect((await get(`/v1/products?product_id=${p.product_id}`)).json).not.toHaveProperty("brand");
  });

  it('is null when not given, "" in the modelled dialect', async () => {
    const p = await createProduct({ sku: uid("NOBRAND") });
    expect(p.brand).toBeNull();
    expect((await get(`/v1/products?product_id=${p.product_id}&include_details=true`)).json.brand).toBe("");
  });

  it("is set and cleared by an update; a variant selection leaves it to the product", async () => {
    const { p, sku } = await full();
    let r = await put("/v1/products", { product_id: p.product_id, brand: "Globex" });
    expect(r.status).toBe(200);
    expect(r.json.products[0].brand).toBe("Globex");
    r = await put("/v1/products", { sku: `${sku}-S`, brand: "Initech" });
    expect(r.status).toBe(200);
    expect(r.json.products[0].brand).toBe("Initech");
    r = await put("/v1/products", { product_id: p.product_id, brand: null });
    expect(r.status).toBe(200);
    expect(r.json.products[0].brand).toBeNull();
    expect((await get(`/v1/products/${p.product_id}`)).json.brand).toBeNull();
    expect((await get(`/v1/products?product_id=${p.product_id}&include_details=true`)).json.brand).toBe("");
  });

  it("is refused past 255 characters, naming the field", async () => {
    const r = await post("/v1/products", { title: "Long brand", price: 1, brand: "b".repeat(256) });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.json)).toContain("brand: must be at most 255 characters");
  });

  it("is shown to storefronts", async () => {
    const k = await post("/v1/keys", { name: uid("pk"), type: "publishable", allowed_origins: ["https://s.example"] });
    expect(k.status).toBe(201);
    const { p } = await full();
    const as = { headers: { authorization: "", "x-publishable-key": k.json.key as string } };
    expect((await get(`/v1/products/${p.product_id}`, as)).json.brand).toBe("Acme");
    const details = await get(`/v1/products?product_id=${p.product_id}&include_details=true`, as);
    expect(details.json.brand).toBe("Acme");
  });
});
