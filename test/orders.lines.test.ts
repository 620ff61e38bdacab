import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { taxByRate } from "../src/orders/totals";
import { createProduct, get, post, uid } from "./helpers";

// Line resolution, merging, products_add/products_remove, discount and totals (docs/orders.md, "Orders").

async function shirt(qty = 10) {
  const skuM = uid("TEE-M");
  const skuL = uid("TEE-L");
  const sku = uid("TEE");
  const p = await createProduct({
    sku,
    title: "T-shirt",
    price: 200,
    tax_rate: 25,
    variants: {
      add: [
        { variant_option1_name: "Size", variant_option1_value: "M", sku: skuM, price: 200, qty },
        { variant_option1_name: "Size", variant_option1_value: "L", sku: skuL, price: 220, qty },
      ],
    },
  });
  return { p, sku, skuM, skuL, m: p.variants[0].variant_id as number, l: p.variants[1].variant_id as number };
}

async function mug(price = 100, taxRate = 25) {
  const sku = uid("MUG");
  const p = await createProduct({ sku, title: "Mug", price, stock: 100, tax_rate: taxRate });
  return { p, sku, id: p.product_id as number };
}

const order = (extra: Record<string, unknown>) => ({ order_id: "create", ...extra });
const one = async (o: Record<string, unknown>) => (await post("/v1/orders", [order(o)])).json.results.create_1;
const lines = async (id: number) => (await get(`/v1/orders/${id}`)).json.products;

describe("line resolution", () => {
  it("finds a line by variant_id, by variant SKU and by product_id, using catalog prices", async () => {
    const t = await shirt();
    const m = await mug(80);
    const r = await one({
      products: [
        { variant_id: t.m, qty: 1 },
        { sku: t.skuL, qty: 1 },
        { product_id: m.id, qty: 2 },
      ],
    });
    expect(r).toMatchObject({ success: true, subtotal: 580 });
    expect(await lines(r.order_id)).toMatchObject([
      { product_id: t.p.product_id, variant_id: t.m, sku: t.skuM, price: 200, options: [{ name: "Size", value: "M" }] },
      { product_id: t.p.product_id, variant_id: t.l, sku: t.skuL, price: 220, options: [{ name: "Size", value: "L" }] },
      { product_id: m.id, variant_id: null, sku: m.sku, price: 80, qty: 2, title: "Mug", tax_rate: 25 },
    ]);
  });

  it("accepts identifiers that agree, as numbers or numeric strings", async () => {
    const t = await shirt();
    const r = await one({
      products: [
        { variant_id: String(t.m), product_id: String(t.p.product_id), sku: t.skuM, qty: 1 },
        { variant_id: t.l, sku: t.sku, qty: 1 },
        { sku: t.skuL, product_id: t.p.product_id, qty: 1 },
      ],
    });
    expect(r.success).toBe(true);
  });

  it.each([
    [
      "a variant_id of another product",
      (t: any, m: any) => ({ variant_id: t.m, product_id: m.id }),
      "products[0].product_id: variant",
    ],
    ["a sku that is not the variant's", (t: any, m: any) => ({ variant_id: t.m, sku: m.sku }), "products[0].sku:"],
    [
      "a sku of another product",
      (t: any, m: any) => ({ sku: t.skuM, product_id: m.id }),
      "products[0].product_id: SKU",
    ],
    ["a product that has variants, by id", (t: any) => ({ product_id: t.p.product_id }), "products[0]: product"],
    ["a product that has variants, by sku", (t: any) => ({ sku: t.sku }), "has variants"],
  ])("fails %s, naming the line", async (_, line, error) => {
    const t = await shirt();
    const m = await mug();
    const r = await one({ products: [{ ...line(t, m), qty: 1 }] });
    expect(r.success).toBe(false);
    expect(r.errors[0]).toContain(error);
  });

  it("merges lines of one variant with equal unit prices, keeps different prices apart", async () => {
    const t = await shirt();
    const r = await one({
      products: [
        { variant_id: t.m, qty: 1 },
        { sku: t.skuM, qty: 2 },
        { variant_id: t.m, qty: 1, price: 150 },
        { variant_id: t.m, qty: 1, price: "200.00" },
      ],
    });
    expect(r).toMatchObject({ success: true, subtotal: 950 });
    expect(await lines(r.order_id)).toMatchObject([
      { variant_id: t.m, qty: 4, price: 200 },
      { variant_id: t.m, qty: 1, price: 150 },
    ]);
  });

  it("fails when merged lines exceed 100000 of one item", async () => {
    const m = await mug();
    const r = await one({
      products: [
        { sku: m.sku, qty: 60000 },
        { sku: m.sku, qty: 50000 },
      ],
    });
    expect(r.errors[0]).toContain("products[1].qty: together with products[0]");
  });
});

describe("products_add and products_remove", () => {
  it("adds after products (qty 1 by default, catalog price), then removes matching lines", async () => {
    const t = await shirt();
    const m = await mug(80);
    const r = await one({
      products: [{ variant_id: t.m, qty: 1 }],
      products_add: [
        { sku: m.sku, variant_id: null },
        { product_id: String(t.p.product_id), variant_id: String(t.l), qty: 3 },
      ],
      products_remove: [{ sku: t.skuM }],
    });
    expect(r).toMatchObject({ success: true, subtotal: 740 });
    expect(await lines(r.order_id)).toMatchObject([
      { sku: m.sku, qty: 1, price: 80 },
      { variant_id: t.l, qty: 3, price: 220 },
    ]);
  });

  it('removes lines without variant by variant_id null or "NULL (no variant)", keeps variant lines', async () => {
    const t = await shirt();
    const a = await mug();
    const b = await mug();
    const r = await one({
      products: [
        { sku: a.sku, qty: 1 },
        { sku: b.sku, qty: 1 },
        { variant_id: t.m, qty: 1 },
      ],
      products_remove: [
        { product_id: a.id, variant_id: null },
        { sku: b.sku, variant_id: "NULL (no variant)" },
      ],
    });
    expect(await lines(r.order_id)).toMatchObject([{ variant_id: t.m }]);
  });

  it("removes every line of a product when variant_id is absent", async () => {
    const t = await shirt();
    const m = await mug();
    const r = await one({
      products: [
        { variant_id: t.m, qty: 1 },
        { variant_id: t.l, qty: 1 },
        { sku: m.sku, qty: 1 },
      ],
      products_remove: [{ product_id: t.p.product_id }],
    });
    expect(await lines(r.order_id)).toMatchObject([{ sku: m.sku }]);
  });

  it("gives a notice for removing a line the order does not have", async () => {
    const m = await mug();
    const r = await one({ products: [{ sku: m.sku, qty: 1 }], products_remove: [{ sku: "NOT-IN-ORDER" }] });
    expect(r.success).toBe(true);
    expect(r.notices).toEqual(["products_remove[0]: no line of the order matches; nothing removed"]);
  });

  it("fails an order left with no lines", async () => {
    const m = await mug();
    const r = await one({ products: [{ sku: m.sku, qty: 1 }], products_remove: [{ sku: m.sku }] });
    expect(r).toMatchObject({
      success: false,
      errors: ["products: the order has no lines left after products_remove"],
    });
  });

  it("fails an add entry that names nothing that exists", async () => {
    const m = await mug();
    const r = await one({ products: [{ sku: m.sku, qty: 1 }], products_add: [{ sku: "NOPE" }] });
    expect(r.errors[0]).toContain("products_add[0].sku: no product or variant has SKU NOPE");
  });
});

describe("discount, totals and tax", () => {
  it("computes subtotal, shipping, discount, total and tax per rate exactly", async () => {
    const a = await mug(100, 25);
    const b = await mug(50, 12);
    const r = await one({
      products: [
        { sku: a.sku, qty: 2 },
        { sku: b.sku, qty: 1 },
      ],
      shipping: { id: 3, name: "Home delivery", price: 49 },
      discount_remove: true,
      discount_add: { amount: 25 },
    });
    // Discount 25 spread 200:50 -> 20 and 5; tax 180*25/125 = 36, 45*12/112 = 4.82.
    expect(r).toEqual({
      success: true,
      order_id: expect.any(Number),
      status: "unpaid",
      currency: "SEK",
      subtotal: 250,
      shipping: 49,
      discount: 25,
      total: 274,
      tax: [
        { rate: 25, amount: 36 },
        { rate: 12, amount: 4.82 },
      ],
      errors: [],
      notices: [],
    });
    const g = (await get(`/v1/orders/${r.order_id}`)).json;
    expect(g).toMatchObject({
      subtotal: 250,
      discount: 25,
      total: 274,
      shipping: { price: 49, name: "Home delivery" },
    });
  });

  it("matches the docs/orders.md example: largest-remainder spread, half-up rounding", async () => {
    const a = await mug(199.5, 25);
    const b = await mug(250, 12);
    const r = await one({
      products: [
        { sku: a.sku, qty: 2 },
        { sku: b.sku, qty: 1, price: "250.00" },
      ],
      shipping: { price: 49 },
      discount_add: { amount: 25 },
    });
    expect(r).toMatchObject({ subtotal: 649, shipping: 49, discount: 25, total: 673 });
    expect(r.tax).toEqual([
      { rate: 25, amount: 76.73 },
      { rate: 12, amount: 25.75 },
    ]);
  });

  it("spreads no more discount over the lines than they cost: the rest reduces shipping", async () => {
    const a = await mug(100, 25);
    const r = await one({ products: [{ sku: a.sku, qty: 1 }], shipping: { price: 49 }, discount_add: { amount: 120 } });
    expect(r).toMatchObject({ success: true, subtotal: 100, discount: 120, total: 29, tax: [{ rate: 25, amount: 0 }] });
  });

  it("discount_remove alone leaves no discount", async () => {
    const a = await mug(100);
    const r = await one({ products: [{ sku: a.sku, qty: 1 }], discount_remove: "1" });
    expect(r).toMatchObject({ success: true, discount: 0, total: 100, tax: [{ rate: 25, amount: 20 }] });
  });

  it("uses DEFAULT_CURRENCY when payment names none", async () => {
    const a = await mug();
    const r = await post("/v1/orders", [order({ products: [{ sku: a.sku, qty: 1 }] })], {
      env: { DEFAULT_CURRENCY: "EUR" },
    });
    expect(r.json.results.create_1.currency).toBe("EUR");
  });
});

describe("snapshots", () => {
  it("keeps the stored order unchanged when the catalog changes or the product goes", async () => {
    const t = await shirt();
    const m = await mug(80);
    const r = await one({
      products: [
        { variant_id: t.m, qty: 1 },
        { sku: m.sku, qty: 1 },
      ],
    });
    const before = (await get(`/v1/orders/${r.order_id}`)).json;
    await env.DB.batch([
      env.DB.prepare("UPDATE products SET title = 'Renamed', price = 1, tax_rate = 6 WHERE id = ?").bind(
        t.p.product_id,
      ),
      env.DB.prepare("UPDATE variants SET price = 1, sku = ?, option1_value = 'XL' WHERE id = ?").bind(uid(), t.m),
      env.DB.prepare("DELETE FROM products WHERE id = ?").bind(m.id),
    ]);
    const after = (await get(`/v1/orders/${r.order_id}`)).json;
    expect(after).toEqual(before);
    expect(after.products[0]).toMatchObject({ title: "T-shirt", sku: t.skuM, price: 200, tax_rate: 25 });
  });
});

describe("variant_id null on products lines", () => {
  it.each([null, "NULL (no variant)"])("reads variant_id %j as a product without variants", async (variant_id) => {
    const sku = uid();
    const p = await createProduct({ sku, price: 30, stock: 5 });
    const r = await post("/v1/orders", [
      { order_id: "create", products: [{ product_id: p.product_id, variant_id, qty: 2 }] },
    ]);
    expect(r.json.results.create_1).toMatchObject({ success: true, subtotal: 60 });
  });

  it("refuses variant_id null beside a variant's SKU", async () => {
    const sku = uid();
    await createProduct({
      variants: { add: [{ variant_option1_name: "Size", variant_option1_value: "S", sku, qty: 3 }] },
    });
    const r = await post("/v1/orders", [{ order_id: "create", products: [{ sku, variant_id: null, qty: 1 }] }]);
    expect(r.json.results.create_1.errors).toEqual([
      `products[0].variant_id: SKU ${sku} is a variant's, not a product's`,
    ]);
  });
});

describe("tax per rate", () => {
  it("spreads the discount over the lines, not over the rates (docs/orders.md, Orders)", () => {
    // Over the lines, the 25% lines keep 3 öre after 3 öre of discount (tax 1 öre); spread over
    // the two rates instead, they would keep 2 (tax 0).
    const lines = [
      { amount: 1, taxRate: 12 },
      { amount: 1, taxRate: 25 },
      { amount: 4, taxRate: 25 },
    ];
    expect(taxByRate(lines, 3)).toEqual([
      { rate: 25, amount: 1 },
      { rate: 12, amount: 0 },
    ]);
  });
});
