import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../env";
import { decodeCursor, encodeCursor } from "../lib/cursor";
import { ApiError } from "../lib/errors";
import { bodyItems } from "../lib/items";
import { parseItem } from "../lib/validate";
import { zv } from "../lib/zv";
import { jsonBody } from "../middleware/body";
import { id, int, opt, str } from "../schemas/fields";
import { type OrderInput, orderCreate } from "../schemas/order";
import { createOrders, getOrder, listOrders, type OrderOutcome } from "../services/orders";
import { toMoney } from "../services/present";

const STATUS_NOTICE = "ignored field status: a new order is always unpaid";

/** One value of `results` (contract 3.2); money as JSON numbers. */
function result(o: OrderOutcome, notices: string[]) {
  if (!o.ok) return { success: false, errors: o.errors, notices: [...notices, ...o.notices] };
  return {
    success: true,
    order_id: o.orderId,
    status: "unpaid",
    currency: o.currency,
    subtotal: toMoney(o.subtotal),
    shipping: toMoney(o.shipping),
    discount: toMoney(o.discount),
    total: toMoney(o.total),
    tax: o.tax.map((t) => ({ rate: t.rate, amount: toMoney(t.amount) })),
    errors: [],
    notices: [...notices, ...o.notices],
  };
}

const listQuery = z.object({
  limit: opt(int(1, 100)),
  cursor: opt(str(64)),
  status: opt(str(32)),
});

export const ordersRoute = new Hono<AppEnv>()
  .post("/", jsonBody, async (c) => {
    // Paths in errors are relative to the element (its key in results says which), so no prefix.
    const parsed = bodyItems(c.var.body, "order", false).map(({ value }, index) => {
      const p = parseItem(orderCreate, value);
      if (value !== null && typeof value === "object" && Object.hasOwn(value, "status")) p.notices.push(STATUS_NOTICE);
      return { index, ...p };
    });
    const outcomes = new Map<number, OrderOutcome>();
    const valid: { index: number; data: OrderInput }[] = [];
    for (const p of parsed) {
      if (p.ok) valid.push({ index: p.index, data: p.data });
      else outcomes.set(p.index, { ok: false, errors: p.errors, notices: [] });
    }
    if (valid.length) {
      const created = await createOrders(c.var.db, valid, {
        now: Date.now(),
        defaultCurrency: c.env.DEFAULT_CURRENCY || "SEK",
      });
      for (const [i, o] of created) outcomes.set(i, o);
    }
    const results: Record<string, ReturnType<typeof result>> = {};
    let createdCount = 0;
    for (const p of parsed) {
      const o = outcomes.get(p.index) as OrderOutcome;
      if (o.ok) createdCount++;
      results[`create_${p.index + 1}`] = result(o, p.notices);
    }
    if (createdCount) return c.json({ results }, 200);
    return c.json({ code: 400, error: "no order was created", results }, 400);
  })
  .get("/", zv("query", listQuery), async (c) => {
    const q = c.req.valid("query");
    const page = await listOrders(c.var.db, q.limit ?? 50, q.cursor ? decodeCursor(q.cursor) : undefined, q.status);
    return c.json({ orders: page.orders, next_cursor: page.next === null ? null : encodeCursor(page.next) });
  })
  .get("/:order_id", zv("param", z.object({ order_id: id })), async (c) => {
    const { order_id } = c.req.valid("param");
    const order = await getOrder(c.var.db, order_id);
    if (!order) throw new ApiError(404, `order ${order_id} not found`);
    return c.json(order);
  });
