import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { wrapD1 } from "./d1-wrap";
import { post, subscribeAll } from "./helpers";
import { change, order, stocked, stockOf } from "./orders-put-helpers";

// Events are recorded only while an endpoint subscribes (docs/webhooks.md, "Webhooks").
beforeAll(subscribeAll);

// D1 cost of PUT /v1/orders (docs/performance.md, "Performance"): a status change is one round trip; a cancel
// that gives stock back, line edits and keyed changes two (a read, then the write), and the
// statements do not grow with the number of lines or orders.

async function bigOrder(lines: number) {
  const skus: string[] = [];
  const r = await post(
    "/v1/products",
    Array.from({ length: lines }, (_, i) => {
      const sku = `BUDPUT-${Date.now().toString(36)}-${lines}-${i}`;
      skus.push(sku);
      return { sku, title: `Item ${i}`, price: 10 + i, stock: 1000, tax_rate: i % 2 ? 12 : 25 };
    }),
  );
  expect(r.status).toBe(200);
  const id = await order(skus.map((sku) => ({ sku, qty: 2 })));
  return { id, skus };
}

describe("D1 budget of PUT /v1/orders", () => {
  it.each([
    ["paid", 1],
    ["done", 1],
    ["cancelled", 2],
  ])("changes the status to %s in %i round trip(s), whatever the lines", async (status, trips) => {
    const small = await bigOrder(1);
    const big = await bigOrder(100);
    const s = wrapD1();
    const r1 = await change([{ order_id: small.id, status }], { env: { DB: s.db } });
    expect(r1.json.results.update_1.success).toBe(true);
    const b = wrapD1();
    const r2 = await change([{ order_id: big.id, status }], { env: { DB: b.db } });
    expect(r2.json.results.update_1.success).toBe(true);
    expect(s.counts.calls).toBe(trips);
    expect(b.counts.calls).toBe(trips);
    expect(b.counts.statementsPerCall).toEqual(s.counts.statementsPerCall);
  });

  it("changes 100 orders in the round trips of one, with the same statements", async () => {
    const p = await stocked(1000);
    const r = await post(
      "/v1/orders",
      Array.from({ length: 100 }, () => ({ order_id: "create", products: [{ sku: p.sku, qty: 2 }] })),
    );
    const ids: number[] = Object.values(r.json.results).map((x: any) => x.order_id);
    expect(await stockOf(p.id)).toBe(800);
    for (const [status, trips] of [
      ["paid", 1],
      ["cancelled", 2],
    ] as const) {
      const one = wrapD1();
      const first = await change([{ order_id: ids[0], status }], { env: { DB: one.db } });
      expect(first.json.results.update_1.success).toBe(true);
      const all = wrapD1();
      const rest = await change(
        ids.slice(1).map((order_id) => ({ order_id, status })),
        { env: { DB: all.db } },
      );
      expect(Object.values(rest.json.results).every((x: any) => x.success && x.status === status)).toBe(true);
      expect(one.counts.calls).toBe(trips);
      expect(all.counts.calls).toBe(trips);
      expect(all.counts.statementsPerCall).toEqual(one.counts.statementsPerCall);
    }
    expect(await stockOf(p.id)).toBe(1000);
    const events = await env.DB.prepare(
      "SELECT type, count(*) AS n FROM events WHERE order_id IN (SELECT value FROM json_each(?1)) GROUP BY 1 ORDER BY 1",
    )
      .bind(JSON.stringify(ids))
      .all();
    expect(events.results).toEqual([
      { type: "order.cancelled", n: 100 },
      { type: "order.created", n: 100 },
      { type: "order.new", n: 100 },
    ]);
  });

  it("edits lines in two round trips with the same statements for 1 and 100 lines", async () => {
    const small = await bigOrder(1);
    const big = await bigOrder(100);
    const s = wrapD1();
    const r1 = await change([{ order_id: small.id, products_add: [{ sku: small.skus[0] }], status: "paid" }], {
      env: { DB: s.db },
    });
    expect(r1.json.results.update_1.success).toBe(true);
    const b = wrapD1();
    const r2 = await change(
      [{ order_id: big.id, products: big.skus.map((sku) => ({ sku, qty: 1 })), status: "paid" }],
      { env: { DB: b.db } },
    );
    expect(r2.json.results.update_1.success, r2.text).toBe(true);
    expect(s.counts.calls).toBe(2);
    expect(b.counts.calls).toBe(2);
    expect(b.counts.statementsPerCall).toEqual(s.counts.statementsPerCall);
  });

  it("a keyed status change takes two round trips (the answer is recorded in the write)", async () => {
    const p = await stocked(10);
    const id = await order([{ sku: p.sku, qty: 1 }]);
    const { db, counts } = wrapD1();
    const r = await change([{ order_id: id, status: "paid" }], {
      env: { DB: db },
      headers: { "idempotency-key": `b-${id}` },
    });
    expect(r.status).toBe(200);
    expect(counts.calls).toBe(2);
  });
});
