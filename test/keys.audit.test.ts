import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { buildRequest } from "../src/webhooks/attempt";
import { call, createProduct, get, post, put, subscribeAll, uid } from "./helpers";

// Audit (docs/keys.md, "Audit"): an order and its event record the key that created it.

describe("audit of the creating key", () => {
  it("GET /v1/orders/{id} and the order.created event name the stored key; the bootstrap key leaves none", async () => {
    await subscribeAll();
    const sku = uid();
    await createProduct({ sku, stock: 10 });
    const made = await post("/v1/keys", { name: "pos terminal", type: "secret", scopes: ["orders:write"] });
    const key = made.json.key as string;
    const r = await post("/v1/orders", [{ order_id: "create", products: [{ sku, qty: 1 }] }], {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(r.status).toBe(200);
    const orderId = r.json.results.create_1.order_id;
    const order = await get(`/v1/orders/${orderId}`);
    expect(order.json.key).toEqual({ id: made.json.id, name: "pos terminal" });
    expect(order.json).not.toHaveProperty("token");

    const ev = await env.DB.prepare("SELECT id, key_id FROM events WHERE order_id = ?").bind(orderId).first<any>();
    expect(ev.key_id).toBe(made.json.id);
    const secret = await crypto.subtle.importKey("raw", new Uint8Array(32), { name: "HMAC", hash: "SHA-256" }, false, [
      "sign",
    ]);
    const req = await buildRequest(
      {
        eventId: ev.id,
        type: "order.created",
        orderId,
        productId: null,
        eventAt: 0,
        key: { id: made.json.id, name: "pos terminal" },
        endpointId: 1,
        url: "https://hooks.example/x",
        format: "standard",
      },
      secret,
      0,
    );
    // Who caused the event travels beside the object, which names its creator itself.
    const body = JSON.parse(new TextDecoder().decode(req.body));
    expect(body.key).toEqual({ id: made.json.id, name: "pos terminal" });
    expect(body.data).toEqual({ order_id: orderId });

    const plain = await post("/v1/orders", [{ order_id: "create", products: [{ sku, qty: 1 }] }]);
    const other = await get(`/v1/orders/${plain.json.results.create_1.order_id}`);
    expect(other.json).not.toHaveProperty("key");
  });
});

describe("audit of product writes", () => {
  it("a product created with a stored key records it, and so does its product.add event", async () => {
    await subscribeAll();
    const made = await post("/v1/keys", { name: "stock tool", type: "secret", scopes: ["products:write"] });
    const r = await post(
      "/v1/products",
      { title: "Audited", sku: uid(), price: 1 },
      { headers: { authorization: `Bearer ${made.json.key}` } },
    );
    expect(r.status).toBe(200);
    const id = r.json.products[0].product_id;
    const row = await env.DB.prepare("SELECT key_id FROM products WHERE id = ?").bind(id).first<any>();
    expect(row.key_id).toBe(made.json.id);
    const ev = await env.DB.prepare("SELECT key_id FROM events WHERE product_id = ? AND type = 'product.add'")
      .bind(id)
      .first<any>();
    expect(ev.key_id).toBe(made.json.id);
  });
});

// Every change, not only creation, names the key that made it on its event (docs/keys.md, "Audit").
describe("audit of changes", () => {
  const keyed = async (name: string, scopes: string[]) => {
    const made = await post("/v1/keys", { name, type: "secret", scopes });
    return { id: made.json.id as number, headers: { authorization: `Bearer ${made.json.key}` } };
  };
  const eventKeys = async (column: "order_id" | "product_id", id: number, type: string) =>
    (
      await env.DB.prepare(`SELECT key_id FROM events WHERE ${column} = ?1 AND type = ?2 ORDER BY created_at`)
        .bind(id, type)
        .all<{ key_id: number | null }>()
    ).results.map((r) => r.key_id);

  it.each([
    ["the general path (title)", (sku: string) => ({ sku, title: "Renamed" })],
    ["the stock tools' path (sku and stock)", (sku: string) => ({ sku, stock: 3 })],
  ])("a product update by %s records the key on product.update", async (_, body) => {
    await subscribeAll();
    const k = await keyed(`updater ${uid()}`, ["products:write"]);
    const sku = uid();
    const p = await createProduct({ sku, stock: 1 });
    const r = await put("/v1/products", body(sku), { headers: k.headers });
    expect(r.status).toBe(200);
    expect(await eventKeys("product_id", p.product_id, "product.update")).toEqual([k.id]);
  });

  it.each([[false], [true]])(
    "a product delete records the key on product.delete (idempotency key: %s)",
    async (keyedReq) => {
      await subscribeAll();
      const k = await keyed(`deleter ${uid()}`, ["products:write"]);
      const p = await createProduct({ sku: uid() });
      const headers = { ...k.headers, ...(keyedReq ? { "idempotency-key": uid("del") } : {}) };
      const r = await call("DELETE", "/v1/products", { body: { product_id: p.product_id }, headers });
      expect(r.status).toBe(200);
      expect(await eventKeys("product_id", p.product_id, "product.delete")).toEqual([k.id]);
    },
  );

  it.each([
    ["status alone (one trip)", (id: number) => ({ order_id: id, status: "paid" }), {}],
    ["status with an idempotency key", (id: number) => ({ order_id: id, status: "paid" }), { keyed: true }],
    [
      "status with a line edit (read, then write)",
      (id: number, sku: string) => ({ order_id: id, status: "paid", products: [{ sku, qty: 2 }] }),
      {},
    ],
  ])("an order change by %s records the key on order.new", async (_, body, opts: { keyed?: boolean }) => {
    await subscribeAll();
    const k = await keyed(`till ${uid()}`, ["orders:write"]);
    const sku = uid();
    await createProduct({ sku, stock: 10 });
    const made = await post("/v1/orders", [{ order_id: "create", products: [{ sku, qty: 1 }] }]);
    const id = made.json.results.create_1.order_id as number;
    const headers = { ...k.headers, ...(opts.keyed ? { "idempotency-key": uid("pay") } : {}) };
    const r = await put("/v1/orders", [body(id, sku)], { headers });
    expect(r.status).toBe(200);
    expect(r.json.results.update_1.success).toBe(true);
    expect(await eventKeys("order_id", id, "order.new")).toEqual([k.id]);
    // The creator (the bootstrap key) stays the order's key.
    expect((await get(`/v1/orders/${id}`)).json).not.toHaveProperty("key");
  });
});
