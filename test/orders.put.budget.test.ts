import { describe, expect, it } from "vitest";
import { wrapD1 } from "./d1-wrap";
import { post } from "./helpers";
import { change, order, stocked } from "./orders-put-helpers";

// D1 cost of PUT /v1/orders (README, "Performance"): a status change is one round trip, line edits
// two, and the statements do not grow with the number of lines.

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
  it.each(["paid", "done", "cancelled"])(
    "changes the status to %s in ONE round trip, whatever the lines",
    async (status) => {
      const small = await bigOrder(1);
      const big = await bigOrder(100);
      const s = wrapD1();
      const r1 = await change([{ order_id: small.id, status }], { env: { DB: s.db } });
      expect(r1.json.results.update_1.success).toBe(true);
      const b = wrapD1();
      const r2 = await change([{ order_id: big.id, status }], { env: { DB: b.db } });
      expect(r2.json.results.update_1.success).toBe(true);
      expect(s.counts.calls).toBe(1);
      expect(b.counts.calls).toBe(1);
      expect(b.counts.statementsPerCall).toEqual(s.counts.statementsPerCall);
    },
  );

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
