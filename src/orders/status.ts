import type { DB } from "../db/client";
import { events, orderHistory, orderLines, orders, products, variants } from "../db/schema";
import { sqlNames } from "../platform/columns";
import { stmt } from "../platform/d1";
import { versionBumpsOf } from "../products/version";
import type { EventType, PendingEvent } from "../webhooks/outbox";
import { newEvent, subscribed } from "../webhooks/outbox";
import { SETTABLE } from "./fields";
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
  /** The fields a PUT sets (fields.ts SETTABLE), by column name; null: not given. */
  set: Record<string, unknown>;
  cancelReason?: string;
  skipWebhook: boolean;
};

/**
 * Who makes a change, for the order's history (docs/orders.md, "History"): the key (id null:
 * the bootstrap API_KEY) and whether it came as the key itself or the admin's session of it.
 */
export type Actor = { keyId: number | null; keyName: string | null; via: "key" | "session" };

const O = sqlNames(orders);
const H = sqlNames(orderHistory);
const L = sqlNames(orderLines);
const V = sqlNames(variants);
const P = sqlNames(products);
const E = sqlNames(events);
const SET = SETTABLE.map((f) => O[f.column]);

// The changes of a request as rows `c` (statusStatements): the order, its new status, the fields
// set (by their column names), a cancel's reason and whether it restocks.
const CHANGES = `(SELECT j.value->>'id' AS id, j.value->>'status' AS status, ${SET.map((n) => `j.value->>'${n}' AS ${n}`).join(", ")},
    j.value->>'reason' AS reason, j.value->>'restock' AS restock FROM json_each(?1) AS j) AS c`;
/** Whether change `c` changes order `o`: a new status or a field set; never a cancelled order. */
const CHANGES_ORDER = (o: string) => `${o}.${O.status} <> 'cancelled'
    AND (coalesce(c.status, ${o}.${O.status}) <> ${o}.${O.status} ${SET.map((n) => `OR c.${n} IS NOT NULL`).join(" ")})`;

// One history row per change that happens, written before UPDATE_STATUS so it sees each order as
// it was: the same conditions as that statement's, so a no-op writes no row. A change that sets
// fields without a new status is recorded as 'shipping' (the fields a PUT sets are its shipping_info).
const HISTORY = `
  INSERT INTO ${H.$} (${H.orderId}, ${H.at}, ${H.change}, ${H.restock}, ${H.reason}, ${H.keyId}, ${H.keyName}, ${H.via})
  SELECT o.${O.id}, ?2,
    CASE WHEN c.status IS NOT NULL AND c.status <> o.${O.status} THEN c.status ELSE 'shipping' END,
    CASE WHEN c.status = 'cancelled' THEN c.restock END,
    CASE WHEN c.status = 'cancelled' THEN c.reason END,
    ?3, ?4, ?5
  FROM ${CHANGES}
  JOIN ${O.$} AS o ON o.${O.id} = c.id
  WHERE ${CHANGES_ORDER("o")}`;

const LINES_HISTORY = `
  INSERT INTO ${H.$} (${H.orderId}, ${H.at}, ${H.change}, ${H.keyId}, ${H.keyName}, ${H.via})
  VALUES (?1, ?2, 'lines', ?3, ?4, ?5)`;

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
  SELECT l.${L.orderId}, l.${L.position}, l.${L.sku}, l.${L.productId}, l.${L.variantId} FROM ${L.$} AS l
  LEFT JOIN ${V.$} AS v ON v.${V.id} = l.${L.variantId}
  LEFT JOIN ${P.$} AS p ON p.${P.id} = l.${L.productId}
  WHERE l.${L.orderId} IN (SELECT value FROM json_each(?1))
    AND (CASE WHEN l.${L.variantId} IS NULL THEN p.${P.id} IS NULL ELSE v.${V.id} IS NULL END)
  ORDER BY l.${L.orderId}, l.${L.position}`;

// Gives back the orders' lines unless an order is cancelled already: the guard that makes any
// number of concurrent cancels return the stock once (batches run one at a time on D1).
const restockSql = (table: { $: string; id: string }, stock: string, variant: boolean) => `
  UPDATE ${table.$} SET ${stock} = ${table.$}.${stock} + t.q
  FROM (SELECT l.${variant ? L.variantId : L.productId} AS id, sum(l.${L.qty}) AS q
        FROM ${L.$} AS l JOIN ${O.$} AS o ON o.${O.id} = l.${L.orderId}
        WHERE l.${L.orderId} IN (SELECT value FROM json_each(?1)) AND o.${O.status} <> 'cancelled'
          AND l.${L.variantId} IS ${variant ? "NOT " : ""}NULL GROUP BY 1) AS t
  WHERE ${table.$}.${table.id} = t.id`;
const RESTOCK_VARIANTS = restockSql(V, V.qty, true);
/** The products whose stock a restock of the orders ?1 gives back, for their versions. */
const RESTOCKED = `SELECT DISTINCT ${L.productId} AS id FROM ${L.$} WHERE ${L.orderId} IN (SELECT value FROM json_each(?1))`;
const RESTOCK_PRODUCTS = restockSql(P, P.stock, false);

// The outbox rows of status changes, written only for the changes that happen (outbox.ts writes
// its rows unconditionally; these are the same rows, with the status test of the change itself).
const STATUS_EVENTS = `
  INSERT INTO ${E.$} (${E.id}, ${E.type}, ${E.orderId}, ${E.createdAt}, ${E.keyId})
  SELECT e.value->>'id', e.value->>'type', o.${O.id}, ?2, e.value->>'keyId' FROM json_each(?1) AS e
  JOIN ${O.$} AS o ON o.${O.id} = e.value->>'orderId'
  WHERE o.${O.status} <> 'cancelled' AND o.${O.status} <> e.value->>'status'
    AND (e.value->>'type' <> 'order.new' OR o.${O.datePaid} IS NULL) AND ${subscribed("e.value->>'type'")}
  RETURNING ${E.id} AS event_id`;

// status_date is the last change; date_paid, date_done and date_cancelled the first time; the
// fields a PUT sets keep their value when not given.
const firstTime = (col: string, status: OrderStatus) =>
  `${col} = CASE WHEN c.status = '${status}' AND ${O.$}.${col} IS NULL THEN ?2 ELSE ${O.$}.${col} END`;
const UPDATE_STATUS = `
  UPDATE ${O.$} SET
    ${O.status} = coalesce(c.status, ${O.$}.${O.status}),
    ${firstTime(O.datePaid, "paid")},
    ${firstTime(O.dateDone, "done")},
    ${firstTime(O.dateCancelled, "cancelled")},
    ${O.statusDate} = CASE WHEN c.status IS NOT NULL AND c.status <> ${O.$}.${O.status} THEN ?2
      ELSE ${O.$}.${O.statusDate} END,
    ${O.cancelReason} = CASE WHEN c.status = 'cancelled' AND ${O.$}.${O.status} <> 'cancelled' THEN c.reason
      ELSE ${O.$}.${O.cancelReason} END,
    ${SET.map((n) => `${n} = coalesce(c.${n}, ${O.$}.${n}),`).join(" ")}
    ${O.version} = ${O.$}.${O.version} + 1,
    ${O.updatedAt} = ?2
  FROM ${CHANGES}
  WHERE ${O.$}.${O.id} = c.id AND ${CHANGES_ORDER(O.$)}`;

const READ_ORDERS = `SELECT * FROM ${O.$} WHERE ${O.id} IN (SELECT value FROM json_each(?1))`;

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
    out.push(...versionBumpsOf(db, RESTOCKED, ids));
  }
  if (events.length) out.push(stmt(db, STATUS_EVENTS, JSON.stringify(events), now));
  const rows = changes.map((c) => ({
    id: c.orderId,
    status: c.status ?? null,
    ...c.set,
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
