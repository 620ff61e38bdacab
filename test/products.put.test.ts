import { describe, expect, it } from "vitest";
import { basic, call, createProduct, get, put, uid } from "./helpers";

// PUT /v1/products (docs/products.md, "Updating products"): selection, partial update, validation, array bodies.

const colours = (values: string[], extra: (v: string, i: number) => Record<string, unknown> = () => ({})) =>
  values.map((v, i) => ({ variant_option1_name: "Colour", variant_option1_value: v, ...extra(v, i) }));

async function withVariants(values = ["Red", "Blue"], body: Record<string, unknown> = {}) {
  return createProduct({
    sku: uid("P"),
    variants: { add: colours(values, () => ({ sku: uid("V"), qty: 3 })) },
    ...body,
  });
}

describe("PUT /v1/products: selection", () => {
  it("selects by product_id and changes only the given fields", async () => {
    const p = await createProduct({ sku: uid(), title: "Mug", price: 100, stock: 4, gtin: "123" });
    const r = await put("/v1/products", { product_id: p.product_id, title: "Big mug", price: "129.50" });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ success: 1, errors: [], notices: [] });
    expect(r.json.products[0]).toMatchObject({
      product_id: p.product_id,
      title: "Big mug",
      price: 129.5,
      stock: 4,
      gtin: "123",
    });
    expect((await get(`/v1/products/${p.product_id}`)).json).toMatchObject({
      title: "Big mug",
      price: 129.5,
      gtin: "123",
    });
  });

  it("selects a product by sku; the body's sku is the selector, not a new value", async () => {
    const sku = uid();
    const p = await createProduct({ sku, stock: 1 });
    const r = await put("/v1/products", { sku, stock: 9 });
    expect(r.status).toBe(200);
    expect(r.json.products[0]).toMatchObject({ product_id: p.product_id, sku, stock: 9 });
  });

  it("with product_id, sku is a new value", async () => {
    const p = await createProduct({ sku: uid() });
    const sku = uid("NEW");
    const r = await put("/v1/products", { product_id: String(p.product_id), sku });
    expect(r.status).toBe(200);
    expect(r.json.products[0].sku).toBe(sku);
    expect((await get(`/v1/products?sku=${sku}`)).json.id).toBe(String(p.product_id));
  });

  it("selects a variant by variant_id: variant fields change the variant, product fields its product", async () => {
    const p = await withVariants();
    const [red, blue] = p.variants;
    const r = await put("/v1/products", {
      variant_id: red.variant_id,
      stock: 7,
      price: 55,
      gtin: "999",
      visible: 0,
      title: "Renamed",
      disable_minusqty: "1",
    });
    expect(r.status).toBe(200);
    const out = r.json.products[0];
    expect(out).toMatchObject({ title: "Renamed", price: 100, disable_minusqty: "1", gtin: null, visible: 1 });
    expect(out.variants[0]).toMatchObject({ variant_id: red.variant_id, qty: 7, price: 55, gtin: "999", visible: 0 });
    expect(out.variants[1]).toMatchObject({ variant_id: blue.variant_id, qty: 3, price: 100, visible: 1 });
  });

  it("selects a variant by its sku, which stays the selector", async () => {
    const p = await withVariants();
    const blue = p.variants[1];
    const r = await put("/v1/products", { sku: blue.sku, stock: 12, purchase_price: 40 });
    expect(r.status).toBe(200);
    const v = r.json.products[0].variants.find((x: any) => x.variant_id === blue.variant_id);
    expect(v).toMatchObject({ sku: blue.sku, qty: 12, purchase_price: 40 });
    expect(r.json.products[0].sku).toBe(p.sku);
  });

  it("variant_id must belong to product_id when both are given", async () => {
    const a = await withVariants();
    const b = await createProduct({ sku: uid() });
    const r = await put("/v1/products", { product_id: b.product_id, variant_id: a.variants[0].variant_id, stock: 1 });
    expect(r.status).toBe(404);
    expect(r.json).toMatchObject({ success: 0, products: [] });
    expect(r.json.errors[0]).toMatch(/^variant_id: /);
  });

  it.each([
    ["unknown product_id", { product_id: 999999, title: "x" }, 404, /^product_id: product 999999 not found/],
    ["unknown variant_id", { variant_id: 999999, title: "x" }, 404, /^variant_id: variant 999999 not found/],
    ["unknown sku", { sku: "NO-SUCH-SKU", title: "x" }, 404, /^sku: no product or variant has SKU NO-SUCH-SKU/],
    ["no selector", { title: "x" }, 400, /^product_id: give variant_id, product_id or sku/],
  ])("%s", async (_name, body, status, error) => {
    const r = await put("/v1/products", body);
    expect(r.status).toBe(status);
    expect(r.json).toMatchObject({ success: 0, products: [], notices: [] });
    expect(r.json.errors[0]).toMatch(error);
  });
});

describe("PUT /v1/products: partial update", () => {
  it("null clears optional fields; absent fields keep their value", async () => {
    const p = await createProduct({
      sku: uid(),
      before_price: 200,
      description: "old",
      metadata: { a: 1 },
      images: [{ url: "https://x/1.jpg" }],
      weight: 5,
    });
    const r = await put("/v1/products", {
      product_id: p.product_id,
      before_price: null,
      description: null,
      metadata: null,
      images: null,
    });
    expect(r.status).toBe(200);
    expect(r.json.products[0]).toMatchObject({
      before_price: null,
      description: null,
      metadata: null,
      images: [],
      weight: 5,
      sku: p.sku,
    });
  });

  it("clears the sku with null, freeing it for another product", async () => {
    const sku = uid();
    const p = await createProduct({ sku });
    expect((await put("/v1/products", { product_id: p.product_id, sku: null })).json.products[0].sku).toBeNull();
    const q = await createProduct({ sku });
    expect(q.sku).toBe(sku);
  });

  it("stores images given as an object keyed by position as the ordered list", async () => {
    const p = await createProduct({ sku: uid() });
    const r = await put("/v1/products", {
      product_id: p.product_id,
      images: { "2": { url: "https://x/b.jpg" }, "1": { url: "https://x/a.jpg", alttext: "A" } },
      metadata: { channel: "x" },
    });
    expect(r.json.products[0].images).toEqual([{ url: "https://x/a.jpg", alttext: "A" }, { url: "https://x/b.jpg" }]);
    expect(r.json.products[0].metadata).toEqual({ channel: "x" });
  });

  it.each([["1"], [1], [true], [" 1 "]])("disable_minusqty %j turns the flag on", async (flag) => {
    const p = await createProduct({ sku: uid() });
    const r = await put("/v1/products", { product_id: p.product_id, disable_minusqty: flag });
    expect(r.json.products[0].disable_minusqty).toBe("1");
    const off = await put("/v1/products", { product_id: p.product_id, disable_minusqty: false });
    expect(off.json.products[0].disable_minusqty).toBe("0");
  });

  it("stock may go negative while disable_minusqty is off", async () => {
    const p = await createProduct({ sku: uid(), stock: 1 });
    const r = await put("/v1/products", { product_id: p.product_id, stock: -3 });
    expect(r.status).toBe(200);
    expect(r.json.products[0].stock).toBe(-3);
  });

  it("turning disable_minusqty on while stock is negative is 409 naming the SKUs", async () => {
    const p = await withVariants();
    const [red, blue] = p.variants;
    await put("/v1/products", { variant_id: red.variant_id, stock: -2 });
    await put("/v1/products", { variant_id: blue.variant_id, stock: -1 });
    const r = await put("/v1/products", { product_id: p.product_id, disable_minusqty: 1 });
    expect(r.status).toBe(409);
    expect(r.json.errors).toEqual([
      `disable_minusqty: stock is negative for ${red.sku}, ${blue.sku}; set their stock first`,
    ]);
    expect((await get(`/v1/products/${p.product_id}`)).json.disable_minusqty).toBe("0");
  });

  it.each([
    ["an adjust", { adjust: -1 }],
    ["a stock", { stock: -1 }],
  ])(
    "with the stock an item before it left negative (by %s), turning the flag on is refused as it would be alone",
    async (_, first) => {
      const sku = uid();
      const p = await createProduct({ sku, stock: 0 });
      const r = await put("/v1/products", [
        { product_id: p.product_id, ...first },
        { product_id: p.product_id, disable_minusqty: 1, variants: { add: [] } },
      ]);
      expect(r.json.success).toBe(1);
      expect(r.json.errors).toEqual([`[1].disable_minusqty: stock is negative for ${sku}; set their stock first`]);
      const after = (await get(`/v1/products/${p.product_id}`)).json;
      expect([after.stock, after.disable_minusqty]).toEqual([-1, "0"]);
    },
  );

  it("turning the flag on and fixing the stock in one request works, and the floor then holds", async () => {
    const p = await withVariants();
    const [red] = p.variants;
    await put("/v1/products", { variant_id: red.variant_id, stock: -2 });
    const r = await put("/v1/products", {
      product_id: p.product_id,
      disable_minusqty: "1",
      variants: { update: [{ variant_id: red.variant_id, qty: 0 }] },
    });
    expect(r.status).toBe(200);
    const again = await put("/v1/products", { variant_id: red.variant_id, stock: -1 });
    expect(again.status).toBe(400);
    expect(again.json.errors).toEqual(["stock: must not be negative while disable_minusqty is on"]);
  });

  it("turning the flag off lets a variant's qty go negative in the same request", async () => {
    const p = await withVariants(["Red", "Blue"], { disable_minusqty: 1 });
    const red = p.variants[0];
    const r = await put("/v1/products", { variant_id: red.variant_id, disable_minusqty: 0, stock: -4 });
    expect(r.status).toBe(200);
    expect(r.json.products[0].variants[0].qty).toBe(-4);
  });

  it("stock on a product that has variants is 400", async () => {
    const p = await withVariants();
    const r = await put("/v1/products", { product_id: p.product_id, stock: 5, title: "changed" });
    expect(r.status).toBe(400);
    expect(r.json.errors[0]).toMatch(/^stock: the product has variants/);
    expect((await get(`/v1/products/${p.product_id}`)).json.title).toBe(p.title);
  });

  it("a product SKU of another product is 409", async () => {
    const a = await createProduct({ sku: uid() });
    const b = await createProduct({ sku: uid() });
    const r = await put("/v1/products", { product_id: b.product_id, sku: a.sku });
    expect(r.status).toBe(409);
    expect(r.json.errors).toEqual([`sku: SKU ${a.sku} is already used by product ${a.product_id}`]);
  });
});

describe("PUT /v1/products: validation", () => {
  it.each([
    ["price with 3 decimals", { price: "1.005" }, "price: must have at most 2 decimals"],
    ["negative price", { price: -1 }, "price: must not be negative"],
    ["price as a word", { price: "cheap" }, "price: must be an amount of money"],
    ["stock not whole", { stock: 1.5 }, "stock: must be a whole number"],
    ["tax_rate above 100", { tax_rate: 101 }, "tax_rate: must be a whole number from 0 to 100"],
    ["visible 2", { visible: 2 }, "visible: must be 1, 0, true or false"],
    ['disable_minusqty "true"', { disable_minusqty: "true" }, "disable_minusqty: must be 1, 0, true or false"],
    ["sku a fraction", { sku: 12.5 }, "sku: must be a string"],
    ["title a number", { title: 5 }, "title: must be a string"],
    ["an image not an https URL", { images: ["x"] }, "images[0].url: must be an https URL"],
    ["metadata an array", { metadata: [1] }, "metadata: must be a JSON object"],
    ["weight negative", { weight: -1 }, "weight: must be a number from 0"],
    ["variants not an object", { variants: [] }, "variants: must be an object"],
    ["sync entry qty a word", { variants: { sync: [{ qty: "x" }] } }, "variants.sync[0].qty: must be a whole number"],
    [
      "update entry without variant_id",
      { variants: { update: [{ qty: 1 }] } },
      "variants.update[0].variant_id: is required",
    ],
  ])("%s is 400", async (_name, body, error) => {
    const p = await createProduct({ sku: uid(), title: "Kept" });
    const r = await put("/v1/products", { product_id: p.product_id, ...body });
    expect(r.status).toBe(400);
    expect(r.json.success).toBe(0);
    expect(r.json.errors.join("\n")).toContain(error);
    expect((await get(`/v1/products/${p.product_id}`)).json).toMatchObject({ title: "Kept", price: 100 });
  });

  it("negative stock with disable_minusqty on is 400 naming the field", async () => {
    const p = await createProduct({ sku: uid(), disable_minusqty: "1", stock: 2 });
    const r = await put("/v1/products", { product_id: p.product_id, stock: -1 });
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual(["stock: must not be negative while disable_minusqty is on"]);
    expect((await get(`/v1/products/${p.product_id}`)).json.stock).toBe(2);
  });

  it("reports unknown fields as notices and still updates", async () => {
    const p = await createProduct({ sku: uid() });
    const r = await put("/v1/products", {
      product_id: p.product_id,
      titel: "typo",
      title: "ok",
      variants: { synk: [] },
    });
    expect(r.status).toBe(200);
    expect(r.json.notices).toEqual(["ignored unknown field titel", "ignored unknown field variants.synk"]);
    expect(r.json.products[0].title).toBe("ok");
  });

  it("needs credentials", async () => {
    const p = await createProduct({ sku: uid() });
    const r = await put("/v1/products", { product_id: p.product_id, title: "x" }, { headers: { authorization: "" } });
    expect(r.status).toBe(401);
    expect(r.json).toMatchObject({ code: 401 });
    const wrong = await put(
      "/v1/products",
      { product_id: p.product_id },
      { headers: { authorization: basic("nope") } },
    );
    expect(wrong.status).toBe(401);
  });

  it("refuses bodies that are not a product or an array of them", async () => {
    expect((await put("/v1/products", "x")).status).toBe(400);
    expect((await put("/v1/products", [])).status).toBe(400);
    const big = Array.from({ length: 101 }, () => ({ product_id: 1 }));
    expect((await put("/v1/products", big)).status).toBe(413);
    const raw = await call("PUT", "/v1/products", { raw: "{", headers: { "content-type": "application/json" } });
    expect(raw.status).toBe(400);
    expect(raw.json).toMatchObject({ code: 400 });
  });
});

describe("PUT /v1/products: array bodies", () => {
  it("handles each item on its own: one good, one bad", async () => {
    const a = await createProduct({ sku: uid(), title: "A" });
    const b = await createProduct({ sku: uid(), title: "B" });
    const r = await put("/v1/products", [
      { product_id: a.product_id, title: "A2" },
      { product_id: b.product_id, title: "B2", price: "1.234" },
    ]);
    expect(r.status).toBe(200);
    expect(r.json.success).toBe(1);
    expect(r.json.errors).toEqual(["[1].price: must have at most 2 decimals"]);
    expect(r.json.products.map((p: any) => p.title)).toEqual(["A2"]);
    expect((await get(`/v1/products/${b.product_id}`)).json.title).toBe("B");
  });

  it("answers the status of the first failure when none succeeds", async () => {
    const a = await createProduct({ sku: uid() });
    const r = await put("/v1/products", [{ product_id: 999998 }, { product_id: a.product_id, price: -1 }]);
    expect(r.status).toBe(404);
    expect(r.json.errors).toEqual(["[0].product_id: product 999998 not found", "[1].price: must not be negative"]);
  });

  it("applies items naming the same product in order", async () => {
    const p = await withVariants();
    const [red, blue] = p.variants;
    const r = await put("/v1/products", [
      { variant_id: red.variant_id, stock: 10 },
      { variant_id: blue.variant_id, stock: 20 },
      { product_id: p.product_id, title: "Both" },
    ]);
    expect(r.status).toBe(200);
    expect(r.json.success).toBe(3);
    const now = (await get(`/v1/products/${p.product_id}`)).json;
    expect(now).toMatchObject({ title: "Both", stock: 30 });
    // The product once, in its final state.
    expect(r.json.products).toHaveLength(1);
    expect(r.json.products[0]).toEqual(now);
  });

  it("two items claiming one new SKU: the second is 409", async () => {
    const a = await createProduct({ sku: uid() });
    const b = await createProduct({ sku: uid() });
    const sku = uid("SHARED");
    const r = await put("/v1/products", [
      { product_id: a.product_id, sku },
      { product_id: b.product_id, sku },
    ]);
    expect(r.json.success).toBe(1);
    expect(r.json.errors).toEqual([`[1].sku: SKU ${sku} is also claimed by item [0] of this request`]);
  });
});
