import { env } from "cloudflare:workers";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { USER_AGENT } from "../src/webhooks/attempt";
import {
  calls,
  consume,
  deliveries,
  endpoint,
  event,
  headersOf,
  sent,
  useDeliveryFakes,
} from "./fixtures/webhooks-deliver";
import { bodyText, get } from "./helpers";

// What the queue consumer sends an endpoint of each format: the standard format's signed POST of
// the event, the modelled API's GET naming it in the query. test/fixtures/webhooks-deliver.ts
// drives the consumer with fake batches, a stubbed fetch and a stand-in queue.

useDeliveryFakes();

// A quickbutik delivery's signed text is its query, not JSON: verified as it is, not parsed.
const RAW = { jsonParse: false };

describe("standard format", () => {
  it("POSTs the payload, signed so that the standardwebhooks package verifies it", async () => {
    const ep = await endpoint({ events: ["order.new"] });
    const at = Date.now();
    const id = await event("order.new", { order_id: 1001 }, at);
    const { ids, result } = await consume([{ body: { event_id: id } }]);
    expect(calls).toHaveLength(1);
    const c = calls[0];
    expect(c.url).toBe(ep.url);
    expect(c.init.method).toBe("POST");
    expect(c.init.redirect).toBe("manual");
    expect(c.init.signal).toBeInstanceOf(AbortSignal);
    const h = headersOf(c);
    expect(h["content-type"]).toBe("application/json");
    expect(h["user-agent"]).toBe(USER_AGENT);
    expect(h["webhook-id"]).toBe(id);
    expect(Math.abs(Number(h["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(5);
    expect(h["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    const body = bodyText(c.init.body);
    // The event's order is not in the database here: its id and deleted (webhooks.payload.test.ts
    // has the objects themselves).
    expect(JSON.parse(body)).toEqual({
      type: "order.new",
      timestamp: new Date(at).toISOString(),
      data: { order_id: 1001, deleted: true },
    });
    expect(new Webhook(ep.secret).verify(body, h)).toEqual(JSON.parse(body));
    // A wrong secret or a changed body does not verify.
    expect(() => new Webhook(`whsec_${btoa("x".repeat(32))}`).verify(body, h)).toThrow();
    expect(() => new Webhook(ep.secret).verify(body.replace("1001", "1002"), h)).toThrow();

    expect(result.explicitAcks).toEqual(ids);
    expect(result.retryMessages).toEqual([]);
    expect(sent).toEqual([]);
    const rows = await deliveries(ep.id);
    expect(rows).toEqual([
      expect.objectContaining({ event_id: id, event_type: "order.new", attempt: 1, status: 200, outcome: "delivered" }),
    ]);
    const ev = await env.DB.prepare("SELECT dispatched_at FROM events WHERE id = ?").bind(id).first<any>();
    expect(ev.dispatched_at).toBeGreaterThan(0);
    const listed = await get(`/v1/webhooks/${ep.id}/deliveries`);
    expect(listed.json.deliveries[0]).toMatchObject({ event_id: id, attempt: 1, status: 200, outcome: "delivered" });
  });

  it("names products by product_id", async () => {
    const ep = await endpoint();
    const id = await event("product.delete", { product_id: 77 });
    await consume([{ body: { event_id: id } }]);
    const body = JSON.parse(bodyText(calls[0].init.body));
    expect(body).toMatchObject({ type: "product.delete", data: { product_id: 77, deleted: true } });
    expect(new Webhook(ep.secret).verify(bodyText(calls[0].init.body), headersOf(calls[0]))).toBeTruthy();
  });
});

describe("quickbutik format", () => {
  it("GETs url?event_type&order_id with the same headers signing the query as sent", async () => {
    const ep = await endpoint({ format: "quickbutik", url: "https://shop.example.com/hook?secret=s3" });
    const id = await event("order.done", { order_id: 1001 });
    await consume([{ body: { event_id: id } }]);
    expect(calls).toHaveLength(1);
    const c = calls[0];
    expect(c.init.method).toBe("GET");
    expect(c.init.body).toBeUndefined();
    expect(c.url).toBe("https://shop.example.com/hook?secret=s3&event_type=order.done&order_id=1001");
    const h = headersOf(c);
    expect(h["content-type"]).toBeUndefined();
    expect(h["user-agent"]).toBe(USER_AGENT);
    expect(h["webhook-id"]).toBe(id);
    const query = "secret=s3&event_type=order.done&order_id=1001";
    expect(new Webhook(ep.secret).verify(query, h, RAW)).toBeUndefined();
    // The signature covers the query, not an empty body.
    expect(() => new Webhook(ep.secret).verify("", h, RAW)).toThrow(WebhookVerificationError);
  });

  // A captured request replayed with one parameter changed (docs/webhooks.md, "Formats").
  it.each([
    ["another event_type", "event_type=order.done", "event_type=order.new"],
    ["another order_id", "order_id=1001", "order_id=1002"],
    ["the receiver's own parameter changed", "secret=s3", "secret=s4"],
    ["a parameter added", "order_id=1001", "order_id=1001&product_id=5"],
    ["the parameters reordered", "secret=s3&event_type=order.done", "event_type=order.done&secret=s3"],
  ])("a captured GET with %s does not verify; the original does", async (_, from, to) => {
    const ep = await endpoint({ format: "quickbutik", url: "https://shop.example.com/hook?secret=s3" });
    const id = await event("order.done", { order_id: 1001 });
    await consume([{ body: { event_id: id } }]);
    const captured = new URL(calls[0].url).search.slice(1);
    const replayed = captured.replace(from, to);
    expect(replayed).not.toBe(captured);
    const wh = new Webhook(ep.secret);
    expect(wh.verify(captured, headersOf(calls[0]), RAW)).toBeUndefined();
    expect(() => wh.verify(replayed, headersOf(calls[0]), RAW)).toThrow(WebhookVerificationError);
  });

  it("uses product_id for product events", async () => {
    const ep = await endpoint({ format: "quickbutik" });
    const id = await event("product.add", { product_id: 5 });
    await consume([{ body: { event_id: id } }]);
    const u = new URL(calls[0].url);
    expect(Object.fromEntries(u.searchParams)).toEqual({ event_type: "product.add", product_id: "5" });
    expect(
      new Webhook(ep.secret).verify("event_type=product.add&product_id=5", headersOf(calls[0]), RAW),
    ).toBeUndefined();
  });
});
