import { describe, expect, it } from "vitest";
import { basic, call, createProduct, get, post, uid } from "./helpers";

/** An order with every field of docs/orders.md "Creating orders", on real SKUs of this test's catalog. */
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

describe("POST /v1/orders: body", () => {
  it.each([
    ["an empty array", [], 400],
    ["an object", { order_id: "create" }, 400],
    ["a string", "orders", 400],
    ["101 orders", Array.from({ length: 101 }, () => ({ order_id: "create" })), 413],
  ])("refuses %s", async (_, body, status) => {
    const r = await post("/v1/orders", body);
    expect(r.status).toBe(status);
    expect(r.json).toEqual({ code: status, error: expect.any(String) });
  });

  it("refuses malformed JSON with 400 and another media type with 415", async () => {
    expect(
      (await call("POST", "/v1/orders", { raw: "[{", headers: { "content-type": "application/json" } })).status,
    ).toBe(400);
    expect((await call("POST", "/v1/orders", { raw: "[]", headers: { "content-type": "text/plain" } })).status).toBe(
      415,
    );
  });
});

describe("POST /v1/orders: validation", () => {
  const sku = uid("VAL");
  const base = () => ({ order_id: "create", products: [{ sku, qty: 1 }] });
  const cases: [string, Record<string, unknown>, string][] = [
    ["order_id other than create", { order_id: "1234" }, 'order_id: only "create" is supported here'],
    ["order_id absent", { order_id: undefined }, 'order_id: only "create" is supported here'],
    ["products absent", { products: undefined }, "products: is required"],
    ["products empty", { products: [] }, "products: must hold at least one line"],
    ["products not an array", { products: { sku } }, "products: must be an array"],
    ["qty 0", { products: [{ sku, qty: 0 }] }, "products[0].qty: must be a whole number of at least 1"],
    ["qty 1.5", { products: [{ sku, qty: 1.5 }] }, "products[0].qty: must be a whole number of at least 1"],
    ["qty absent", { products: [{ sku }] }, "products[0].qty: is required"],
    ["qty 100001", { products: [{ sku, qty: 100001 }] }, "products[0].qty: must be at most 100000"],
    ["qty as 1e3", { products: [{ sku, qty: "1e3" }] }, "products[0].qty: must be a whole number of at least 1"],
    ["price with 3 decimals", { products: [{ sku, qty: 1, price: 1.234 }] }, "products[0].price: must have at most 2"],
    ["negative price", { products: [{ sku, qty: 1, price: -1 }] }, "products[0].price: must not be negative"],
    ["price too large", { products: [{ sku, qty: 1, price: 1000000000.01 }] }, "products[0].price: must be at most"],
    ["a line naming nothing", { products: [{ qty: 1 }] }, "products[0]: must name a variant_id, sku or product_id"],
    ["a bad email", { customer: { email: "anna.example.com" } }, "customer.email: must be an e-mail address"],
    ["a phone that is not text", { customer: { phone: 46701234567 } }, "customer.phone: must be a string"],
    ["a bad country", { customer: { billing_details: { country: "SWE" } } }, "customer.billing_details.country:"],
    ["a long type", { customer: { type: "x".repeat(33) } }, "customer.type: must be at most 32 characters"],
    ["a long note", { customer: { note: "x".repeat(10001) } }, "customer.note: must be at most 10000 characters"],
    [
      "a long name",
      { customer: { billing_details: { firstname: "x".repeat(256) } } },
      "firstname: must be at most 255",
    ],
    ["a control character", { customer: { billing_details: { city: "a\u0007b" } } }, "city: must not contain control"],
    ["a bad currency", { payment: { currency: "kr" } }, "payment.currency: must be a three-letter currency code"],
    ["a long payment log", { payment: { log: "x".repeat(10001) } }, "payment.log: must be at most 10000"],
    ["shipping price 1e3", { shipping: { price: "1e3" } }, "shipping.price: must be an amount of money"],
    ["metadata as an array", { metadata: [1, 2] }, "metadata: must be a JSON object"],
    ["metadata over 16 KiB", { metadata: { x: "y".repeat(16_400) } }, "metadata: must be at most 16 KiB serialised"],
    ["discount without amount", { discount_add: {} }, "discount_add.amount: is required"],
    ["negative discount", { discount_add: { amount: -5 } }, "discount_add.amount: must not be negative"],
    ["discount_remove not a flag", { discount_remove: "yes" }, "discount_remove: must be 1, 0, true or false"],
    ["a remove entry naming nothing", { products_remove: [{}] }, "products_remove[0]: must name a sku"],
    [
      "501 lines",
      { products: Array.from({ length: 501 }, () => ({ sku, qty: 1 })) },
      "products: must have at most 500",
    ],
    [
      "an unknown sku",
      { products: [{ sku: "NO-SUCH-SKU", qty: 1 }] },
      "products[0].sku: no product or variant has SKU",
    ],
    ["an unknown variant", { products: [{ variant_id: 99999999, qty: 1 }] }, "products[0].variant_id: no variant"],
    ["an unknown product", { products: [{ product_id: 99999999, qty: 1 }] }, "products[0].product_id: no product"],
  ];

  it.each(cases)("fails %s", async (_, patch, error) => {
    await ensureProduct(sku);
    const r = await post("/v1/orders", [{ ...base(), ...patch }]);
    expect(r.status).toBe(400);
    expect(r.json.code).toBe(400);
    const res = r.json.results.create_1;
    expect(res.success).toBe(false);
    expect(res.errors.join("\n")).toContain(error);
  });

  it("fails a discount larger than lines plus shipping, and a total over 10,000,000,000", async () => {
    await ensureProduct(sku);
    const r = await post("/v1/orders", [
      { ...base(), shipping: { price: 10 }, discount_add: { amount: 110.01 } },
      { ...base(), products: [{ sku, qty: 11, price: 1000000000 }] },
      { ...base(), shipping: { price: 10 }, discount_add: { amount: 110 } },
    ]);
    expect(r.status).toBe(200);
    expect(r.json.results.create_1.errors[0]).toMatch(/^discount_add\.amount: .*more than the lines plus shipping/);
    expect(r.json.results.create_2.errors[0]).toContain("more than 10000000000");
    expect(r.json.results.create_3).toMatchObject({
      success: true,
      subtotal: 100,
      shipping: 10,
      discount: 110,
      total: 0,
    });
  });

  it("reports unknown fields as notices and stores none of them", async () => {
    await ensureProduct(sku);
    const r = await post("/v1/orders", [
      { ...base(), customer: { emial: "a@b.se" }, products: [{ sku, qty: 1, colour: "red" }], foo: 1 },
    ]);
    expect(r.status).toBe(200);
    expect(r.json.results.create_1.notices).toEqual(
      expect.arrayContaining([
        "ignored unknown field customer.emial",
        "ignored unknown field products[0].colour",
        "ignored unknown field foo",
      ]),
    );
    const g = await get(`/v1/orders/${r.json.results.create_1.order_id}`);
    expect(g.text).not.toContain("emial");
    expect(g.json.customer.email).toBeNull();
  });

  it("accepts lenient scalars: numeric strings, blank strings as absent, flags as strings", async () => {
    await ensureProduct(sku);
    const r = await post("/v1/orders", [
      {
        order_id: "create",
        products: [{ sku: ` ${sku}`.trim(), qty: " 2 ", price: "10.5" }],
        shipping: { id: "7", price: " " },
        customer: { email: "  ", newsletter_subscribe: "0", login_create: "1" },
      },
    ]);
    expect(r.json.results.create_1).toMatchObject({ success: true, subtotal: 21, shipping: 0, total: 21 });
  });
});

const made = new Set<string>();
/** The validation table's product, created once per SKU. */
async function ensureProduct(sku: string) {
  if (made.has(sku)) return;
  await createProduct({ sku, title: "Validated", price: 100, stock: 1000 });
  made.add(sku);
}
