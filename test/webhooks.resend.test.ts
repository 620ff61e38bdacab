import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, get, post, uid } from "./helpers";

// POST /v1/webhooks/{id}/events/{event_id}/resend, and deliveries naming what their event is
// about (docs/webhooks.md, "Deliveries"): the admin's Resend button and its list.

async function endpoint() {
  const r = await post("/v1/webhooks", { url: `https://hooks.example/${uid("h")}`, events: ["*"] });
  expect(r.status, r.text).toBe(201);
  return r.json.id as number;
}

/** An event and a delivery row of it, as the consumer writes them. */
async function delivered(endpointId: number, orderId: number | null, productId: number | null) {
  const eventId = crypto.randomUUID();
  await env.DB.batch([
    env.DB.prepare("INSERT INTO events (id, type, order_id, product_id, created_at) VALUES (?, ?, ?, ?, ?)").bind(
      eventId,
      orderId ? "order.new" : "product.update",
      orderId,
      productId,
      Date.now(),
    ),
    env.DB.prepare(
      `INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, attempt, status, error, duration_ms, outcome, created_at)
       VALUES (?, ?, ?, 1, 500, NULL, 12, 'retrying', ?)`,
    ).bind(endpointId, eventId, orderId ? "order.new" : "product.update", Date.now()),
  ]);
  return eventId;
}

describe("deliveries name their order or product", () => {
  it("answers order_id and product_id of each delivery's event", async () => {
    const id = await endpoint();
    await delivered(id, 1234, null);
    await delivered(id, null, 77);
    const r = await get(`/v1/webhooks/${id}/deliveries`);
    expect(r.status).toBe(200);
    expect(r.json.deliveries.map((d: any) => [d.event_type, d.order_id, d.product_id])).toEqual([
      ["product.update", null, 77],
      ["order.new", 1234, null],
    ]);
  });
});

describe("POST /v1/webhooks/{id}/events/{event_id}/resend", () => {
  it("queues the event for that endpoint, attempt 1: 202", async () => {
    const id = await endpoint();
    const eventId = await delivered(id, 99, null);
    const sent: unknown[] = [];
    const RETRIES = { send: async (m: unknown) => void sent.push(m), sendBatch: async () => {} };
    const r = await call("POST", `/v1/webhooks/${id}/events/${eventId}/resend`, { env: { RETRIES } as never });
    expect(r.status, r.text).toBe(202);
    expect(r.json).toEqual({ queued: true, event_id: eventId, endpoint_id: id });
    expect(sent).toEqual([{ event_id: eventId, endpoint_id: id, attempt: 1 }]);
  });

  it.each([
    ["an unknown event", async (id: number) => `/v1/webhooks/${id}/events/nope/resend`],
    [
      "an unknown endpoint",
      async () => `/v1/webhooks/999999/events/${await delivered(await endpoint(), 1, null)}/resend`,
    ],
  ])("is 404 for %s", async (_, path) => {
    const r = await call("POST", await path(await endpoint()));
    expect(r.status).toBe(404);
  });

  it("needs the scope webhooks", async () => {
    const k = await post("/v1/keys", { name: "orders only", type: "secret", scopes: ["orders:read"] });
    const id = await endpoint();
    const r = await call("POST", `/v1/webhooks/${id}/events/x/resend`, {
      headers: { authorization: `Bearer ${k.json.key}` },
    });
    expect(r.status).toBe(403);
  });
});
