import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../env";
import { jsonBody } from "../platform/body";
import { ApiError } from "../platform/errors";
import { id } from "../platform/fields";
import { idempotency, recordStatements } from "../platform/idempotency";
import { bodyItems } from "../platform/items";
import { parseItem } from "../platform/validate";
import { zv } from "../platform/zv";
import { toMoney } from "../products/present";
import { createOrders, type OrderOutcome } from "./create";
import { listOrders, parseOrderQuery } from "./list";
import { getOrder } from "./read";
import { type OrderInput, orderCreate } from "./schema";

const STATUS_NOTICE = "ignored field status: a new order is always unpaid";

/** One value of `results` (contract 3.2); money as JSON numbers. */
function result<Id>(o: OrderOutcome<Id>, notices: string[]) {
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

/** The answer of contract 3.2: 200 when at least one order was created, else 400 with results. */
function respond<Id>(parsed: { index: number; notices: string[] }[], outcomes: Map<number, OrderOutcome<Id>>) {
  const results: Record<string, ReturnType<typeof result<Id>>> = {};
  let created = 0;
  for (const p of parsed) {
    const o = outcomes.get(p.index) as OrderOutcome<Id>;
    if (o.ok) created++;
    results[`create_${p.index + 1}`] = result(o, p.notices);
  }
  if (created) return { status: 200 as const, body: { results } };
  return { status: 400 as const, body: { code: 400, error: "no order was created", results } };
}

export const ordersRoute = new Hono<AppEnv>()
  .post("/", jsonBody, idempotency, async (c) => {
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
    const now = Date.now();
    const idem = c.var.idem;
    if (valid.length) {
      const created = await createOrders(c.var.db, valid, {
        now,
        defaultCurrency: c.env.DEFAULT_CURRENCY || "SEK",
        recorder: idem && {
          idem,
          claim: (planned) => {
            const { status, body } = respond(parsed, new Map<number, OrderOutcome<unknown>>([...outcomes, ...planned]));
            return recordStatements(c.var.db, idem, status, body, now);
          },
        },
      });
      for (const [i, o] of created) outcomes.set(i, o);
    }
    const { status, body } = respond(parsed, outcomes);
    c.set("logCounts", { orders: [...outcomes.values()].filter((o) => o.ok).length });
    return c.json(body, status);
  })
  .get("/", async (c) => {
    const { orders, link } = await listOrders(c.var.db, parseOrderQuery(c.req.url), c.req.url);
    return c.json(orders, 200, link ? { Link: link } : {});
  })
  .get("/:order_id", zv("param", z.object({ order_id: id })), async (c) => {
    const { order_id } = c.req.valid("param");
    const order = await getOrder(c.var.db, order_id);
    if (!order) throw new ApiError(404, `order ${order_id} not found`);
    return c.json(order);
  });
