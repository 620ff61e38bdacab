import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../env";
import { publicOrderLimit } from "../keys/public";
import { bodyItems, fieldNames, jsonBody } from "../platform/body";
import { clientAddress } from "../platform/client";
import { ApiError } from "../platform/errors";
import { id, parseItem } from "../platform/fields";
import { completeStatements, idempotency, recordStatements } from "../platform/idempotency";
import { carriedChunks } from "../platform/stream";
import { zv } from "../platform/zv";
import { toMoney } from "../products/present";
import { dispatch, type PendingEvent, waiterOf } from "../webhooks/outbox";
import { createOrders, type OrderOutcome } from "./create";
import { holds, storefrontLimits } from "./hold";
import { listOrders, parseOrderQuery } from "./list";
import { forStorefront, getOrder } from "./read";
import { isE164, orderCreate, orderUpdate, PHONE_NOTICE } from "./schema";
import type { UpdateOutcome } from "./status";
import { refusedFields, tokenDays, tokenReads } from "./storefront";
import { updateOrders } from "./update";

const STATUS_NOTICE = "ignored field status: a new order is always unpaid";

/** One value of `results`, for POST and PUT alike (docs/orders.md, "Orders"): a new order is always unpaid. */
function result<Id>(o: OrderOutcome<Id> | UpdateOutcome, notices: string[], withToken = false) {
  if (!o.ok) return { success: false, errors: o.errors, notices: [...notices, ...o.notices] };
  return {
    success: true,
    order_id: o.orderId,
    // Only to a publishable key: what it reads the order back with (GET /v1/orders/{id}?token=).
    ...(withToken && "token" in o ? { token: o.token } : {}),
    status: "status" in o ? o.status : "unpaid",
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

const ERRORS = {
  400: "no order was changed",
  404: "order not found",
  409: "order not changed",
  503: "the order kept changing; nothing of it was written, retry shortly",
} as const;

/** The answer (docs/orders.md, "Orders"): 200 when an element succeeded, else the first failure's status. */
function respond<Id>(
  kind: "create" | "update",
  parsed: { index: number; notices: string[] }[],
  outcomes: Map<number, OrderOutcome<Id> | UpdateOutcome>,
  withToken = false,
) {
  const results: Record<string, ReturnType<typeof result<Id>>> = {};
  let failed: 400 | 404 | 409 | 503 | undefined;
  let ok = 0;
  for (const p of parsed) {
    const o = outcomes.get(p.index) as OrderOutcome<Id> | UpdateOutcome;
    if (o.ok) ok++;
    else failed ??= "status" in o ? o.status : 400;
    results[`${kind}_${p.index + 1}`] = result(o, p.notices, withToken);
  }
  if (ok || failed === undefined) return { status: 200 as const, body: { results } };
  const error = kind === "create" ? "no order was created" : ERRORS[failed];
  return { status: failed, body: { code: failed, error, results } };
}

const STOPPED_PARTWAY = {
  code: 409,
  error:
    "a request with this Idempotency-Key stopped partway: some of its orders may have been changed; read them before sending changes again",
};

/** A body object none of whose keys is one of these is a wrapped list (docs/modelled-reads.md, "Modelled dialect"). */
const UPDATE_FIELDS = fieldNames(orderUpdate);

/** The modelled docs show the body wrapped twice ([[{...}]]): the inner array is the body. */
const unwrap = (body: unknown) => (Array.isArray(body) && body.length === 1 && Array.isArray(body[0]) ? body[0] : body);

export const ordersRoute = new Hono<AppEnv>()
  .post("/", publicOrderLimit, jsonBody, idempotency, async (c) => {
    const cred = c.var.credential;
    const withToken = cred?.type === "publishable";
    const currency = c.env.DEFAULT_CURRENCY || "SEK";
    const sent = c.var.body;
    // One order per storefront request (docs/storefront.md, "Storefront orders"): the units an
    // address holds are counted per order, and a request of many would be many at once.
    if (withToken && Array.isArray(sent) && sent.length > 1) {
      throw new ApiError(400, "a publishable key creates one order per request", [
        `body: holds ${sent.length} orders; send one`,
      ]);
    }
    // Paths in errors are relative to the element (its key in results says which), so no prefix.
    const parsed = bodyItems(sent, "order", false).map(({ value }, index) => {
      const p = parseItem(orderCreate, value);
      // A storefront learns at once that it cannot price nor pay (docs/storefront.md, "Storefront orders").
      const refused = withToken ? refusedFields(value, currency) : [];
      if (refused.length) {
        const errors = p.ok ? refused : [...refused, ...p.errors];
        return { index, ok: false as const, errors, notices: p.notices };
      }
      if (value !== null && typeof value === "object" && Object.hasOwn(value, "status")) p.notices.push(STATUS_NOTICE);
      if (p.ok && p.data.customer?.phone && !isE164(p.data.customer.phone)) p.notices.push(PHONE_NOTICE);
      return { index, ...p };
    });
    const outcomes = new Map<number, OrderOutcome>();
    const valid = parsed.flatMap((p) => (p.ok ? [{ index: p.index, data: p.data }] : []));
    for (const p of parsed) if (!p.ok) outcomes.set(p.index, { ok: false, errors: p.errors, notices: [] });
    const now = Date.now();
    const idem = c.var.idem;
    const events: PendingEvent[] = [];
    if (valid.length) {
      const created = await createOrders(c.var.db, valid, {
        now,
        events,
        defaultCurrency: currency,
        keyId: cred?.keyId ?? null,
        storefront: withToken
          ? {
              ...storefrontLimits(c.env),
              address: clientAddress(c),
              keyName: cred.name,
              showsStock: cred.scopes.includes("stock"),
              holdMinutes: holds(c.env).storefront,
            }
          : undefined,
        recorder: idem && {
          idem,
          claim: (planned) => {
            const all = new Map<number, OrderOutcome<unknown>>([...outcomes, ...planned]);
            const { status, body } = respond("create", parsed, all, withToken);
            return recordStatements(c.var.db, idem, status, body, now);
          },
        },
      });
      for (const [i, o] of created) outcomes.set(i, o);
    }
    dispatch(c.env, waiterOf(c), events);
    const { status, body } = respond("create", parsed, outcomes, withToken);
    c.set("logCounts", { orders: [...outcomes.values()].filter((o) => o.ok).length });
    return c.json(body, status);
  })
  .put("/", jsonBody, idempotency, async (c) => {
    // Paths in errors are relative to the element (its key in results says which), so no prefix.
    const parsed = bodyItems(unwrap(c.var.body), "order", true, UPDATE_FIELDS).map(({ value }, index) => ({
      index,
      ...parseItem(orderUpdate, value),
    }));
    const outcomes = new Map<number, UpdateOutcome>();
    const valid = parsed.flatMap((p) => (p.ok ? [{ index: p.index, data: p.data }] : []));
    for (const p of parsed) if (!p.ok) outcomes.set(p.index, { ok: false, status: 400, errors: p.errors, notices: [] });
    const now = Date.now();
    const idem = c.var.idem;
    const db = c.var.db;
    const events: PendingEvent[] = [];
    const all = (done: Map<number, UpdateOutcome>) => {
      const { status, body } = respond("update", parsed, new Map([...outcomes, ...done]));
      return [status, body] as const;
    };
    const cred = c.var.credential;
    const changed = await updateOrders(db, valid, {
      now,
      events,
      actor: { keyId: cred?.keyId ?? null, keyName: cred?.name ?? null, via: cred?.session ? "session" : "key" },
      recorder: idem && {
        idem,
        claim: (done) => recordStatements(db, idem, ...all(done), now),
        pending: () => recordStatements(db, idem, 409, STOPPED_PARTWAY, now),
        complete: (done) => completeStatements(db, idem, ...all(done)),
      },
    });
    dispatch(c.env, waiterOf(c), events);
    for (const [i, o] of changed) outcomes.set(i, o);
    const { status, body } = respond("update", parsed, outcomes);
    c.set("logCounts", { orders: [...outcomes.values()].filter((o) => o.ok).length });
    return c.json(body, status);
  })
  .get("/", async (c) => {
    const { chunks, link, total } = await listOrders(c.var.db, parseOrderQuery(c.req.url), c.req.url);
    const headers: Record<string, string> = link ? { Link: link } : {};
    if (total !== undefined) headers["X-Total-Count"] = String(total);
    // SQLite's text as is: the page is never parsed in the Worker (docs/design.md, "Answers from D1").
    return carriedChunks(c, chunks, headers);
  })
  .get("/:order_id", zv("param", z.object({ order_id: id })), async (c) => {
    const { order_id } = c.req.valid("param");
    const order = await getOrder(c.var.db, order_id, holds(c.env));
    const cred = c.var.credential;
    if (!order) throw new ApiError(404, `order ${order_id} not found`);
    if (cred?.type !== "publishable") return c.json(order);
    // A publishable key reads only an order it made, with its token, while the token lasts; any
    // other is "not found" to it. It never learns which customer the store has for the e-mail.
    if (!(await tokenReads(order, cred, c.req.query("token"), tokenDays(c.env), Date.now()))) {
      throw new ApiError(404, `order ${order_id} not found`);
    }
    // Neither the customer the store has for the e-mail nor who changed the order (its history)
    // is the storefront's business.
    return c.json({ ...forStorefront(order), history: undefined });
  });
