import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { wrapD1 } from "./d1-wrap";
import { post, subscribeAll, uid } from "./helpers";
import { change, eventsOf, order, readOrder, stocked, stockOf } from "./orders-put-helpers";

// Events are recorded only while an endpoint subscribes (docs/webhooks.md, "Webhooks").
beforeAll(subscribeAll);

// PUT /v1/orders with an Idempotency-Key (docs/orders.md, "Idempotency"), and atomicity under injected
// D1 faults: an element's change, stock moves and events commit together or not at all.

const key = () => ({ "idempotency-key": uid("key") });

async function snapshot(orderId: number, productId: number) {
  const o = await readOrder(orderId);
  const events = await eventsOf(orderId);
  return { o, events, stock: await stockOf(productId) };
}

describe("Idempotency-Key on PUT /v1/orders", () => {
  it("replays a cancel for the same key and body, returning stock once", async () => {
    const p = await stocked(10);
    const id = await order([{ sku: p.sku, qty: 4 }]);
    const headers = key();
    const first = await change([{ order_id: id, status: "cancelled" }], { headers });
    expect(first.status).toBe(200);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const again = await change([{ order_id: id, status: "cancelled" }], { headers });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json).toEqual(first.json);
    expect(await stockOf(p.id)).toBe(10);
    const other = await change([{ order_id: id, status: "paid" }], { headers });
    expect(other.status).toBe(422);
  });

  it("replays a line edit of several elements, and a failed answer", async () => {
    const p = await stocked(20);
    const a = await order([{ sku: p.sku, qty: 1 }]);
    const b = await order([{ sku: p.sku, qty: 1 }]);
    const body = [
      { order_id: a, products_add: [{ sku: p.sku, qty: 2 }] },
      { order_id: b, status: "paid" },
      { order_id: 99999999, status: "paid" },
    ];
    const headers = key();
    const first = await change(body, { headers });
    expect(first.status).toBe(200);
    const again = await change(body, { headers });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json).toEqual(first.json);
    expect(await stockOf(p.id)).toBe(16);

    const missing = { order_id: 99999999, status: "paid" };
    const h2 = key();
    const f = await change(missing, { headers: h2 });
    expect(f.status).toBe(404);
    const r = await change(missing, { headers: h2 });
    expect(r.status).toBe(404);
    expect(r.headers.get("idempotent-replayed")).toBe("true");
  });

  it("replays status changes of several orders, recorded in their one write batch", async () => {
    const p = await stocked(20);
    const a = await order([{ sku: p.sku, qty: 1 }]);
    const b = await order([{ sku: p.sku, qty: 2 }]);
    const body = [
      { order_id: a, status: "paid" },
      { order_id: b, status: "cancelled" },
      { order_id: 99999999, status: "done" },
    ];
    const headers = key();
    const { db, counts } = wrapD1();
    const first = await change(body, { headers, env: { DB: db } });
    expect(first.status).toBe(200);
    expect(counts.calls).toBe(2);
    expect(first.json.results.update_3.success).toBe(false);
    const again = await change(body, { headers });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json).toEqual(first.json);
    expect(await stockOf(p.id)).toBe(19);
    expect(await eventsOf(a)).toEqual(["order.created", "order.new"]);
    expect(await eventsOf(b)).toEqual(["order.created", "order.cancelled"]);
  });

  it("of 10 concurrent requests with one key, one takes effect", async () => {
    const p = await stocked(20);
    const id = await order([{ sku: p.sku, qty: 1 }]);
    const headers = key();
    const body = [{ order_id: id, products_add: [{ sku: p.sku, qty: 1 }] }];
    const rs = await Promise.all(Array.from({ length: 10 }, () => change(body, { headers })));
    for (const r of rs) expect([200, 409], r.text).toContain(r.status);
    expect((await readOrder(id)).products[0].qty).toBe(2);
    expect(await stockOf(p.id)).toBe(18);
  });
});

describe("faults on PUT /v1/orders", () => {
  const bodies: [string, (sku: string) => Record<string, unknown>][] = [
    ["a status change", () => ({ status: "paid" })],
    ["a cancel", () => ({ status: "cancelled" })],
    ["a line edit with a status change", (sku) => ({ products_add: [{ sku, qty: 2 }], status: "paid" })],
  ];
  for (const [name, make] of bodies) {
    for (const keyed of [false, true]) {
      it(`${name}${keyed ? " (keyed)" : ""}: every failed D1 call leaves order, stock and events unchanged`, async () => {
        const probe = await stocked(10);
        const probeId = await order([{ sku: probe.sku, qty: 1 }]);
        const { db, counts } = wrapD1();
        await change([{ order_id: probeId, ...make(probe.sku) }], { env: { DB: db }, headers: keyed ? key() : {} });
        const calls = counts.calls;
        expect(calls).toBeGreaterThan(0);
        for (let failCall = 1; failCall <= calls; failCall++) {
          const p = await stocked(10);
          const id = await order([{ sku: p.sku, qty: 1 }]);
          const before = await snapshot(id, p.id);
          const headers = keyed ? key() : {};
          const faulty = wrapD1({ failCall });
          const r = await change([{ order_id: id, ...make(p.sku) }], { env: { DB: faulty.db }, headers });
          expect(r.status, r.text).toBe(503);
          expect(await snapshot(id, p.id)).toEqual(before);
          // The retry (same key) takes effect once, with its events.
          const retry = await change([{ order_id: id, ...make(p.sku) }], { headers });
          expect(retry.status, retry.text).toBe(200);
          expect((await eventsOf(id)).length).toBe(2);
        }
      });
    }
  }

  it("a failed create batch writes no order.created event", async () => {
    const p = await stocked(10);
    const before = await env.DB.prepare("SELECT count(*) AS n FROM events").first<{ n: number }>();
    const { db } = wrapD1({ failCall: 1 });
    const r = await post("/v1/orders", [{ order_id: "create", products: [{ sku: p.sku, qty: 1 }] }], {
      env: { DB: db },
    });
    expect(r.status).toBe(503);
    const after = await env.DB.prepare("SELECT count(*) AS n FROM events").first<{ n: number }>();
    expect(after).toEqual(before);
  });
});
