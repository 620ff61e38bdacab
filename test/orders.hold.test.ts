import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { HOLD_BATCH, HOLD_REASON, HOLD_ROUNDS } from "../src/orders/hold";
import { scheduled } from "../src/scheduled";
import { wrapD1 } from "./d1-wrap";
import { get, post, subscribeAll } from "./helpers";
import { change, eventsOf, order, readOrder, stocked, stockOf } from "./orders-put-helpers";

// Events are recorded only while an endpoint subscribes (README, "Webhooks").
beforeAll(subscribeAll);

// The unpaid hold (README, "Orders"): the scheduled job cancels, with restock, unpaid orders
// older than UNPAID_ORDER_HOLD_MINUTES, in bounded batches, and never touches a paid order.

const MINUTE = 60_000;

/** Makes orders look placed `minutes` ago (the job compares created_at with its run time). */
async function age(ids: number[], minutes: number) {
  await env.DB.prepare("UPDATE orders SET created_at = ?2 WHERE id IN (SELECT value FROM json_each(?1))")
    .bind(JSON.stringify(ids), Date.now() - minutes * MINUTE)
    .run();
}

const held = (minutes: string) => ({ ...env, UNPAID_ORDER_HOLD_MINUTES: minutes });

describe("unpaid hold", () => {
  it("does nothing while UNPAID_ORDER_HOLD_MINUTES is unset", async () => {
    const p = await stocked(10);
    const id = await order([{ sku: p.sku, qty: 2 }]);
    await age([id], 60 * 24 * 365);
    await scheduled(env);
    await scheduled({ ...env, UNPAID_ORDER_HOLD_MINUTES: "" });
    await scheduled({ ...env, UNPAID_ORDER_HOLD_MINUTES: "soon" });
    expect((await readOrder(id)).status).toBe("unpaid");
    expect(await stockOf(p.id)).toBe(8);
  });

  it("cancels exactly the expired unpaid orders with restock and an event, never a paid one", async () => {
    const p = await stocked(20);
    const expired = await order([{ sku: p.sku, qty: 3 }]);
    const fresh = await order([{ sku: p.sku, qty: 2 }]);
    const paid = await order([{ sku: p.sku, qty: 4 }]);
    const done = await order([{ sku: p.sku, qty: 1 }]);
    await change([
      { order_id: paid, status: "paid" },
      { order_id: done, status: "done" },
    ]);
    await age([expired, paid, done], 31);
    await age([fresh], 29);
    expect(await stockOf(p.id)).toBe(10);

    await scheduled(held("30"));

    const o = await get(`/v1/orders/${expired}`, { env: { UNPAID_ORDER_HOLD_MINUTES: "30" } });
    expect(o.json).toMatchObject({ status: "cancelled", cancel_reason: HOLD_REASON, hold_expires_at: null });
    expect(o.json.date_cancelled).not.toBeNull();
    expect((await readOrder(fresh)).status).toBe("unpaid");
    expect((await readOrder(paid)).status).toBe("paid");
    expect((await readOrder(done)).status).toBe("done");
    expect(await stockOf(p.id)).toBe(13);
    expect(await eventsOf(expired)).toEqual(["order.created", "order.cancelled"]);
    expect(await eventsOf(paid)).toEqual(["order.created", "order.new"]);

    // A second run finds nothing more: the stock is returned once.
    await scheduled(held("30"));
    expect(await stockOf(p.id)).toBe(13);
    expect(await eventsOf(expired)).toEqual(["order.created", "order.cancelled"]);
    // The order refuses changes like any cancelled order.
    const r = await change([{ order_id: expired, status: "paid" }]);
    expect(r.status).toBe(409);
  });

  it("works through many expired orders in bounded batches, in few D1 calls per run", async () => {
    const p = await stocked(1000);
    const body = (n: number) =>
      Array.from({ length: n }, () => ({ order_id: "create", products: [{ sku: p.sku, qty: 1 }] }));
    const a = await post("/v1/orders", body(100));
    const b = await post("/v1/orders", body(100));
    const c = await post("/v1/orders", body(50));
    const ids = [a, b, c].flatMap((r) => Object.values(r.json.results).map((x: any) => x.order_id));
    await age(ids, 120);
    expect(await stockOf(p.id)).toBe(750);

    const { db, counts } = wrapD1();
    await scheduled({ ...held("60"), DB: db });
    const cancelledFirst = HOLD_BATCH * HOLD_ROUNDS;
    expect(cancelledFirst).toBeLessThan(250);
    expect(await stockOf(p.id)).toBe(750 + cancelledFirst);
    // Per round one read and one write batch, plus the idempotency purge and the webhook sweep's
    // one batch: the whole cron run stays far below the free plan's 50 D1 queries per invocation.
    expect(counts.calls).toBeLessThanOrEqual(2 * HOLD_ROUNDS + 2);
    expect(counts.statements).toBeLessThan(50);

    await scheduled(held("60"));
    expect(await stockOf(p.id)).toBe(1000);
    const { results } = await env.DB.prepare(
      "SELECT DISTINCT status, cancel_reason FROM orders WHERE id IN (SELECT value FROM json_each(?1))",
    )
      .bind(JSON.stringify(ids))
      .all();
    expect(results).toEqual([{ status: "cancelled", cancel_reason: HOLD_REASON }]);
  });
});
