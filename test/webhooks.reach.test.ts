import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, createProduct, get, post, uid } from "./helpers";

// What a key with the `webhooks` scope reaches through the event view and resend
// (docs/webhooks.md, "Reading a delivery"): only events the endpoint was subscribed to when they
// happened, and an event's order or product only with that resource's own read scope. Journeys
// of an integration holding a stored key with `webhooks` alone.

const as = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });
const later = () => new Promise((r) => setTimeout(r, 5));

async function keyWith(...scopes: string[]) {
  const r = await post("/v1/keys", { name: uid("integration"), type: "secret", scopes });
  expect(r.status, r.text).toBe(201);
  return r.json.key as string;
}

async function register(key: string, events: string[], format = "standard") {
  const r = await post("/v1/webhooks", { url: `https://hooks.example/${uid("h")}`, events, format }, as(key));
  expect(r.status, r.text).toBe(201);
  return r.json.id as number;
}

const CUSTOMER = {
  email: "anna.reach@example.com",
  phone: "+46 70-123 45 67",
  billing_details: { firstname: "Anna", lastname: "Svensson", address: "Storgatan 1", city: "Stockholm" },
};

/** A customer's order through the API: its id and its order.created event's id. */
async function customerOrder() {
  const sku = uid();
  await createProduct({ sku, stock: 5 });
  const made = await post("/v1/orders", [{ order_id: "create", customer: CUSTOMER, products: [{ sku, qty: 1 }] }]);
  expect(made.status, made.text).toBe(200);
  const orderId = made.json.results.create_1.order_id as number;
  const ev = await env.DB.prepare("SELECT id FROM events WHERE order_id = ? AND type = 'order.created'")
    .bind(orderId)
    .first<{ id: string }>();
  expect(ev).not.toBeNull();
  return { orderId, eventId: ev?.id as string };
}

/** The retries queue as the app sees it, recording what a resend queues. */
function recordingQueue() {
  const queued: unknown[] = [];
  const RETRIES = {
    send: async (m: unknown) => void queued.push(m),
    sendBatch: async (b: unknown[]) => void queued.push(...b),
  };
  return { queued, env: { RETRIES } as never };
}

describe("a webhooks-only integration trying to read a customer", () => {
  it("is refused the order through the event view, 403 naming orders:read, in either format", async () => {
    const key = await keyWith("webhooks");
    const standard = await register(key, ["order.created"]);
    const quickbutik = await register(key, ["*"], "quickbutik");
    const { orderId, eventId } = await customerOrder();
    // The order is there, and the key cannot read it on its own route either.
    expect((await get(`/v1/orders/${orderId}`, as(key))).status).toBe(403);
    for (const id of [standard, quickbutik]) {
      const r = await get(`/v1/webhooks/${id}/events/${eventId}`, as(key));
      expect(r.status, r.text).toBe(403);
      expect(r.json).toEqual({
        code: 403,
        error: "this key lacks the scope orders:read, which reading an order needs",
      });
      expect(r.text).not.toContain(CUSTOMER.email);
    }
  });

  it.each([
    ["webhooks and orders:read", ["webhooks", "orders:read"], 200],
    ["webhooks and products:read", ["webhooks", "products:read"], 403],
    ["orders:read alone", ["orders:read"], 403],
  ])("with %s (%j): %i", async (_, scopes, status) => {
    const endpointId = await register(await keyWith("webhooks"), ["order.created"]);
    const { eventId } = await customerOrder();
    const r = await get(`/v1/webhooks/${endpointId}/events/${eventId}`, as(await keyWith(...scopes)));
    expect(r.status, r.text).toBe(status);
    if (status === 200) expect(r.json.payload.data.customer).toMatchObject({ email: CUSTOMER.email });
  });

  it("a product's event needs products:read", async () => {
    const key = await keyWith("webhooks");
    const endpointId = await register(key, ["product.add"]);
    const p = await createProduct({ sku: uid(), stock: 2 });
    const ev = await env.DB.prepare("SELECT id FROM events WHERE product_id = ?").bind(p.product_id).first<any>();
    const path = `/v1/webhooks/${endpointId}/events/${ev.id}`;
    const refused = await get(path, as(key));
    expect(refused.status).toBe(403);
    expect(refused.json.error).toBe("this key lacks the scope products:read, which reading a product needs");
    const shown = await get(path, as(await keyWith("webhooks", "products:read")));
    expect(shown.status, shown.text).toBe(200);
    expect(shown.json.payload.data.product_id).toBe(p.product_id);
  });
});

describe("an endpoint reaches only the events it was subscribed to when they happened", () => {
  // Each case: which endpoint the integration asks through, beside the one that took the event.
  it.each([
    ["registered later, subscribed only to product.delete", ["product.delete"], "after"],
    ["registered later, subscribed to everything", ["*"], "after"],
    ["registered before, subscribed only to product.delete", ["product.delete"], "before"],
  ] as const)(
    "an endpoint %s: a past order.created is 404 to view and resend, nothing queued",
    async (_, events, when) => {
      const key = await keyWith("webhooks", "orders:read");
      const earlier = when === "before" ? await register(key, [...events]) : undefined;
      const took = await register(key, ["order.created"]);
      const { eventId } = await customerOrder();
      await later();
      const asking = earlier ?? (await register(key, [...events]));
      const q = recordingQueue();

      const view = await get(`/v1/webhooks/${asking}/events/${eventId}`, as(key));
      const resend = await call("POST", `/v1/webhooks/${asking}/events/${eventId}/resend`, { ...as(key), env: q.env });
      // The same words as an event that does not exist at all: nothing tells them apart.
      const unknown = await get(`/v1/webhooks/${asking}/events/nope`, as(key));
      expect(unknown.json.error).toBe(`no event nope for webhook ${asking}`);
      for (const r of [view, resend]) {
        expect(r.status, r.text).toBe(404);
        expect(r.json).toEqual({ code: 404, error: `no event ${eventId} for webhook ${asking}` });
      }
      expect(q.queued).toEqual([]);
      const logged = await env.DB.prepare("SELECT count(*) AS n FROM webhook_deliveries WHERE endpoint_id = ?")
        .bind(asking)
        .first<{ n: number }>();
      expect(logged?.n).toBe(0);

      // The endpoint that took it still sees and resends it.
      expect((await get(`/v1/webhooks/${took}/events/${eventId}`, as(key))).status).toBe(200);
      const again = await call("POST", `/v1/webhooks/${took}/events/${eventId}/resend`, { ...as(key), env: q.env });
      expect(again.status, again.text).toBe(202);
      expect(q.queued).toEqual([{ event_id: eventId, endpoint_id: took, attempt: 1 }]);
    },
  );

  it("a resend needs only webhooks: it sends the endpoint what it was owed and answers no order", async () => {
    const key = await keyWith("webhooks");
    const took = await register(key, ["order.created"]);
    const { eventId } = await customerOrder();
    const q = recordingQueue();
    const r = await call("POST", `/v1/webhooks/${took}/events/${eventId}/resend`, { ...as(key), env: q.env });
    expect(r.status, r.text).toBe(202);
    expect(r.text).not.toContain(CUSTOMER.email);
    expect(q.queued).toHaveLength(1);
  });
});
