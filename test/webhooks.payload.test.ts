import { env } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import type { Bindings } from "../src/env";
import { deliverBatch, OBJECT_ROWS_BUDGET, SIGN_BYTES_BUDGET } from "../src/webhooks/deliver";
import { eventPayload } from "../src/webhooks/openapi";
import { PAYLOAD_MAX_BYTES } from "../src/webhooks/payload";
import { wrapD1 } from "./d1-wrap";
import { bodyText, call, createProduct, get, post, put, uid } from "./helpers";

// The standard payload's `data` is the event's object (docs/webhooks.md, "Payloads"): the order
// as GET /v1/orders/{id} answers it, the product as GET /v1/products?product_id=&include_details=true
// does, read by the consumer when it delivers. Events come from the real write paths here, and the
// consumer is run on the messages they queued (no simulated queue in between).

let bodies: { url: string; body: string; headers: Record<string, string> }[];
/** The bodies of the messages the consumer handed back to Queues with retry(). */
let retried: unknown[];
let fetchSpy: MockInstance<typeof fetch>;
let logSpy: MockInstance<typeof console.log>;
beforeEach(async () => {
  bodies = [];
  retried = [];
  fetchSpy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    bodies.push({
      url: String(input),
      body: bodyText(init?.body),
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

/**
 * Runs the consumer on every event not yet dispatched, as their event messages, or on the messages
 * `given` (follow-ups, say); the bodies it sent.
 */
async function deliver(db: D1Database = env.DB, followUps: unknown[] = [], given?: unknown[]) {
  const ids = (
    await env.DB.prepare("SELECT id FROM events WHERE dispatched_at IS NULL ORDER BY created_at").all<{ id: string }>()
  ).results;
  const messages = (given ?? ids.map(({ id }) => ({ event_id: id }))).map((body, i) => ({
    id: `m${i}`,
    timestamp: new Date(),
    attempts: 1,
    body,
    ack: () => {},
    retry: () => {
      retried.push(body);
    },
  }));
  const producer = {
    sendBatch: async (batch: unknown[]) => {
      followUps.push(...batch);
    },
    send: async () => {},
  };
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
      brand: "Lumen",
      variants: { add: [{ sku: `${sku}-L`, variant_option1_name: "Size", variant_option1_value: "L", qty: 3 }] },
    });
    expect((await put("/v1/products", { sku: `${sku}-L`, stock: 7 })).status).toBe(200);
    const [s] = await deliver();
    const lookup = (await get(`/v1/products?product_id=${p.product_id}&include_details=true`)).json;
    expect(s.json.data).toEqual({ product_id: p.product_id, ...lookup });
    expect(Object.keys(s.json.data)[0]).toBe("product_id");
    expect(s.json.data.variants[0].qty).toBe("7");
    expect(s.json.data.brand).toBe("Lumen");
  });

  it.each([
    [100, 400, "whole"],
    [1000, 800, "truncated"],
  ])("a product of %i variants of %i-byte supplier SKUs arrives %s (PAYLOAD_MAX_BYTES: 1 MiB)", async (n, hex, how) => {
    await receiver(["product.update"]);
    const sku = uid();
    const p = await createProduct({ sku, title: "Many", price: 1 });
    // Variants straight into D1: a given amount of text.
    await env.DB.prepare(
      `INSERT INTO variants (product_id, sku, option1_value, supplier_sku, qty, position, created_at, updated_at)
       SELECT ?1, ?2 || '-' || value, 'size ' || value, hex(zeroblob(?4 / 2)), 1, value, 0, 0
       FROM json_each(?3)`,
    )
      .bind(p.product_id, sku, JSON.stringify(Array.from({ length: n }, (_, i) => i)), hex)
      .run();
    expect((await put("/v1/products", { product_id: p.product_id, title: "Many more" })).status).toBe(200);
    const [s] = await deliver();
    const lookup = await get(`/v1/products?product_id=${p.product_id}&include_details=true`);
    const bytes = new TextEncoder().encode(lookup.text).length;
    if (how === "whole") {
      expect(bytes).toBeGreaterThan(64 * 1024);
      expect(s.json.data).toEqual({ product_id: p.product_id, ...lookup.json });
      expect(s.json.data.variants).toHaveLength(n);
    } else {
      expect(bytes).toBeGreaterThan(PAYLOAD_MAX_BYTES);
      expect(s.json.data).toEqual({ product_id: p.product_id, truncated: true });
    }
  });

  it("a deleted product is its id and deleted: true", async () => {
    await receiver(["product.delete"]);
    const p = await createProduct({ sku: uid() });
    expect((await call("DELETE", "/v1/products", { body: { product_id: p.product_id } })).status).toBe(200);
    const [s] = await deliver();
    expect(s.json).toMatchObject({ type: "product.delete", data: { product_id: p.product_id, deleted: true } });
  });

  it("reads the objects in one round trip of their own: three D1 calls for orders and products alike", async () => {
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
    // Load, objects, record.
    expect(counts.calls).toBe(3);
  });
});

/** An order of `lines` lines titled `title` + position, straight into D1, and an order.new event for it. */
async function bigOrder(lines: number, title: string) {
  const token = uid("hook-order");
  const [made] = await env.DB.batch<{ id: number }>([
    env.DB.prepare(
      `INSERT INTO orders (token, status, currency, subtotal, total, email, created_at, updated_at)
       VALUES (?1, 'paid', 'SEK', ?2, ?2, 'label@example.com', 0, 0) RETURNING id`,
    ).bind(token, lines * 1000),
  ]);
  const id = made.results[0].id;
  await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO order_lines (order_id, position, product_id, sku, title, options, qty, unit_price, tax_rate)
       SELECT ?1, value, 1, 'SKU-' || value, ?2 || ' ' || value, '[{"name":"Size","value":"M"}]', 1, 1000, 25
       FROM json_each(?3)`,
    ).bind(id, title, JSON.stringify(Array.from({ length: lines }, (_, i) => i + 1))),
    env.DB.prepare("INSERT INTO events (id, type, order_id, created_at) VALUES (?1, 'order.new', ?2, ?3)").bind(
      crypto.randomUUID(),
      id,
      Date.now(),
    ),
  ]);
  return id;
}

describe("large orders in payloads, up to PAYLOAD_MAX_BYTES (1 MiB)", () => {
  it("an order of 2,000 lines arrives whole, signed over the bytes sent", async () => {
    const ep = await receiver(["order.new"]);
    const id = await bigOrder(2000, "Organic cotton T-shirt, relaxed fit");
    const [s] = await deliver();
    // The order's history is the merchant's read, not a payload's.
    const { history: _, ...order } = (await get(`/v1/orders/${id}`)).json;
    expect(s.json.data).toEqual(order);
    expect(s.json.data.products).toHaveLength(2000);
    const bytes = new TextEncoder().encode(s.body).length;
    expect(bytes).toBeGreaterThan(64 * 1024);
    expect(bytes).toBeLessThan(PAYLOAD_MAX_BYTES);
    expect(new Webhook(ep.secret).verify(s.body, s.headers)).toEqual(s.json);
  });

  it.each([
    ["ASCII", "x".repeat(600)],
    // Under the bound in UTF-16 units, over it in UTF-8 bytes: the bound is in bytes.
    ["three bytes a character", "€".repeat(300)],
  ])("an order past 1 MiB of %s is its id and truncated: true", async (_, title) => {
    await receiver(["order.new"]);
    const id = await bigOrder(2000, title);
    const text = (await get(`/v1/orders/${id}`)).text;
    expect(new TextEncoder().encode(text).length).toBeGreaterThan(PAYLOAD_MAX_BYTES);
    const [s] = await deliver();
    expect(s.json.data).toEqual({ order_id: id, truncated: true });
  });

  it("signs at most SIGN_BYTES_BUDGET of bodies per invocation: the other endpoints' first attempts are queued, by reference", async () => {
    const eps = await Promise.all([receiver(["order.new"]), receiver(["order.new"]), receiver(["order.new"])]);
    await bigOrder(2000, `Organic cotton T-shirt, relaxed fit, garment-dyed ${"x".repeat(100)}`);
    const followUps: { body: Record<string, unknown>; delaySeconds?: number }[] = [];
    const sent = await deliver(env.DB, followUps);
    // About 0.6 MB each: one attempt fits the budget, the next two wait for the next invocation.
    expect(sent.map((x) => x.body.length)).toHaveLength(1);
    expect(sent[0].json.data.products).toHaveLength(2000);
    expect(followUps).toHaveLength(2);
    for (const f of followUps) {
      expect(Object.keys(f.body).sort()).toEqual(["attempt", "endpoint_id", "event_id"]);
      expect(f.body.attempt).toBe(1);
      expect(f.delaySeconds).toBe(0);
      // The message names the event; the consumer reads the order from D1 when it delivers.
      expect(JSON.stringify(f).length).toBeLessThan(200);
    }
    // Two other endpoints, each to get its first attempt from the next invocation.
    const waiting = new Set(followUps.map((f) => f.body.endpoint_id));
    expect(waiting.size).toBe(2);
    for (const id of waiting) expect(eps.map((e) => e.id)).toContain(id);
  });

  it("counts the bytes signed in UTF-8: an order of 0.8 MB (0.46 million UTF-16 units) goes to one of two endpoints an invocation", async () => {
    await Promise.all([receiver(["order.new"]), receiver(["order.new"])]);
    await bigOrder(2000, "€".repeat(80));
    const followUps: unknown[] = [];
    const sent = await deliver(env.DB, followUps);
    const bytes = new TextEncoder().encode(sent[0].body).length;
    expect(2 * bytes).toBeGreaterThan(SIGN_BYTES_BUDGET);
    expect(2 * sent[0].body.length).toBeLessThan(SIGN_BYTES_BUDGET);
    expect(sent).toHaveLength(1);
    expect(followUps).toHaveLength(1);
  });

  it("reads at most OBJECT_ROWS_BUDGET lines of objects per invocation: the other orders' deliveries are queued, by reference, and arrive whole", async () => {
    await receiver(["order.new"]);
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push(await bigOrder(500, `Wholesale line ${i}`));
    // Two orders of 500 lines fit the budget; the other three wait.
    expect(2 * 500).toBeLessThanOrEqual(OBJECT_ROWS_BUDGET);
    expect(3 * 500).toBeGreaterThan(OBJECT_ROWS_BUDGET);
    const queued: { body: Record<string, unknown>; delaySeconds?: number }[] = [];
    const { db, counts } = wrapD1();
    const first = await deliver(db, queued);
    expect(first.map((s) => s.json.data.order_id)).toEqual(ids.slice(0, 2));
    expect(counts.calls).toBe(3);
    expect(queued.map((f) => f.body)).toHaveLength(3);
    for (const f of queued) expect(f).toMatchObject({ body: { attempt: 1 }, delaySeconds: 0 });

    // The next invocation takes the three follow-ups: two, and sends the third again as a message
    // of its own, still its first attempt (a retry would count as one), which the next delivers.
    bodies = [];
    const again: typeof queued = [];
    const second = await deliver(
      env.DB,
      again,
      queued.map((f) => f.body),
    );
    expect(retried).toEqual([]);
    expect(again).toEqual([{ body: queued[2].body, delaySeconds: 0 }]);
    bodies = [];
    const third = await deliver(
      env.DB,
      [],
      again.map((f) => f.body),
    );
    const arrived = [...first, ...second, ...third];
    expect(arrived.map((s) => s.json.data.order_id).sort()).toEqual([...ids].sort());
    for (const s of arrived) expect(s.json.data.products).toHaveLength(500);
  });

  it("a retry the object budget defers keeps its attempt number: sent again as attempt 3, not retried (which would count as attempt 4)", async () => {
    const ep = await receiver(["order.new"]);
    for (let i = 0; i < 3; i++) await bigOrder(500, `Retried line ${i}`);
    const ids = (
      await env.DB.prepare("SELECT id FROM events WHERE dispatched_at IS NULL ORDER BY created_at").all<{
        id: string;
      }>()
    ).results;
    const retries = ids.map(({ id }) => ({ event_id: id, endpoint_id: ep.id, attempt: 3 }));
    const queued: { body: Record<string, unknown>; delaySeconds?: number }[] = [];
    const sent = await deliver(env.DB, queued, retries);
    expect(sent).toHaveLength(2);
    expect(retried).toEqual([]);
    expect(queued).toEqual([{ body: retries[2], delaySeconds: 0 }]);
  });

  it("never holds back small objects: ten events about orders of a few lines go in one invocation", async () => {
    await receiver(["order.new"]);
    const ids: number[] = [];
    for (let i = 0; i < 10; i++) ids.push(await bigOrder(3, `Everyday ${i}`));
    const queued: unknown[] = [];
    const sent = await deliver(env.DB, queued);
    expect(sent.map((s) => s.json.data.order_id)).toEqual(ids);
    expect(queued).toEqual([]);
  });
});
