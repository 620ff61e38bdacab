import { describe, expect, it } from "vitest";
import { basic, createProduct, get, post, uid } from "./helpers";

/** The order of interface.md 2.1-2.6 with every field, on real SKUs of this test's catalog. */
function exampleOrder(sku: string, variantSku: string, extra: Record<string, unknown> = {}) {
  return {
    order_id: "create",
    status: "paid",
    customer: {
      type: "consumer",
      email: "Anna.Svensson@Example.com",
      phone: "+46 70-123 45 67",
      login_create: true,
      newsletter_subscribe: true,
      note: "Leave at the door",
      billing_details: {
        company_name: "",
        firstname: "Anna",
        lastname: "Svensson",
        address: "Storgatan 1",
        address2: "",
        city: "Stockholm",
        zipcode: "111 22",
        country: "se",
      },
      shipping_details: {
        firstname: "Anna",
        lastname: "Svensson",
        address: "Storgatan 1",
        city: "Stockholm",
        zipcode: "111 22",
        country: "SE",
      },
    },
    payment: { method: "invoice", transaction_id: "TX-1", currency: "sek", log: "approved" },
    shipping: { id: 1, name: "Postnord", price: "49" },
    products: [
      { sku, qty: 2, price: "199.50" },
      { sku: variantSku, qty: "1" },
    ],
    metadata: { channel: "pos", register: 3 },
    ...extra,
  };
}

async function catalog() {
  const sku = uid("MUG");
  const variantSku = uid("TEE");
  const mug = await createProduct({ sku, title: "Mug", price: "199.50", stock: 10, tax_rate: 25 });
  const tee = await createProduct({
    title: "T-shirt",
    price: 250,
    tax_rate: 12,
    variants: {
      add: [
        { variant_option1_name: "Size", variant_option1_value: "M", sku: variantSku, price: 250, qty: 5 },
        { variant_option1_name: "Size", variant_option1_value: "L", sku: uid("TEE"), qty: 5 },
      ],
    },
  });
  return { sku, variantSku, mug, tee };
}

describe("POST /v1/orders: the example order", () => {
  it("creates an unpaid order even when the body says paid", async () => {
    const { sku, variantSku } = await catalog();
    const r = await post("/v1/orders", [exampleOrder(sku, variantSku)]);
    expect(r.status).toBe(200);
    const res = r.json.results.create_1;
    expect(res).toMatchObject({
      success: true,
      status: "unpaid",
      currency: "SEK",
      subtotal: 649,
      shipping: 49,
      discount: 0,
      total: 698,
      errors: [],
    });
    expect(res.order_id).toBeGreaterThanOrEqual(1001);
    expect(res.tax).toEqual([
      { rate: 25, amount: 79.8 },
      { rate: 12, amount: 26.79 },
    ]);
    expect(res.notices).toContain("ignored field status: a new order is always unpaid");

    const g = await get(`/v1/orders/${res.order_id}`);
    expect(g.status).toBe(200);
    expect(g.json).toMatchObject({
      order_id: res.order_id,
      status: "unpaid",
      currency: "SEK",
      customer: {
        type: "consumer",
        email: "Anna.Svensson@Example.com",
        phone: "+46701234567",
        login_create: true,
        newsletter_subscribe: true,
        note: "Leave at the door",
        billing_details: { firstname: "Anna", country: "SE", zipcode: "111 22" },
        shipping_details: { city: "Stockholm", country: "SE" },
      },
      payment: { method: "invoice", transaction_id: "TX-1", currency: "SEK", log: "approved" },
      shipping: { id: 1, name: "Postnord", price: 49 },
      products: [
        { sku, title: "Mug", qty: 2, price: 199.5, tax_rate: 25, options: [], variant_id: null },
        {
          sku: variantSku,
          title: "T-shirt",
          qty: 1,
          price: 250,
          tax_rate: 12,
          options: [{ name: "Size", value: "M" }],
        },
      ],
      subtotal: 649,
      discount: 0,
      total: 698,
      tax: [
        { rate: 25, amount: 79.8 },
        { rate: 12, amount: 26.79 },
      ],
      metadata: { channel: "pos", register: 3 },
    });
    expect(g.json.customer.customer_id).toEqual(expect.any(Number));
  });
});

describe("POST /v1/orders: auth", () => {
  it("answers 401 without credentials and 401 with a wrong key", async () => {
    const none = await post("/v1/orders", [], { headers: { authorization: "" } });
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toContain("Basic");
    const wrong = await post("/v1/orders", [], { headers: { authorization: basic("nope") } });
    expect(wrong.status).toBe(401);
    expect(wrong.json).toEqual({ code: 401, error: expect.any(String) });
  });
});
