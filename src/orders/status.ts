import type { DB } from "../db/client";
import { stmt } from "../platform/d1";
import type { EventType, PendingEvent } from "../webhooks/outbox";
import { newEvent } from "../webhooks/outbox";
import type { OrderStatus } from "./schema";

// Status rules of PUT /v1/orders (README, "Orders"): cancelled is final, the same status is a
// no-op, cancelling gives every line's qty back once, and each change is recorded with its dates.
// The SQL here is written so that it is right whatever the order's status is when it runs: every
// statement that acts on a change checks, in SQL, that the order is not cancelled and not already
// in the target status. A batch of them is therefore safe without reading the order first, which
// gives a status change its one round trip (README, "Guarantees").

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

// Lines of an order whose variant (or, for a line without variant, product) is gone: their stock
// cannot be returned (README, "Orders": a notice names them).
const GONE_LINES = `
  SELECT l.position, l.sku, l.product_id, l.variant_id FROM order_lines AS l
  LEFT JOIN variants AS v ON v.id = l.variant_id
  LEFT JOIN products AS p ON p.id = l.product_id
  WHERE l.order_id = ?1 AND (CASE WHEN l.variant_id IS NULL THEN p.id IS NULL ELSE v.id IS NULL END)
  ORDER BY l.position`;

// Gives back the order's lines unless it is cancelled already: the guard that makes any number of
// concurrent cancels return the stock once (batches run one at a time on D1).
const RESTOCK_VARIANTS = `
  UPDATE variants SET qty = variants.qty + t.q
  FROM (SELECT variant_id AS id, sum(qty) AS q FROM order_lines
        WHERE order_id = ?1 AND variant_id IS NOT NULL GROUP BY 1) AS t
  WHERE variants.id = t.id AND (SELECT status FROM orders WHERE id = ?1) <> 'cancelled'`;

const RESTOCK_PRODUCTS = `
  UPDATE products SET stock = products.stock + t.q
  FROM (SELECT product_id AS id, sum(qty) AS q FROM order_lines
        WHERE order_id = ?1 AND variant_id IS NULL GROUP BY 1) AS t
  WHERE products.id = t.id AND (SELECT status FROM orders WHERE id = ?1) <> 'cancelled'`;

// The outbox row of a status change, written only if the change happens (outbox.ts writes its
// rows unconditionally; this is the same row, with the status test of the change itself).
const STATUS_EVENT = `
  INSERT INTO events (id, type, order_id, created_at)
  SELECT ?2, ?3, id, ?4 FROM orders
  WHERE id = ?1 AND status <> 'cancelled' AND status <> ?5 AND (?3 <> 'order.new' OR date_paid IS NULL)`;

// status_date is the last change; date_paid, date_done and date_cancelled the first time.
const UPDATE_STATUS = `
  UPDATE orders SET
    status = coalesce(?2, status),
    date_paid = CASE WHEN ?2 = 'paid' AND date_paid IS NULL THEN ?3 ELSE date_paid END,
    date_done = CASE WHEN ?2 = 'done' AND date_done IS NULL THEN ?3 ELSE date_done END,
    date_cancelled = CASE WHEN ?2 = 'cancelled' AND date_cancelled IS NULL THEN ?3 ELSE date_cancelled END,
    status_date = CASE WHEN ?2 IS NOT NULL AND ?2 <> status THEN ?3 ELSE status_date END,
    cancel_reason = CASE WHEN ?2 = 'cancelled' AND status <> 'cancelled' THEN ?6 ELSE cancel_reason END,
    tracking_number = coalesce(?4, tracking_number),
    shipping_company = coalesce(?5, shipping_company),
    version = version + 1,
    updated_at = ?3
  WHERE id = ?1 AND status <> 'cancelled'
    AND (coalesce(?2, status) <> status OR ?4 IS NOT NULL OR ?5 IS NOT NULL)`;

const READ_ORDER = "SELECT * FROM orders WHERE id = ?1";

/** Reads the order as it is when the batch starts (before any write of the batch). */
export const readOrderStatement = (db: DB, orderId: number) => stmt(db, READ_ORDER, orderId);

export const goneLinesStatement = (db: DB, orderId: number) => stmt(db, GONE_LINES, orderId);

/** The conditional statements of a status change; `event` is written only if the change happens. */
export function statusStatements(
  db: DB,
  change: StatusChange,
  now: number,
  opts: { restockInSql: boolean; event?: PendingEvent },
): D1PreparedStatement[] {
  const out: D1PreparedStatement[] = [];
  const { orderId, status } = change;
  if (status === "cancelled" && change.restock && opts.restockInSql) {
    out.push(stmt(db, RESTOCK_VARIANTS, orderId), stmt(db, RESTOCK_PRODUCTS, orderId));
  }
  if (opts.event && status) {
    out.push(stmt(db, STATUS_EVENT, orderId, opts.event.id, opts.event.type, now, status));
  }
  out.push(
    stmt(
      db,
      UPDATE_STATUS,
      orderId,
      status ?? null,
      now,
      change.trackingNumber ?? null,
      change.shippingCompany ?? null,
      change.cancelReason ?? null,
    ),
  );
  return out;
}

/** The event a status change would cause when nothing is known about the order (the one-trip path). */
export function candidateEvent(change: StatusChange): PendingEvent | undefined {
  if (change.skipWebhook || !change.status || change.status === "unpaid") return undefined;
  const type: EventType =
    change.status === "paid" ? "order.new" : change.status === "done" ? "order.done" : "order.cancelled";
  return newEvent(type, { orderId: change.orderId });
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
