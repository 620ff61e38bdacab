import { beforeAll, describe, expect, it } from "vitest";
import { orderUpdateResults } from "../src/orders/openapi";
import { call, get, subscribeAll } from "./helpers";
import { change, eventsOf, order, readOrder, stocked, stockOf } from "./orders-put-helpers";

// Events are recorded only while an endpoint subscribes (docs/webhooks.md, "Webhooks").
beforeAll(subscribeAll);

// PUT /v1/orders: status changes (docs/orders.md, "Orders"): transitions, dates, cancel with restock,
// cancelled is final, the answer's shape, client flags and shipping_info.

describe("PUT /v1/orders status", () => {
  it("marks an order paid, then done with tracking, recording dates and events", async () => {
    const p = await stocked(10);
    const id = await order([{ sku: p.sku, qty: 2 }]);
    const paid = await change([{ order_id: String(id), status: "paid" }]);
    expect(paid.status).toBe(200);
    expect(orderUpdateResults.safeParse(paid.json).success).toBe(true);
    expect(paid.json.results.update_1).toMatchObject({
      success: true,
      order_id: id,
      status: "paid",
      currency: "SEK",
      subtotal: 200,
      total: 200,
      errors: [],
      notices: [],
    });
    const after = await readOrder(id);
    expect(after.status).toBe("paid");
    expect(after.date_paid).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(after.status_date).toBe(after.date_paid);
    expect(after.date_done).toBeNull();

    const done = await change({
      order_id: id,
      status: "done",
      shipping_info: { trackingnumber: "230491712300", company: "DHL" },
    });
    expect(done.json.results.update_1).toMatchObject({ success: true, status: "done" });
    const shipped = await readOrder(id);
    expect(shipped.shipping_info).toEqual({ trackingnumber: "230491712300", company: "DHL" });
    expect(shipped.date_done).not.toBeNull();
    expect(shipped.date_paid).toBe(after.date_paid);
    expect(await stockOf(p.id)).toBe(8);
    expect(await eventsOf(id)).toEqual(["order.created", "order.new", "order.done"]);
  });

  it("allows every transition but out of cancelled: unpaid->done, done->paid, paid->unpaid", async () => {
    const p = await stocked(10);
    const id = await order([{ sku: p.sku, qty: 1 }]);
    for (const status of ["done", "paid", "unpaid", "paid", "done"]) {
      const r = await change([{ order_id: id, status }]);
      expect(r.json.results.update_1, status).toMatchObject({ success: true, status });
    }
    // order.new only the first time the order is paid: an undo of done is not a new order.
    expect(await eventsOf(id)).toEqual(["order.created", "order.done", "order.new", "order.done"]);
  });

  it("treats the status the order already has as a no-op with a notice", async () => {
    const p = await stocked(10);
    const id = await order([{ sku: p.sku, qty: 1 }]);
    const before = await readOrder(id);
    const r = await change([{ order_id: id, status: "unpaid" }]);
    expect(r.status).toBe(200);
    expect(r.json.results.update_1.success).toBe(true);
    expect(r.json.results.update_1.notices).toEqual(["status: the order is already unpaid; nothing changed"]);
    const after = await readOrder(id);
    expect(after.updated_at).toBe(before.updated_at);
    expect(after.status_date).toBeNull();
  });

  it("cancels with restock once, records the date, and then refuses every change", async () => {
    const p = await stocked(10);
    const id = await order([{ sku: p.sku, qty: 3 }]);
    expect(await stockOf(p.id)).toBe(7);
    const r = await change([{ order_id: id, status: "cancelled" }]);
    expect(r.json.results.update_1).toMatchObject({ success: true, status: "cancelled" });
    expect(await stockOf(p.id)).toBe(10);
    const o = await readOrder(id);
    expect(o.date_cancelled).not.toBeNull();
    expect(o.cancel_reason).toBeNull();

    const again = await change([{ order_id: id, status: "cancelled" }]);
    expect(again.status).toBe(200);
    expect(again.json.results.update_1.notices).toEqual([`status: order ${id} is already cancelled; nothing changed`]);
    expect(await stockOf(p.id)).toBe(10);

    for (const body of [
      { status: "paid" },
      { status: "unpaid" },
      { status: "done" },
      { shipping_info: { trackingnumber: "1" } },
      { products_add: [{ sku: p.sku }] },
      { discount_add: { amount: 1 } },
    ]) {
      const refused = await change([{ order_id: id, ...body }]);
      expect(refused.status, JSON.stringify(body)).toBe(409);
      expect(refused.json).toMatchObject({
        code: 409,
        results: {
          update_1: { success: false, errors: ["a cancelled order cannot change; create a new order"] },
        },
      });
    }
    expect(await stockOf(p.id)).toBe(10);
    expect((await readOrder(id)).status).toBe("cancelled");
    expect(await eventsOf(id)).toEqual(["order.created", "order.cancelled"]);
  });

  it("cancels a paid or done order with restock too", async () => {
    const p = await stocked(10);
    const a = await order([{ sku: p.sku, qty: 2 }]);
    const b = await order([{ sku: p.sku, qty: 3 }]);
    await change([
      { order_id: a, status: "paid" },
      { order_id: b, status: "done" },
    ]);
    expect(await stockOf(p.id)).toBe(5);
    const r = await change([
      { order_id: a, status: "cancelled" },
      { order_id: b, status: "cancelled" },
    ]);
    expect(r.json.results.update_1.success && r.json.results.update_2.success).toBe(true);
    expect(await stockOf(p.id)).toBe(10);
  });

  it('cancels without returning stock with "restock": false', async () => {
    const p = await stocked(10);
    const id = await order([{ sku: p.sku, qty: 4 }]);
    const r = await change([{ order_id: id, status: "cancelled", restock: "false" }]);
    expect(r.json.results.update_1).toMatchObject({
      success: true,
      status: "cancelled",
      notices: ["restock: false: no stock was returned"],
    });
    expect(await stockOf(p.id)).toBe(6);
  });

  it("suppresses the events of a change with skip_webhook", async () => {
    const p = await stocked(10);
    const id = await order([{ sku: p.sku, qty: 1 }]);
    await change([{ order_id: id, status: "paid", skip_webhook: "true" }]);
    await change([{ order_id: id, status: "done", skip_webhook: true }]);
    await change([{ order_id: id, status: "cancelled", skip_webhook: 1 }]);
    expect(await eventsOf(id)).toEqual(["order.created"]);
  });

  it("accepts the modelled API's client flags with a notice", async () => {
    const p = await stocked(10);
    const id = await order([{ sku: p.sku, qty: 1 }]);
    const r = await change([
      { order_id: id, status: "paid", skip_email_confirmation: "true", language: "sv-SE", email_confirmation: false },
    ]);
    expect(r.json.results.update_1.success).toBe(true);
    expect(r.json.results.update_1.notices).toEqual([
      "email_confirmation, skip_email_confirmation, language: accepted; this service sends no e-mail and captures no payment",
    ]);
    const d = await change([{ order_id: id, status: "done", paymethod_activate: "false" }]);
    expect(d.json.results.update_1.notices[0]).toMatch(/^paymethod_activate: accepted/);
  });

  it("stores shipping_info without a status, and on an order already done", async () => {
    const p = await stocked(10);
    const id = await order([{ sku: p.sku, qty: 1 }]);
    await change({ order_id: id, shipping_info: { company: "PostNord" } });
    expect((await readOrder(id)).shipping_info).toEqual({ trackingnumber: null, company: "PostNord" });
    await change({ order_id: id, status: "done", shipping_info: { trackingnumber: "T1" } });
    const r = await change({ order_id: id, status: "done", shipping_info: { trackingnumber: "T2" } });
    expect(r.json.results.update_1.notices).toEqual(["status: the order is already done; nothing changed"]);
    expect((await readOrder(id)).shipping_info).toEqual({ trackingnumber: "T2", company: "PostNord" });
  });

  it("answers 404 naming order_id for an unknown order, and 200 when another element succeeded", async () => {
    const p = await stocked(10);
    const id = await order([{ sku: p.sku, qty: 1 }]);
    const none = await change([{ order_id: 99999999, status: "paid" }]);
    expect(none.status).toBe(404);
    expect(none.json).toEqual({
      code: 404,
      error: "order not found",
      results: { update_1: { success: false, errors: ["order_id: order 99999999 not found"], notices: [] } },
    });
    const mixed = await change([
      { order_id: 99999999, status: "paid" },
      { order_id: id, status: "paid" },
    ]);
    expect(mixed.status).toBe(200);
    expect(mixed.json.results.update_1.success).toBe(false);
    expect(mixed.json.results.update_2.success).toBe(true);
  });

  it("takes the modelled docs' full example shape on a paid order: empty line lists and discount_remove false edit nothing", async () => {
    const p = await stocked(10);
    const id = await order([{ sku: p.sku, qty: 1 }]);
    await change([{ order_id: id, status: "paid" }]);
    const r = await change([
      { order_id: id, status: "done", products_add: [], products_remove: [], discount_remove: false },
    ]);
    expect(r.status).toBe(200);
    expect(r.json.results.update_1).toMatchObject({ success: true, status: "done" });
  });

  it("answers an element that asks for nothing with a notice", async () => {
    const p = await stocked(10);
    const id = await order([{ sku: p.sku, qty: 1 }]);
    const r = await change({ order_id: id });
    expect(r.json.results.update_1).toMatchObject({
      success: true,
      status: "unpaid",
      notices: ["nothing to change: give status, shipping_info or line changes"],
    });
  });

  it("applies elements in order: one order named twice, and mixed outcomes in one request", async () => {
    const p = await stocked(10);
    const a = await order([{ sku: p.sku, qty: 1 }]);
    const b = await order([{ sku: p.sku, qty: 2 }]);
    await change([{ order_id: b, status: "cancelled" }]);
    const r = await change([
      { order_id: a, status: "paid" },
      { order_id: a, status: "done" },
      { order_id: 99999999, status: "paid" },
      { order_id: b, status: "paid" },
      { order_id: a, status: "done" },
    ]);
    expect(r.status).toBe(200);
    const res = r.json.results;
    expect(res.update_1).toMatchObject({ success: true, status: "paid" });
    expect(res.update_2).toMatchObject({ success: true, status: "done" });
    expect(res.update_3).toMatchObject({ success: false, errors: ["order_id: order 99999999 not found"] });
    expect(res.update_4).toMatchObject({
      success: false,
      errors: ["a cancelled order cannot change; create a new order"],
    });
    expect(res.update_5).toMatchObject({
      success: true,
      notices: ["status: the order is already done; nothing changed"],
    });
    expect(await eventsOf(a)).toEqual(["order.created", "order.new", "order.done"]);

    // Distinct orders go in one batch: each answered from its own order.
    const c = await order([{ sku: p.sku, qty: 1 }]);
    const many = await change([
      { order_id: c, status: "cancelled" },
      { order_id: b, status: "cancelled" },
      { order_id: 99999999, status: "done" },
      { order_id: a, shipping_info: { trackingnumber: "Z9" } },
    ]);
    expect(many.json.results.update_1).toMatchObject({ success: true, status: "cancelled", notices: [] });
    expect(many.json.results.update_2.notices).toEqual([`status: order ${b} is already cancelled; nothing changed`]);
    expect(many.json.results.update_3.success).toBe(false);
    expect((await readOrder(a)).shipping_info.trackingnumber).toBe("Z9");
    expect(await stockOf(p.id)).toBe(9);
  });

  it("accepts the modelled docs' double-wrapped body", async () => {
    const p = await stocked(10);
    const id = await order([{ sku: p.sku, qty: 1 }]);
    const r = await change([[{ order_id: `${id}`, status: "paid" }]]);
    expect(r.status).toBe(200);
    expect(r.json.results.update_1).toMatchObject({ success: true, status: "paid" });
  });

  it("shows hold_expires_at on unpaid orders only while a hold is set", async () => {
    const p = await stocked(10);
    const id = await order([{ sku: p.sku, qty: 1 }]);
    const created = Date.parse((await readOrder(id)).created_at);
    const held = await get(`/v1/orders/${id}`, { env: { UNPAID_ORDER_HOLD_MINUTES: "30" } });
    expect(Date.parse(held.json.hold_expires_at)).toBe(created + 30 * 60_000);
    expect((await readOrder(id)).hold_expires_at).toBeNull();
    await change([{ order_id: id, status: "paid" }]);
    const paid = await get(`/v1/orders/${id}`, { env: { UNPAID_ORDER_HOLD_MINUTES: "30" } });
    expect(paid.json.hold_expires_at).toBeNull();
  });
});

describe("PUT /v1/orders validation", () => {
  it.each([
    ["missing order_id", { status: "paid" }, "order_id: is required"],
    ["order_id not an id", { order_id: "abc", status: "paid" }, "order_id: must be a positive whole number (an id)"],
    ["order_id zero", { order_id: 0, status: "paid" }, "order_id: must be a positive whole number (an id)"],
    ["unknown status", { order_id: 1, status: "shipped" }, "status: must be one of unpaid, paid, done, cancelled"],
    ["status a number", { order_id: 1, status: 1 }, "status: must be one of unpaid, paid, done, cancelled"],
    ["bad flag", { order_id: 1, email_confirmation: "yes" }, "email_confirmation: must be true or false"],
    ["bad skip_webhook", { order_id: 1, skip_webhook: [] }, "skip_webhook: must be true or false"],
    ["bad restock", { order_id: 1, restock: "maybe" }, "restock: must be true or false"],
    ["bad language", { order_id: 1, language: "english" }, "language: must be a two-letter language code (ISO 639-1)"],
    [
      "shipping_info not an object",
      { order_id: 1, shipping_info: "DHL" },
      "shipping_info: must be an object with trackingnumber and company",
    ],
    [
      "trackingnumber a number",
      { order_id: 1, shipping_info: { trackingnumber: 123 } },
      "shipping_info.trackingnumber: must be a string",
    ],
    [
      "company too long",
      { order_id: 1, shipping_info: { company: "x".repeat(256) } },
      "shipping_info.company: must be at most 255 characters",
    ],
    ["products empty", { order_id: 1, products: [] }, "products: must hold at least one line"],
    ["bad discount", { order_id: 1, discount_add: { amount: -1 } }, "discount_add.amount: must not be negative"],
  ])("%s is a 400 naming the field", async (_name, body, error) => {
    const r = await change([body]);
    expect(r.status).toBe(400);
    expect(r.json.code).toBe(400);
    expect(r.json.results.update_1.success).toBe(false);
    expect(r.json.results.update_1.errors).toContain(error);
  });

  it("reports unknown fields as notices", async () => {
    const p = await stocked(10);
    const id = await order([{ sku: p.sku, qty: 1 }]);
    const r = await change([{ order_id: id, status: "paid", colour: "red" }]);
    expect(r.json.results.update_1.notices).toEqual(["ignored unknown field colour"]);
  });

  it.each([
    ["an empty array", [], 400],
    ["a string", "paid", 400],
    ["101 elements", Array.from({ length: 101 }, () => ({ order_id: 1 })), 413],
  ])("refuses %s as the body", async (_name, body, status) => {
    const r = await change(body);
    expect(r.status).toBe(status);
    expect(r.json.code).toBe(status);
  });

  it("needs credentials", async () => {
    const r = await call("PUT", "/v1/orders", { body: [{ order_id: 1 }], headers: { authorization: "" } });
    expect(r.status).toBe(401);
  });
});
