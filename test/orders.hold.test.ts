import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { HOLD_BATCH, HOLD_REASON, HOLD_ROUNDS } from "../src/orders/hold";
import { scheduled } from "../src/scheduled";
import { wrapD1 } from "./d1-wrap";
import { get, post, quietEnv, subscribeAll } from "./helpers";
import { change, eventsOf, order, readOrder, stocked, stockOf } from "./orders-put-helpers";

// Events are recorded only while an endpoint subscribes (docs/webhooks.md, "Webhooks").
beforeAll(subscribeAll);

// The unpaid hold (docs/orders.md, "Orders"): the scheduled job cancels, with restock, unpaid orders
// older than UNPAID_ORDER_HOLD_MINUTES, in bounded batches, and never touches a paid order.

const MINUTE = 60_000;

/** Makes orders look placed `minutes` ago (the job compares created_at with its run time). */
async function age(ids: number[], minutes: number) {
  await env.DB.prepare("UPDATE orders SET created_at = ?2 WHERE id IN (SELECT value FROM json_each(?1))")
    .bind(JSON.stringify(ids), Date.now() - minutes * MINUTE)
    .run();
}

const held = (minutes: string) => ({ ...quietEnv, UNPAID_ORDER_HOLD_MINUTES: minutes });

describe("unpaid hold", () => {
  it("does nothing while UNPAID_ORDER_HOLD_MINUTES is unset", async () => {
    const p = await stocked(10);
    const id = await order([{ sku: p.sku, qty: 2 }]);
    await age([id], 60 * 24 * 365);
    await scheduled(quietEnv);
    await scheduled({ ...quietEnv, UNPAID_ORDER_HOLD_MINUTES: "" });
    await scheduled({ ...quietEnv, UNPAID_ORDER_HOLD_MINUTES: "soon" });
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
    // Its history says who cancelled it: the store, with the stock returned.
    expect(o.json.history).toEqual([
      {
        at: o.json.date_cancelled,
        change: "cancelled",
        restock: true,
        reason: HOLD_REASON,
        key: { id: null, name: null },
        via: "system",
      },
    ]);
    expect((await readOrder(fresh)).status).toBe("unpaid");
    expect((await readOrder(paid)).status).toBe("paid");
    expect((await readOrder(done)).status).toBe("done");
    expect(await stockOf(p.id)).toBe(13);
    expect(await eventsOf(expired)).toEqual(["order.created", "order.cancelled"]);
    expect(await eventsOf(paid)).toEqual(["order.created", "order.new"]);

    // A second run finds nothing more: the stock is returned once.
    await scheduled(held("30"));
    expect(await stockOf(p.id)).toBe(13);
    expect((await readOrder(expired)).history).toHaveLength(1);
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
    // Per round one read and one write batch, plus the idempotency purge, the webhook sweep's one
    // batch and the session purge: the whole cron run stays far below the free plan's 50 D1
    // queries per invocation.
    expect(counts.calls).toBeLessThanOrEqual(2 * HOLD_ROUNDS + 3);
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

  it("never cancels an order that was paid or done, even when it was set back to unpaid", async () => {
    const p = await stocked(20);
    const repaid = await order([{ sku: p.sku, qty: 2 }]);
    const undone = await order([{ sku: p.sku, qty: 3 }]);
    const never = await order([{ sku: p.sku, qty: 1 }]);
    await change([
      { order_id: repaid, status: "paid" },
      { order_id: undone, status: "done" },
    ]);
    // Set back to unpaid (the way to edit a paid order's lines), then a line edit.
    await change([
      { order_id: repaid, status: "unpaid" },
      { order_id: undone, status: "unpaid" },
    ]);
    const edit = await change([{ order_id: repaid, products: [{ sku: p.sku, qty: 4 }] }]);
    expect(edit.status, edit.text).toBe(200);
    await age([repaid, undone, never], 600);

    await scheduled(held("30"));

    expect((await readOrder(repaid)).status).toBe("unpaid");
    expect((await readOrder(undone)).status).toBe("unpaid");
    expect((await readOrder(never)).status).toBe("cancelled");
    expect(await stockOf(p.id)).toBe(20 - 4 - 3);
    // Only the held order shows a deadline; re-payment of the paid one goes through.
    const shown = await get(`/v1/orders/${repaid}`, { env: { UNPAID_ORDER_HOLD_MINUTES: "30" } });
    expect(shown.json.hold_expires_at).toBeNull();
    const pay = await change([{ order_id: repaid, status: "paid" }]);
    expect(pay.status, pay.text).toBe(200);
    expect(await eventsOf(repaid)).toEqual(["order.created", "order.new"]);
  });

  it("racing pay, unpay and line edits, the sweep cancels only never-paid orders and returns stock once", async () => {
    const p = await stocked(400);
    const ids: number[] = [];
    for (let i = 0; i < 12; i++) ids.push(await order([{ sku: p.sku, qty: 1 }]));
    await age(ids, 600);
    // A third is paid and set back to unpaid while the sweep runs; a third gets a line edit
    // (it stays never-paid); a third is left alone.
    const paidBack = ids.filter((_, i) => i % 3 === 0);
    const edited = ids.filter((_, i) => i % 3 === 1);
    const racers = [
      scheduled(held("30")),
      (async () => {
        await change(paidBack.map((id) => ({ order_id: id, status: "paid" })));
        await change(paidBack.map((id) => ({ order_id: id, status: "unpaid" })));
      })(),
      change(edited.map((id) => ({ order_id: id, products: [{ sku: p.sku, qty: 2 }] }))),
      scheduled(held("30")),
    ];
    await Promise.all(racers);
    await scheduled(held("30"));

    const statuses = await Promise.all(ids.map(async (id) => (await readOrder(id)).status));
    const live = new Set<number>();
    for (const [i, id] of ids.entries()) {
      const o = await readOrder(id);
      // A never-paid order may be cancelled; one whose payment committed before the sweep's batch
      // must not be.
      if (o.status !== "cancelled") live.add(id);
      if (o.date_paid !== null) expect(o.status, `order ${id}`).not.toBe("cancelled");
      expect(statuses[i]).toBe(o.status);
    }
    // Stock equals the start minus the lines of every order that is not cancelled.
    let taken = 0;
    for (const id of live) {
      const o = await readOrder(id);
      taken += o.products.reduce((n: number, l: { qty: number }) => n + l.qty, 0);
    }
    expect(await stockOf(p.id)).toBe(400 - taken);
  });
});

describe("storefront hold", () => {
  /** An order made with a publishable key, from an address of its own. */
  async function storefrontOrder(sku: string, qty: number, n: number) {
    const k = await post("/v1/keys", { name: `shop ${sku}-${n}`, type: "publishable" });
    const r = await post("/v1/orders", [{ order_id: "create", products: [{ sku, qty }] }], {
      headers: { authorization: "", "x-publishable-key": k.json.key, "cf-connecting-ip": `192.0.2.${n}` },
      cf: { colo: "ARN" },
    });
    expect(r.status, r.text).toBe(200);
    return r.json.results.create_1.order_id as number;
  }

  it("is STOREFRONT_HOLD_MINUTES (60 unless set), whatever UNPAID_ORDER_HOLD_MINUTES says", async () => {
    const p = await stocked(20);
    const a = await storefrontOrder(p.sku, 2, 1);
    const b = await storefrontOrder(p.sku, 3, 2);
    const secret = await order([{ sku: p.sku, qty: 1 }]);
    await age([a, b, secret], 45);
    // A shorter hold for other orders does not reach storefront orders, and shows on each its own.
    await scheduled(held("30"));
    expect((await readOrder(a)).status).toBe("unpaid");
    expect((await readOrder(secret)).status).toBe("cancelled");
    const shown = (await get(`/v1/orders/${a}`)).json;
    expect(Date.parse(shown.hold_expires_at) - Date.parse(shown.created_at)).toBe(60 * MINUTE);
    // Set to 40 minutes, both are past it; the default of 60 would keep them.
    await scheduled({ ...quietEnv, STOREFRONT_HOLD_MINUTES: "40" });
    expect((await readOrder(a)).status).toBe("cancelled");
    expect((await readOrder(b)).status).toBe("cancelled");
    expect(await stockOf(p.id)).toBe(20);
  });
});
