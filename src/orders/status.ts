import type { DB } from "../db/client";
import { stmt } from "../platform/d1";
import type { EventType, PendingEvent } from "../webhooks/outbox";
import { newEvent, subscribed } from "../webhooks/outbox";
import type { OrderStatus } from "./schema";

// Status rules of PUT /v1/orders (docs/orders.md, "Orders"): cancelled is final, the same status is a
// no-op, cancelling gives every line's qty back once, and each change is recorded with its dates.
// The SQL here is written so that it is right whatever the order's status is when it runs: every
// statement that acts on a change checks, in SQL, that the order is not cancelled and not already
// in the target status. A batch of them is therefore safe without reading the order first, which
// gives a status change its one round trip (docs/security.md, "Guarantees").

export const CANCELLED_IS_FINAL = "a cancelled order cannot change; create a new order";

/** The event an order entering `to` from `from` causes, if any. */
export function statusEvent(from: string, to: OrderStatus, datePaid: number | null): EventType | undefined {
  if (from === to || from === "cancelled") return undefined;
  // order.new is "a new order, once paid": an undo of done back to paid is not a new order.
  if (to === "paid") return datePaid === null ? "order.new" : undefined;
  if (to === "done") return "order.done";
  if (to === "cancelled") return "order.cancelled";
  return undefined;
}

/** What one element asks of an order's status and shipping. */
export type StatusChange = {
  orderId: number;
  status?: OrderStatus;
  restock: boolean;
  trackingNumber?: string;
  shippingCompany?: string;
  cancelReason?: string;
  skipWebhook: boolean;
};

/**
 * Who makes a change, for the order's history (docs/orders.md, "History"): the key (id null:
 * the bootstrap API_KEY) and whether it came as the key itself or the admin's session of it.
 */
export type Actor = { keyId: number | null; keyName: string | null; via: "key" | "session" };

// One history row per change that happens, written before UPDATE_STATUS so it sees each order as
// it was: the same conditions as that statement's, so a no-op writes no row.
const HISTORY = `
  INSERT INTO order_history (order_id, at, change, restock, reason, key_id, key_name, via)
  SELECT o.id, ?2,
    CASE WHEN c.status IS NOT NULL AND c.status <> o.status THEN c.status ELSE 'shipping' END,
    CASE WHEN c.status = 'cancelled' THEN c.restock END,
    CASE WHEN c.status = 'cancelled' THEN c.reason END,
    ?3, ?4, ?5
  FROM (SELECT j.value->>'id' AS id, j.value->>'status' AS status, j.value->>'tracking' AS tracking,
          j.value->>'company' AS company, j.value->>'reason' AS reason, j.value->>'restock' AS restock
        FROM json_each(?1) AS j) AS c
  JOIN orders AS o ON o.id = c.id
  WHERE o.status <> 'cancelled'
    AND (coalesce(c.status, o.status) <> o.status OR c.tracking IS NOT NULL OR c.company IS NOT NULL)`;

const LINES_HISTORY = `
  INSERT INTO order_history (order_id, at, change, key_id, key_name, via) VALUES (?1, ?2, 'lines', ?3, ?4, ?5)`;

/** The history row of a line edit (its batch is guarded by the order's version). */
export const linesHistoryStatement = (db: DB, orderId: number, now: number, actor: Actor) =>
  stmt(db, LINES_HISTORY, orderId, now, actor.keyId, actor.keyName, actor.via);

// The statements below take every change of a request at once (a JSON list, expanded with
// json_each), so a request of 1 or 100 status changes is the same handful of statements in one
// batch. Order ids in one such batch are distinct (the caller makes sure), so each change sees
// its order as it was before the batch.

// Lines of the orders whose variant (or, for a line without variant, product) is gone: their
// stock cannot be returned (docs/orders.md, "Orders": a notice names them).
const GONE_LINES = `
  SELECT l.order_id, l.position, l.sku, l.product_id, l.variant_id FROM order_lines AS l
  LEFT JOIN variants AS v ON v.id = l.variant_id
  LEFT JOIN products AS p ON p.id = l.product_id
  WHERE l.order_id IN (SELECT value FROM json_each(?1))
    AND (CASE WHEN l.variant_id IS NULL THEN p.id IS NULL ELSE v.id IS NULL END)
  ORDER BY l.order_id, l.position`;

// Gives back the orders' lines unless an order is cancelled already: the guard that makes any
// number of concurrent cancels return the stock once (batches run one at a time on D1).
const RESTOCK_VARIANTS = `
  UPDATE variants SET qty = variants.qty + t.q
  FROM (SELECT l.variant_id AS id, sum(l.qty) AS q FROM order_lines AS l JOIN orders AS o ON o.id = l.order_id
        WHERE l.order_id IN (SELECT value FROM json_each(?1)) AND o.status <> 'cancelled'
          AND l.variant_id IS NOT NULL GROUP BY 1) AS t
  WHERE variants.id = t.id`;

const RESTOCK_PRODUCTS = `
  UPDATE products SET stock = products.stock + t.q
  FROM (SELECT l.product_id AS id, sum(l.qty) AS q FROM order_lines AS l JOIN orders AS o ON o.id = l.order_id
        WHERE l.order_id IN (SELECT value FROM json_each(?1)) AND o.status <> 'cancelled'
          AND l.variant_id IS NULL GROUP BY 1) AS t
  WHERE products.id = t.id`;

// The outbox rows of status changes, written only for the changes that happen (outbox.ts writes
// its rows unconditionally; these are the same rows, with the status test of the change itself).
const STATUS_EVENTS = `
  INSERT INTO events (id, type, order_id, created_at, key_id)
  SELECT e.value->>'id', e.value->>'type', o.id, ?2, e.value->>'keyId' FROM json_each(?1) AS e
  JOIN orders AS o ON o.id = e.value->>'orderId'
  WHERE o.status <> 'cancelled' AND o.status <> e.value->>'status'
    AND (e.value->>'type' <> 'order.new' OR o.date_paid IS NULL) AND ${subscribed("e.value->>'type'")}
  RETURNING id AS event_id`;

// status_date is the last change; date_paid, date_done and date_cancelled the first time.
const UPDATE_STATUS = `
  UPDATE orders SET
    status = coalesce(c.status, orders.status),
    date_paid = CASE WHEN c.status = 'paid' AND orders.date_paid IS NULL THEN ?2 ELSE orders.date_paid END,
    date_done = CASE WHEN c.status = 'done' AND orders.date_done IS NULL THEN ?2 ELSE orders.date_done END,
    date_cancelled = CASE WHEN c.status = 'cancelled' AND orders.date_cancelled IS NULL THEN ?2
      ELSE orders.date_cancelled END,
    status_date = CASE WHEN c.status IS NOT NULL AND c.status <> orders.status THEN ?2 ELSE orders.status_date END,
    cancel_reason = CASE WHEN c.status = 'cancelled' AND orders.status <> 'cancelled' THEN c.reason
      ELSE orders.cancel_reason END,
    tracking_number = coalesce(c.tracking, orders.tracking_number),
    shipping_company = coalesce(c.company, orders.shipping_company),
    version = orders.version + 1,
    updated_at = ?2
  FROM (SELECT j.value->>'id' AS id, j.value->>'status' AS status, j.value->>'tracking' AS tracking,
          j.value->>'company' AS company, j.value->>'reason' AS reason FROM json_each(?1) AS j) AS c
  WHERE orders.id = c.id AND orders.status <> 'cancelled'
    AND (coalesce(c.status, orders.status) <> orders.status OR c.tracking IS NOT NULL OR c.company IS NOT NULL)`;

const READ_ORDERS = "SELECT * FROM orders WHERE id IN (SELECT value FROM json_each(?1))";

/** Reads the orders as they are when the batch starts (before any write of the batch). */
export const readOrdersStatement = (db: DB, ids: number[]) => stmt(db, READ_ORDERS, JSON.stringify(ids));

/** The lines of `ids` whose stock a cancel cannot return; put it before the restock. */
export const goneLinesStatement = (db: DB, ids: number[]) => stmt(db, GONE_LINES, JSON.stringify(ids));

/** A change whose event is written only if the change happens. */
export type StatusEvent = PendingEvent & { status: OrderStatus };

/**
 * The conditional statements of status changes (of distinct orders): the same few statements for
 * any number of changes.
 */
export function statusStatements(
  db: DB,
  changes: StatusChange[],
  now: number,
  events: StatusEvent[],
  actor: Actor,
): D1PreparedStatement[] {
  const out: D1PreparedStatement[] = [];
  const restock = changes.filter((c) => c.status === "cancelled" && c.restock).map((c) => c.orderId);
  if (restock.length) {
    const ids = JSON.stringify(restock);
    out.push(stmt(db, RESTOCK_VARIANTS, ids), stmt(db, RESTOCK_PRODUCTS, ids));
  }
  if (events.length) out.push(stmt(db, STATUS_EVENTS, JSON.stringify(events), now));
  const rows = changes.map((c) => ({
    id: c.orderId,
    status: c.status ?? null,
    tracking: c.trackingNumber ?? null,
    company: c.shippingCompany ?? null,
    reason: c.cancelReason ?? null,
    restock: c.restock ? 1 : 0,
  }));
  const json = JSON.stringify(rows);
  out.push(stmt(db, HISTORY, json, now, actor.keyId, actor.keyName, actor.via));
  out.push(stmt(db, UPDATE_STATUS, json, now));
  return out;
}

/** The event a status change would cause when nothing is known about the order (the one-trip path). */
export function candidateEvent(change: StatusChange, keyId: number | null): StatusEvent | undefined {
  const { status } = change;
  if (change.skipWebhook || !status || status === "unpaid") return undefined;
  const type: EventType = status === "paid" ? "order.new" : status === "done" ? "order.done" : "order.cancelled";
  return { ...newEvent(type, { orderId: change.orderId, keyId }), status };
}

/** The notice for lines whose stock a cancel could not return. */
export function goneNotices(rows: Record<string, unknown>[]): string[] {
  return rows.map((r) => {
    const name =
      (r.sku as string | null) ?? (r.variant_id === null ? `product ${r.product_id}` : `variant ${r.variant_id}`);
    const what = r.variant_id === null ? "product" : "variant";
    return `products[${(r.position as number) - 1}]: the ${what} of ${name} was deleted; no stock was returned for this line`;
  });
}
