import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { buildRequest } from "../src/webhooks/attempt";
import { createProduct, get, post, subscribeAll, uid } from "./helpers";

// Audit (src/docs/keys.md, "Audit"): an order and its event record the key that created it.

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
    expect(JSON.parse(req.body).data).toEqual({ order_id: orderId, key: { id: made.json.id, name: "pos terminal" } });

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
