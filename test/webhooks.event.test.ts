import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import type { Bindings } from "../src/env";
import { deliverBatch } from "../src/webhooks/deliver";
import { eventDeliveryOut } from "../src/webhooks/openapi";
import { bodyText, call, createProduct, get, post, put, uid } from "./helpers";

// GET /v1/webhooks/{id}/events/{event_id} (docs/webhooks.md, "Reading a delivery"): what a
// delivery of the event to the endpoint carries, the admin's payload view. Events come from the
// real write paths and the consumer delivers them, so the answer is compared with the bytes sent.

let sent: { url: string; method: string; body: string }[];
let fetchSpy: MockInstance<typeof fetch>;
let logSpy: MockInstance<typeof console.log>;
beforeEach(async () => {
  sent = [];
  fetchSpy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    sent.push({ url: String(input), method: init?.method ?? "GET", body: bodyText(init?.body) });
    return new Response("ok");
  });
  logSpy = vi.spyOn(console, "log").mockImplementation(() => {});
  await env.DB.batch([env.DB.prepare("DELETE FROM webhook_endpoints"), env.DB.prepare("DELETE FROM events")]);
});
afterEach(() => {
  fetchSpy.mockRestore();
  logSpy.mockRestore();
});

async function endpoint(format: "standard" | "quickbutik", query = "") {
  const r = await post("/v1/webhooks", {
    url: `https://${uid("e").toLowerCase()}.example.com/hook${query}`,
    events: ["product.update"],
    format,
  });
  expect(r.status, r.text).toBe(201);
  return r.json as { id: number; url: string };
}

/** Runs the consumer on the events not yet dispatched; their ids. */
async function deliver() {
  const { results } = await env.DB.prepare(
    "SELECT id FROM events WHERE dispatched_at IS NULL ORDER BY created_at",
  ).all<{ id: string }>();
  const messages = results.map(({ id }, i) => ({
    id: `m${i}`,
    timestamp: new Date(),
    attempts: 1,
    body: { event_id: id },
    ack: () => {},
    retry: () => {},
  }));
  const producer = { sendBatch: async () => {}, send: async () => {} };
  const testEnv = { ...env, EVENTS: producer, RETRIES: producer } as unknown as Bindings;
  await deliverBatch({ queue: "edge-store-events", messages } as unknown as MessageBatch<unknown>, testEnv);
  return results.map((r) => r.id);
}

/** A product changed through the API, so an event of it waits. */
async function changedProduct() {
  const sku = uid();
  const p = await createProduct({ sku, title: "Hook mug", price: 12, stock: 3 });
  expect((await put("/v1/products", { product_id: p.product_id, adjust: 2 })).status).toBe(200);
  return p.product_id as number;
}

describe("GET /v1/webhooks/{id}/events/{event_id}", () => {
  it("answers a standard delivery's method, URL and the very body the consumer sent", async () => {
    const ep = await endpoint("standard");
    const productId = await changedProduct();
    const [eventId] = await deliver();
    expect(sent).toHaveLength(1);
    const r = await get(`/v1/webhooks/${ep.id}/events/${eventId}`);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({
      event_id: eventId,
      event_type: "product.update",
      order_id: null,
      product_id: productId,
      format: "standard",
      method: "POST",
      url: ep.url,
      payload: JSON.parse(sent[0].body),
    });
    expect(r.json.payload.data.stock).toBe(5);
    expect(eventDeliveryOut.parse(r.json)).toEqual(r.json);
    expect(r.headers.get("cache-control")).toBe("no-store");
  });

  it("answers a quickbutik delivery's GET with the event in the query, the receiver's own kept, and no body", async () => {
    const ep = await endpoint("quickbutik", "?token=abc");
    const productId = await changedProduct();
    const [eventId] = await deliver();
    const r = await get(`/v1/webhooks/${ep.id}/events/${eventId}`);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ format: "quickbutik", method: "GET", payload: null });
    expect(r.json.url).toBe(sent[0].url);
    expect(new URL(r.json.url).searchParams.get("token")).toBe("abc");
    expect(new URL(r.json.url).searchParams.get("product_id")).toBe(String(productId));
  });

  it("shows the object as it is now: what a resend would send", async () => {
    const ep = await endpoint("standard");
    const productId = await changedProduct();
    const [eventId] = await deliver();
    expect((await put("/v1/products", { product_id: productId, adjust: -1 })).status).toBe(200);
    const r = await get(`/v1/webhooks/${ep.id}/events/${eventId}`);
    expect(JSON.parse(sent[0].body).data.stock).toBe(5);
    expect(r.json.payload.data.stock).toBe(4);
  });

  it.each([
    ["an unknown event", (id: number) => `/v1/webhooks/${id}/events/nope`],
    ["an unknown endpoint", () => "/v1/webhooks/999999/events/nope"],
  ])("is 404 for %s", async (_, path) => {
    const ep = await endpoint("standard");
    const r = await get(path(ep.id));
    expect(r.status).toBe(404);
    expect(r.json.error).toMatch(/no event nope for webhook/);
  });

  it("needs the scope webhooks; a publishable key never reads it", async () => {
    const ep = await endpoint("standard");
    await changedProduct();
    const [eventId] = await deliver();
    const path = `/v1/webhooks/${ep.id}/events/${eventId}`;
    const secret = await post("/v1/keys", { name: uid("k"), type: "secret", scopes: ["products:read"] });
    const pub = await post("/v1/keys", {
      name: uid("k"),
      type: "publishable",
      allowed_origins: ["https://shop.example.com"],
    });
    for (const key of [secret.json.key, pub.json.key]) {
      const r = await call("GET", path, { headers: { authorization: `Bearer ${key}` } });
      expect([401, 403], r.text).toContain(r.status);
    }
  });
});
