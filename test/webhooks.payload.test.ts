import { env } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import type { Bindings } from "../src/env";
import { deliverBatch } from "../src/webhooks/deliver";
import { eventPayload } from "../src/webhooks/openapi";
import { PAYLOAD_MAX_BYTES } from "../src/webhooks/payload";
import { wrapD1 } from "./d1-wrap";
import { call, createProduct, get, post, put, uid } from "./helpers";

// The standard payload's `data` is the event's object (src/docs/webhooks.md, "Payloads"): the order
// as GET /v1/orders/{id} answers it, the product as GET /v1/products?product_id=&include_details=true
// does, read in the consumer's own load batch. Events come from the real write paths here, and the
// consumer is run on the messages they queued (no simulated queue in between).

let bodies: { url: string; body: string; headers: Record<string, string> }[];
let fetchSpy: MockInstance<typeof fetch>;
let logSpy: MockInstance<typeof console.log>;
beforeEach(async () => {
  bodies = [];
  fetchSpy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    bodies.push({
      url: String(input),
      body: String(init?.body ?? ""),
      headers: init?.headers as Record<string, string>,
    });
    return new Response("ok");
  });
  logSpy = vi.spyOn(console, "log").mockImplementation(() => {});
  await env.DB.batch([env.DB.prepare("DELETE FROM webhook_endpoints"), env.DB.prepare("DELETE FROM events")]);
});
afterEach(() => {
  fetchSpy.mockRestore();
  logSpy.mockRestore();
});

async function receiver(events: string[]) {
  const r = await post("/v1/webhooks", { url: `https://${uid("p").toLowerCase()}.example.com/hook`, events });
  expect(r.status).toBe(201);
  return r.json as { id: number; secret: string };
}

/** Runs the consumer on every event not yet dispatched, as their event messages; the bodies it sent. */
async function deliver(db: D1Database = env.DB) {
  const ids = (
    await env.DB.prepare("SELECT id FROM events WHERE dispatched_at IS NULL ORDER BY created_at").all<{ id: string }>()
  ).results;
  const messages = ids.map(({ id }, i) => ({
    id: `m${i}`,
    timestamp: new Date(),
    attempts: 1,
    body: { event_id: id },
    ack: () => {},
    retry: () => {},
  }));
  const producer = { sendBatch: async () => {}, send: async () => {} };
  const testEnv = { ...env, DB: db, EVENTS: producer, RETRIES: producer } as unknown as Bindings;
  await deliverBatch({ queue: "edge-store-events", messages } as unknown as MessageBatch<unknown>, testEnv);
  const sent = bodies.map((b) => ({ ...b, json: JSON.parse(b.body) }));
  // Every body is what the OpenAPI document says a delivery is, field for field.
  for (const s of sent) expect(eventPayload.parse(s.json)).toEqual(s.json);
  return sent;
}

describe("standard payloads carry the object", () => {
  it("an order event's data is the order as GET /v1/orders/{id} answers it, with the key that caused it", async () => {
    const ep = await receiver(["order.created", "order.new"]);
    const sku = uid();
    await createProduct({ sku, stock: 10, price: 99.5 });
    const till = await post("/v1/keys", { name: "till", type: "secret", scopes: ["orders:write"] });
    const made = await post(
      "/v1/orders",
      [{ order_id: "create", customer: { email: "label@example.com" }, products: [{ sku, qty: 2 }] }],
      { headers: { authorization: `Bearer ${till.json.key}` } },
    );
    const id = made.json.results.create_1.order_id as number;
    expect(
      (
        await put(
          "/v1/orders",
          { order_id: id, status: "paid" },
          { headers: { authorization: `Bearer ${till.json.key}` } },
        )
      ).status,
    ).toBe(200);
    const sent = await deliver();
    // The order's history (who changed it) is the merchant's read, not a payload's.
    const { history, ...order } = (await get(`/v1/orders/${id}`)).json;
    expect(history).toHaveLength(1);
    expect(sent.map((s) => s.json.type)).toEqual(["order.created", "order.new"]);
    // As the order is when the batch is delivered: both carry it paid.
    for (const s of sent) expect(s.json.data).toEqual(order);
    expect(order.status).toBe("paid");
    expect(order.key).toEqual({ id: till.json.id, name: "till" });
    for (const s of sent) expect(s.json.key).toEqual({ id: till.json.id, name: "till" });
    // The signature covers the bytes sent.
    expect(new Webhook(ep.secret).verify(sent[1].body, sent[1].headers)).toEqual(sent[1].json);
  });

  it("a product event's data is the product as ?product_id=&include_details=true answers it, product_id first", async () => {
    await receiver(["product.update"]);
    const sku = uid();
    const p = await createProduct({
      sku,
      title: "Hook lamp",
      price: 10,
      variants: { add: [{ sku: `${sku}-L`, variant_option1_name: "Size", variant_option1_value: "L", qty: 3 }] },
    });
    expect((await put("/v1/products", { sku: `${sku}-L`, stock: 7 })).status).toBe(200);
    const [s] = await deliver();
    const lookup = (await get(`/v1/products?product_id=${p.product_id}&include_details=true`)).json;
    expect(s.json.data).toEqual({ product_id: p.product_id, ...lookup });
    expect(Object.keys(s.json.data)[0]).toBe("product_id");
    expect(s.json.data.variants[0].qty).toBe("7");
  });

  it("a product whose answer passes PAYLOAD_MAX_BYTES is its id and truncated: true", async () => {
    await receiver(["product.update"]);
    const sku = uid();
    const p = await createProduct({ sku, title: "Many", price: 1 });
    // Variants straight into D1: enough text to pass the bound.
    await env.DB.prepare(
      `INSERT INTO variants (product_id, sku, option1_value, supplier_sku, qty, position, created_at, updated_at)
       SELECT ?1, ?2 || '-' || value, 'size ' || value, hex(zeroblob(400)), 1, value, 0, 0
       FROM json_each(?3)`,
    )
      .bind(p.product_id, sku, JSON.stringify(Array.from({ length: 100 }, (_, i) => i)))
      .run();
    const lookup = await get(`/v1/products?product_id=${p.product_id}&include_details=true`);
    expect(lookup.text.length).toBeGreaterThan(PAYLOAD_MAX_BYTES);
    expect((await put("/v1/products", { product_id: p.product_id, title: "Many more" })).status).toBe(200);
    const [s] = await deliver();
    expect(s.json.data).toEqual({ product_id: p.product_id, truncated: true });
  });

  it("a deleted product is its id and deleted: true", async () => {
    await receiver(["product.delete"]);
    const p = await createProduct({ sku: uid() });
    expect((await call("DELETE", "/v1/products", { body: { product_id: p.product_id } })).status).toBe(200);
    const [s] = await deliver();
    expect(s.json).toMatchObject({ type: "product.delete", data: { product_id: p.product_id, deleted: true } });
  });

  it("reads the objects in the consumer's own round trip: two D1 calls for orders and products alike", async () => {
    await receiver(["*"]);
    const sku = uid();
    await createProduct({ sku, stock: 100 });
    await post(
      "/v1/orders",
      Array.from({ length: 5 }, () => ({ order_id: "create", products: [{ sku, qty: 1 }] })),
    );
    await put("/v1/products", { sku, title: "Renamed" });
    const { db, counts } = wrapD1();
    const sent = await deliver(db);
    expect(sent.length).toBeGreaterThanOrEqual(6);
    expect(sent.every((s) => s.json.data && !s.json.data.deleted)).toBe(true);
    expect(counts.calls).toBe(2);
  });
});
