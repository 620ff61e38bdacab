import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { orderOut } from "../src/openapi/responses";
import { scheduled } from "../src/scheduled";
import { call, createProduct, get, post, quietEnv, uid } from "./helpers";

// The storefront attacks of docs/security.md, "Storefront threats": one test per attack, made
// from outside with nothing but a publishable key (which sits in every storefront page's source).
// Each failed before the defences it names existed.

const SHOP = "https://shop.example";
const MINUTE = 60_000;

async function publishable(extra: Record<string, unknown> = {}) {
  const r = await post("/v1/keys", { name: uid("pk"), type: "publishable", allowed_origins: [SHOP], ...extra });
  expect(r.status, r.text).toBe(201);
  return r.json as { id: number; key: string };
}
const as = (key: string, headers: Record<string, string> = {}) => ({
  headers: { authorization: "", "x-publishable-key": key, ...headers },
});
let visitor = 0;
/** An order from a visitor of its own address (the per-address order limit is not under test here). */
const order = (key: string, body: Record<string, unknown>) =>
  post("/v1/orders", [{ order_id: "create", ...body }], {
    ...as(key, { "cf-connecting-ip": `198.51.100.${++visitor}` }),
    cf: { colo: "ARN" },
  });

/** A product of two variants, the second hidden, each with `qty` in stock. */
async function withHiddenVariant(qty = 5) {
  const skus = [uid("VIS"), uid("HID")];
  const p = await createProduct({
    variants: {
      add: [
        { variant_option1_name: "Size", variant_option1_value: "S", sku: skus[0], qty, price: 100 },
        { variant_option1_name: "Size", variant_option1_value: "M", sku: skus[1], qty, price: 80, visible: 0 },
      ],
    },
  });
  return { id: p.product_id as number, shown: p.variants[0], hidden: p.variants[1] };
}

describe("storefront abuse", () => {
  it("a visitor cannot set their own prices: price, discount and shipping.price are refused", async () => {
    const { key } = await publishable();
    const sku = uid("VIS");
    await createProduct({ sku, price: 100, stock: 10 });
    const cases: [Record<string, unknown>, string][] = [
      [{ products: [{ sku, qty: 1, price: 0.01 }] }, "products[0].price: a publishable key cannot set prices"],
      [{ products: [{ sku, qty: 1 }], shipping: { price: 0 } }, "shipping.price: a publishable key cannot set prices"],
      [
        { products: [{ sku, qty: 1 }], discount_add: { amount: 99 } },
        "discount_add: a publishable key cannot set prices",
      ],
    ];
    for (const [body, error] of cases) {
      const r = await order(key, body);
      expect(r.status, r.text).toBe(400);
      expect(r.json.results.create_1.errors).toContain(error);
    }
    // Without them the catalogue prices the order.
    const ok = await order(key, { products: [{ sku, qty: 2 }] });
    expect(ok.json.results.create_1).toMatchObject({ success: true, subtotal: 200, total: 200 });
  });

  it("a visitor cannot pick the shipping price: the store's method prices it", async () => {
    const { key } = await publishable();
    const sku = uid("SHIP");
    await createProduct({ sku, price: 100, stock: 10 });
    const m = await post("/v1/shipping-methods", { name: "Postnord", price: 49 });
    expect(m.status, m.text).toBe(201);
    const r = await order(key, { products: [{ sku, qty: 1 }], shipping: { id: m.json.id, name: "Free!" } });
    expect(r.json.results.create_1, r.text).toMatchObject({ success: true, shipping: 49, total: 149 });
    const read = await get(`/v1/orders/${r.json.results.create_1.order_id}`);
    expect(read.json.shipping).toEqual({ id: m.json.id, name: "Postnord", price: 49 });
    // The other tests' store has no shipping method.
    expect((await call("DELETE", `/v1/shipping-methods/${m.json.id}`)).status).toBe(204);
  });

  it("hidden products and variants cannot be bought, looked up or counted", async () => {
    const { key } = await publishable({ scopes: ["stock"] });
    const hiddenSku = uid("HIDP");
    const hidden = await createProduct({ sku: hiddenSku, stock: 5, visible: 0 });
    const v = await withHiddenVariant(5);
    const tries: [Record<string, unknown>, string][] = [
      [{ sku: hiddenSku }, `products[0].sku: no product or variant has SKU ${hiddenSku}`],
      [{ product_id: hidden.product_id }, `products[0].product_id: no product ${hidden.product_id}`],
      [{ variant_id: v.hidden.variant_id }, `products[0].variant_id: no variant ${v.hidden.variant_id}`],
      [{ sku: v.hidden.sku }, `products[0].sku: no product or variant has SKU ${v.hidden.sku}`],
    ];
    for (const [line, error] of tries) {
      const r = await order(key, { products: [{ ...line, qty: 1 }] });
      expect(r.status, r.text).toBe(400);
      expect(r.json.results.create_1.errors).toEqual([error]);
    }
    // The visible variant of the same product sells.
    expect((await order(key, { products: [{ sku: v.shown.sku, qty: 1 }] })).status).toBe(200);
    // Every lookup of a hidden variant is 404; the product's stock is its visible variants'.
    expect((await get(`/v1/products?sku=${v.hidden.sku}`, as(key))).status).toBe(404);
    expect((await get(`/v1/products?search=${v.hidden.sku}`, as(key))).json).toEqual([]);
    expect((await get(`/v1/products?sku=${v.shown.sku}`, as(key))).status).toBe(200);
    expect((await get(`/v1/products/${v.id}`, as(key))).json.stock).toBe(4);
    expect((await get(`/v1/products?product_id=${v.id}`, as(key))).json.stock).toBe(4);
    // A secret key still sees everything.
    expect((await get(`/v1/products/${v.id}`)).json.stock).toBe(9);
  });

  it("customers cannot be enumerated: a storefront order never links, shows or changes a customer", async () => {
    const { key } = await publishable();
    const sku = uid("CUST");
    await createProduct({ sku, stock: 10 });
    const known = `${uid("known")}@example.com`;
    const first = await post("/v1/orders", [
      { order_id: "create", customer: { email: known, phone: "+46700000001" }, products: [{ sku, qty: 1 }] },
    ]);
    const customerId = (await get(`/v1/orders/${first.json.results.create_1.order_id}`)).json.customer.customer_id;
    expect(customerId).toEqual(expect.any(Number));

    const mine = async (email: string) => {
      const r = await order(key, { customer: { email, phone: "+46700000002" }, products: [{ sku, qty: 1 }] });
      const { order_id, token } = r.json.results.create_1;
      return {
        answer: r.json.results.create_1,
        read: (await get(`/v1/orders/${order_id}?token=${token}`, as(key))).json,
      };
    };
    const a = await mine(known);
    const b = await mine(`${uid("new")}@example.com`);
    const shape = (o: object) => JSON.stringify(Object.keys(o));
    expect(shape(a.answer)).toBe(shape(b.answer));
    expect(shape(a.read.customer)).toBe(shape(b.read.customer));
    expect(a.read.customer).not.toHaveProperty("customer_id");
    // As the OpenAPI document describes the order.
    expect(orderOut.safeParse(a.read).error).toBeUndefined();
    // Not linked, and the stored customer is as it was.
    const stored = await env.DB.prepare("SELECT customer_id FROM orders WHERE id = ?1").bind(a.answer.order_id).first();
    expect(stored?.customer_id).toBeNull();
    const c = await env.DB.prepare("SELECT phone FROM customers WHERE id = ?1").bind(customerId).first();
    expect(c?.phone).toBe("+46700000001");
  });

  it("an order token works only with the key that created it, and expires", async () => {
    const a = await publishable();
    const b = await publishable();
    const sku = uid("TOK");
    await createProduct({ sku, stock: 10 });
    const r = await order(a.key, { products: [{ sku, qty: 1 }] });
    const { order_id, token } = r.json.results.create_1;
    expect((await get(`/v1/orders/${order_id}?token=${token}`, as(a.key))).status).toBe(200);
    expect((await get(`/v1/orders/${order_id}?token=${token}`, as(b.key))).status).toBe(404);
    // After 30 days (ORDER_TOKEN_DAYS), the token reads nothing; a secret key still does.
    await env.DB.prepare("UPDATE orders SET created_at = ?2 WHERE id = ?1")
      .bind(order_id, Date.now() - 31 * 24 * 60 * MINUTE)
      .run();
    expect((await get(`/v1/orders/${order_id}?token=${token}`, as(a.key))).status).toBe(404);
    const longer = { env: { ORDER_TOKEN_DAYS: "40" }, ...as(a.key) };
    expect((await get(`/v1/orders/${order_id}?token=${token}`, longer)).status).toBe(200);
    expect((await get(`/v1/orders/${order_id}`)).status).toBe(200);
  });

  it("a key cannot mint a key with permissions it lacks", async () => {
    const minter = await post("/v1/keys", { name: uid("minter"), type: "secret", scopes: ["keys"] });
    const auth = { headers: { authorization: `Bearer ${minter.json.key}` } };
    const broad = await post(
      "/v1/keys",
      { name: uid("pk"), type: "publishable", allowed_origins: [SHOP], scopes: ["stock", "datafields"] },
      auth,
    );
    expect(broad.status).toBe(403);
    expect(broad.json.error).toBe("this key cannot grant scopes it lacks: stock, datafields");
    // Nor a publishable key at all: it would read the catalogue and create orders, which `keys` cannot.
    const plain = await post("/v1/keys", { name: uid("pk"), type: "publishable", allowed_origins: [SHOP] }, auth);
    expect(plain.status).toBe(403);
    expect(plain.json.errors[0]).toMatch(/^type: /);
    // A key that holds them may pass them on.
    const holder = await post("/v1/keys", {
      name: uid("holder"),
      type: "secret",
      scopes: ["keys", "products:read", "orders:write", "stock"],
    });
    expect(holder.status, holder.text).toBe(201);
    const ok = await post(
      "/v1/keys",
      { name: uid("pk"), type: "publishable", allowed_origins: [SHOP], scopes: ["stock"] },
      { headers: { authorization: `Bearer ${holder.json.key}` } },
    );
    expect(ok.status).toBe(201);
  });

  it("bots cannot lock stock: storefront orders release it after 60 minutes by default", async () => {
    const { key } = await publishable();
    const sku = uid("BOT");
    const p = await createProduct({ sku, stock: 10, disable_minusqty: 1 });
    const ids: number[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await order(key, { products: [{ sku, qty: 2 }] })).json.results.create_1.order_id);
    const secret = (await post("/v1/orders", [{ order_id: "create", products: [{ sku, qty: 1 }] }])).json.results
      .create_1.order_id;
    // One storefront order is paid (by the payment provider's server, with a secret key).
    expect((await call("PUT", "/v1/orders", { body: [{ order_id: ids[2], status: "paid" }] })).status).toBe(200);
    await env.DB.prepare("UPDATE orders SET created_at = ?2 WHERE id IN (SELECT value FROM json_each(?1))")
      .bind(JSON.stringify([...ids, secret]), Date.now() - 61 * MINUTE)
      .run();
    // No UNPAID_ORDER_HOLD_MINUTES: secret-key orders are held forever, storefront orders are not.
    await scheduled(quietEnv);
    const status = async (id: number) => (await get(`/v1/orders/${id}`)).json.status;
    expect(await status(ids[0])).toBe("cancelled");
    expect(await status(ids[1])).toBe("cancelled");
    expect(await status(ids[2])).toBe("paid");
    expect(await status(secret)).toBe("unpaid");
    expect((await get(`/v1/products/${p.product_id}`)).json.stock).toBe(10 - 2 - 1);
  });

  it("a storefront can read its refusals, and gets no preflight for routes it can never call", async () => {
    const { key } = await publishable();
    const refused = await get("/v1/products/count", as(key, { origin: SHOP }));
    expect(refused.status).toBe(403);
    expect(refused.headers.get("access-control-allow-origin")).toBe(SHOP);
    const bad = await get("/v1/products", as("pk_0000000000000000000000000000000000000000000000000", { origin: SHOP }));
    expect(bad.status).toBe(401);
    expect(bad.headers.get("access-control-allow-origin")).toBe(SHOP);
    const pre = await call("OPTIONS", "/v1/products/count", {
      headers: { authorization: "", origin: SHOP, "access-control-request-method": "GET" },
    });
    expect(pre.status).toBe(403);
    const ok = await call("OPTIONS", "/v1/products/12", {
      headers: { authorization: "", origin: SHOP, "access-control-request-method": "GET" },
    });
    expect(ok.status).toBe(204);
  });
});
