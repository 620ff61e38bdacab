import { env } from "cloudflare:workers";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { post, subscribeAll } from "./helpers";
import { change, eventsOf, order, readOrder, stocked, stockOf } from "./orders-put-helpers";

// Events are recorded only while an endpoint subscribes (docs/webhooks.md, "Webhooks").
beforeAll(subscribeAll);

// Concurrency of PUT /v1/orders (docs/orders.md, "Orders"): stock is never oversold and never returned
// twice, whatever runs at the same time (cancels, line edits, payments, new orders).

/** Stock each product should have: its start minus the lines of orders that are not cancelled. */
async function expectedStock(productIds: number[], start: number) {
  const { results } = await env.DB.prepare(
    `SELECT l.product_id AS id, sum(l.qty) AS n FROM order_lines AS l JOIN orders AS o ON o.id = l.order_id
     WHERE o.status <> 'cancelled' AND l.product_id IN (SELECT value FROM json_each(?1)) GROUP BY 1`,
  )
    .bind(JSON.stringify(productIds))
    .all<{ id: number; n: number }>();
  const taken = new Map(results.map((r) => [r.id, r.n]));
  return productIds.map((id) => start - (taken.get(id) ?? 0));
}

describe("concurrent PUT /v1/orders", () => {
  it("returns stock exactly once under 20 concurrent cancels of one order", async () => {
    const p = await stocked(50);
    const id = await order([{ sku: p.sku, qty: 7 }]);
    expect(await stockOf(p.id)).toBe(43);
    // Half on the one-trip path, half keyed (read, plan, version-guarded write).
    const rs = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        change(
          [{ order_id: id, status: "cancelled" }],
          i % 2 ? { headers: { "idempotency-key": `c-${id}-${i}` } } : {},
        ),
      ),
    );
    for (const r of rs) expect(r.json.results.update_1.success, r.text).toBe(true);
    expect(await stockOf(p.id)).toBe(50);
    expect(await eventsOf(id)).toEqual(["order.created", "order.cancelled"]);
  });

  it("a cancel racing a line edit leaves stock = start - lines of live orders", async () => {
    for (let round = 0; round < 5; round++) {
      const p = await stocked(30);
      const id = await order([{ sku: p.sku, qty: 2 }]);
      const [edit, cancel] = await Promise.all([
        change([{ order_id: id, products_add: [{ sku: p.sku, qty: 3 }] }]),
        change([{ order_id: id, status: "cancelled" }]),
      ]);
      expect(cancel.json.results.update_1.success).toBe(true);
      // The edit either went first (and its lines were returned by the cancel) or was refused.
      expect([200, 409]).toContain(edit.status);
      expect((await readOrder(id)).status).toBe("cancelled");
      expect(await stockOf(p.id)).toBe(30);
    }
  });

  it("keeps the stock invariant over random concurrent sequences of create / edit / pay / cancel", async () => {
    const START = 12;
    const op = fc.oneof(
      fc.record({ kind: fc.constant("create" as const), product: fc.nat(1), qty: fc.integer({ min: 1, max: 4 }) }),
      fc.record({
        kind: fc.constant("edit" as const),
        order: fc.nat(2),
        product: fc.nat(1),
        qty: fc.integer({ min: 1, max: 4 }),
        remove: fc.boolean(),
      }),
      fc.record({ kind: fc.constant("pay" as const), order: fc.nat(2) }),
      fc.record({ kind: fc.constant("cancel" as const), order: fc.nat(2), keyed: fc.boolean() }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 2, maxLength: 8 }), async (ops) => {
        const products = [await stocked(START), await stocked(START)];
        const orders = [
          await order([{ sku: products[0].sku, qty: 1 }]),
          await order([
            { sku: products[0].sku, qty: 1 },
            { sku: products[1].sku, qty: 2 },
          ]),
          await order([{ sku: products[1].sku, qty: 3 }]),
        ];
        let n = 0;
        const rs = await Promise.all(
          ops.map((o) => {
            if (o.kind === "create") {
              return post("/v1/orders", [
                { order_id: "create", products: [{ sku: products[o.product].sku, qty: o.qty }] },
              ]);
            }
            const id = orders[o.order];
            if (o.kind === "edit") {
              const sku = products[o.product].sku;
              return change([
                o.remove
                  ? { order_id: id, products_remove: [{ sku }] }
                  : { order_id: id, products_add: [{ sku, qty: o.qty }] },
              ]);
            }
            if (o.kind === "pay") return change([{ order_id: id, status: "paid" }]);
            const init = o.keyed ? { headers: { "idempotency-key": `p-${id}-${++n}` } } : {};
            return change([{ order_id: id, status: "cancelled" }], init);
          }),
        );
        for (const r of rs) expect([200, 400, 409, 503], r.text).toContain(r.status);
        const ids = products.map((p) => p.id);
        const actual = [await stockOf(ids[0]), await stockOf(ids[1])];
        expect(actual).toEqual(await expectedStock(ids, START));
        for (const s of actual) expect(s).toBeGreaterThanOrEqual(0);
      }),
      { numRuns: 12 },
    );
  }, 60_000);
});
