import { events, orderHistory, type orderLines, orders, webhookEndpoints } from "../db/schema";
import { sqlNames } from "../platform/columns";
import { type DB, rowMapper, stmt } from "../platform/d1";
import { type EventType, newEvent, type PendingEvent, subscribed } from "../webhooks/outbox";
import { itemName } from "./catalog";
import { editsLines } from "./edit";
import { SETTABLE, valueAt } from "./fields";
import type { Totals } from "./lines";
import { CLIENT_FLAGS, type OrderStatus, type OrderUpdate } from "./schema";
import type { TaxLine } from "./totals";

// Status rules of PUT /v1/orders (docs/orders.md, "Orders"): cancelled is final, the same status is a
// no-op, cancelling gives every line's qty back once, and each change is recorded with its dates.
// Every statement checks in SQL that its order is not cancelled nor already in the target status,
// so a batch of them is right without reading the orders first: a status change's one round trip
// (docs/security.md, "Guarantees").

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
const E = sqlNames(events);
const W = sqlNames(webhookEndpoints);
const SET = SETTABLE.map((f) => O[f.column]);

// The changes of a request as rows `c` (statusStatements' rows). One change is read straight from
// ?1 (an index seek of its order); a list through json_each.
const COLUMNS = ["id", "status", ...SET, "reason", "restock"];
const changesOf = (one: boolean) =>
  one
    ? `(SELECT ${COLUMNS.map((n) => `?1 ->> '$[0].${n}' AS ${n}`).join(", ")}) AS c`
    : `(SELECT ${COLUMNS.map((n) => `j.value->>'${n}' AS ${n}`).join(", ")} FROM json_each(?1) AS j) AS c`;
/** Whether change `c` changes order `o`: a new status or a field set; never a cancelled order. */
const CHANGES_ORDER = (o: string) => `${o}.${O.status} <> 'cancelled'
    AND (coalesce(c.status, ${o}.${O.status}) <> ${o}.${O.status} ${SET.map((n) => `OR c.${n} IS NOT NULL`).join(" ")})`;

// One history row per change that happens, written before the UPDATEs so it sees each order as it
// was, on their conditions (a no-op writes none); fields set without a new status are 'shipping'
// (they are its shipping_info). ?2 now, ?3 to ?5 the actor.
const history = (one: boolean) => `
  INSERT INTO ${H.$} (${H.orderId}, ${H.at}, ${H.change}, ${H.restock}, ${H.reason}, ${H.keyId}, ${H.keyName}, ${H.via})
  SELECT o.${O.id}, ?2,
    CASE WHEN c.status IS NOT NULL AND c.status <> o.${O.status} THEN c.status ELSE 'shipping' END,
    CASE WHEN c.status = 'cancelled' THEN c.restock END,
    CASE WHEN c.status = 'cancelled' THEN c.reason END,
    ?3, ?4, ?5
  FROM ${changesOf(one)}
  JOIN ${O.$} AS o ON o.${O.id} = c.id
  WHERE ${CHANGES_ORDER("o")}`;
const HISTORY = { one: history(true), many: history(false) };

// The history row of one change that does not both set fields and name a status, after its UPDATE:
// that changed the order exactly when the row is due, and the row follows from the change alone,
// so the order is not read again. ?1 the order, ?2 now, ?3 the change, ?4 restock, ?5 reason, ?6 to ?8 the actor.
const HISTORY_AFTER = `
  INSERT INTO ${H.$} (${H.orderId}, ${H.at}, ${H.change}, ${H.restock}, ${H.reason}, ${H.keyId}, ${H.keyName}, ${H.via})
  SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8 WHERE changes() > 0`;
const setsAny = (c: StatusChange) => Object.values(c.set).some((v) => v !== null && v !== undefined);

const LINES_HISTORY = `
  INSERT INTO ${H.$} (${H.orderId}, ${H.at}, ${H.change}, ${H.keyId}, ${H.keyName}, ${H.via})
  VALUES (?1, ?2, 'lines', ?3, ?4, ?5)`;

/** The history row of a line edit (its batch is guarded by the order's version). */
export const linesHistoryStatement = (db: DB, orderId: number, now: number, actor: Actor) =>
  stmt(db, LINES_HISTORY, orderId, now, actor.keyId, actor.keyName, actor.via);

// The statements below take every change of a request as one JSON list, so 1 or 100 changes are
// the same handful of statements. Their order ids are distinct (the caller makes sure), so each
// change sees its order as it was before the batch.

// Whether the store has any endpoint: a test SQLite makes once, before reading the list, so a
// store without webhooks reads no row for its events. count(*) of a whole table steps no cursor,
// where EXISTS over the empty table was billed a row; a disabled endpoint still fails `subscribed`.
const ANY_ENDPOINT = `(SELECT count(*) FROM ${W.$}) > 0`;

// The outbox rows of status changes, written only for the changes that happen (outbox.ts writes
// its rows unconditionally; these are the same rows, with the status test of the change itself).
const statusEvents = (one: boolean) => `
  INSERT INTO ${E.$} (${E.id}, ${E.type}, ${E.orderId}, ${E.createdAt}, ${E.keyId})
  SELECT e.value->>'id', e.value->>'type', o.${O.id}, ?2, e.value->>'keyId'
  FROM ${one ? "(SELECT ?1 -> '$[0]' AS value)" : "json_each(?1)"} AS e
  JOIN ${O.$} AS o ON o.${O.id} = e.value->>'orderId'
  WHERE ${ANY_ENDPOINT} AND ${subscribed("e.value->>'type'")} AND o.${O.status} <> 'cancelled' AND o.${O.status} <> e.value->>'status'
    AND (e.value->>'type' <> 'order.new' OR o.${O.datePaid} IS NULL)`;
const STATUS_EVENTS = { one: statusEvents(true), many: statusEvents(false) };
// The events the INSERT before wrote, for `committed`: its rows are the table's last rowids (the
// batch runs alone), so reading back changes() of them reads only those. RETURNING was billed 2
// rows more than it returned (its scratch table, read back), even when nothing was inserted.
const EVENTS_WRITTEN = `SELECT ${E.id} AS event_id FROM ${E.$} ORDER BY rowid DESC LIMIT changes()`;

// status_date is the last change; date_paid, date_done and date_cancelled the first time. One
// UPDATE per target status, setting only the columns it can move: an indexed column SET is an
// index entry written (billed) even when its value stays, so a shipping change leaves status and
// its three indexes alone.
const FIRST: Partial<Record<OrderStatus, string>> = { paid: O.datePaid, done: O.dateDone, cancelled: O.dateCancelled };
function updateStatus(to: OrderStatus | null, one: boolean) {
  const c = (n: string) => (one ? `(?1 ->> '$[0].${n}')` : `c.${n}`);
  const sets = SET.map((n) => `${n} = coalesce(${c(n)}, ${O.$}.${n})`);
  if (to) {
    // A field set on an order already in `to` leaves its status_date.
    sets.unshift(
      `${O.status} = '${to}'`,
      `${O.statusDate} = iif(${O.$}.${O.status} <> '${to}', ?2, ${O.$}.${O.statusDate})`,
    );
    const first = FIRST[to];
    if (first) sets.push(`${first} = coalesce(${O.$}.${first}, ?2)`);
    if (to === "cancelled") sets.push(`${O.cancelReason} = ${c("reason")}`);
  }
  const changes = one
    ? `${O.$}.${O.status} <> 'cancelled' AND (${O.$}.${O.status} <> ${to ? `'${to}'` : `${O.$}.${O.status}`} ${SET.map((n) => `OR ${c(n)} IS NOT NULL`).join(" ")})`
    : CHANGES_ORDER(O.$);
  return `
  UPDATE ${O.$} SET ${sets.join(", ")}, ${O.version} = ${O.$}.${O.version} + 1, ${O.updatedAt} = ?2
  ${one ? "" : `FROM ${changesOf(false)}`}
  WHERE ${O.$}.${O.id} = ${c("id")} AND ${changes}`;
}
const UPDATES = new Map(
  ([null, "unpaid", "paid", "done", "cancelled"] as const).map((to) => [
    to,
    { one: updateStatus(to, true), many: updateStatus(to, false) },
  ]),
);

const READ_ORDER = `SELECT * FROM ${O.$} WHERE ${O.id} = ?1`;
const READ_ORDERS = `SELECT o.* FROM json_each(?1) AS j JOIN ${O.$} AS o ON o.${O.id} = j.value`;

/** Reads the orders as they are when the batch starts (before any write of the batch). */
export const readOrdersStatement = (db: DB, ids: number[]) =>
  ids.length === 1 ? stmt(db, READ_ORDER, ids[0]) : stmt(db, READ_ORDERS, JSON.stringify(ids));

/** A change whose event is written only if the change happens. */
export type StatusEvent = PendingEvent & { status: OrderStatus };

/** The conditional statements of status changes of distinct orders; the stock a cancel gives back is the caller's. */
export function statusStatements(
  db: DB,
  changes: StatusChange[],
  now: number,
  events: StatusEvent[],
  actor: Actor,
): D1PreparedStatement[] {
  const out: D1PreparedStatement[] = [];
  const size = (n: number) => (n === 1 ? "one" : "many");
  if (events.length) {
    out.push(stmt(db, STATUS_EVENTS[size(events.length)], JSON.stringify(events), now), stmt(db, EVENTS_WRITTEN));
  }
  const rows = changes.map((c) => ({
    id: c.orderId,
    status: c.status ?? null,
    ...c.set,
    reason: c.cancelReason ?? null,
    restock: c.restock ? 1 : 0,
  }));
  // A status and fields at once: whether the status moved is known only from the order as it was.
  const after = changes.length === 1 && !(changes[0].status && setsAny(changes[0])) ? rows[0] : undefined;
  const who = [actor.keyId, actor.keyName, actor.via];
  if (!after) out.push(stmt(db, HISTORY[size(rows.length)], JSON.stringify(rows), now, ...who));
  for (const [to, sql] of UPDATES) {
    const mine = rows.filter((r) => r.status === to);
    if (mine.length) out.push(stmt(db, sql[size(mine.length)], JSON.stringify(mine), now));
  }
  if (after) {
    const [restock, reason] = after.status === "cancelled" ? [after.restock, after.reason] : [null, null];
    out.push(stmt(db, HISTORY_AFTER, after.id, now, after.status ?? "shipping", restock, reason, ...who));
  }
  return out;
}

/**
 * The event of a change, written only if the change happens: from `pre`, the order as it was, or on
 * the one-trip path, where nothing is known of it, as if from another status, never paid.
 */
export function changeEvent(
  change: StatusChange,
  keyId: number | null,
  pre: { status: string; datePaid: number | null } = { status: "", datePaid: null },
): StatusEvent | undefined {
  const { status } = change;
  const type = status && !change.skipWebhook ? statusEvent(pre.status, status, pre.datePaid) : undefined;
  return type && { ...newEvent(type, { orderId: change.orderId, keyId }), status: status as OrderStatus };
}

/** A line whose variant (or product, for a line without variant) is gone. */
export type GoneLine = Pick<typeof orderLines.$inferSelect, "position" | "sku" | "productId" | "variantId">;

/** The notice for lines whose stock a cancel could not return. */
export function goneNotices(rows: GoneLine[]): string[] {
  return rows.map((r) => {
    const what = r.variantId === null ? "product" : "variant";
    return `products[${r.position - 1}]: the ${what} of ${itemName(r)} was deleted; no stock was returned for this line`;
  });
}

// What an element of PUT /v1/orders answers (docs/orders.md, "Orders"), whichever path of update.ts
// applied it, decided from the order as it was before the change.

export type UpdateOutcome =
  | (Totals & { ok: true; orderId: number; status: string; currency: string; notices: string[] })
  | { ok: false; status: 400 | 404 | 409 | 503; errors: string[]; notices: string[] };

export const toOrder = rowMapper(orders);
export type OrderRow = ReturnType<typeof toOrder>;

export const fail = (status: 400 | 404 | 409 | 503, errors: string[], notices: string[]): UpdateOutcome => ({
  ok: false,
  status,
  errors,
  notices,
});

/** Whether the element gives a field a PUT sets (fields.ts SETTABLE), or at least their block. */
export const setsFields = (u: OrderUpdate) =>
  u.shipping_info !== undefined || SETTABLE.some((f) => valueAt(u, f.path) !== undefined);

/** The status change an element asks for, with the fields it sets by SQL column (status.ts writes it). */
export function toChange(u: OrderUpdate): StatusChange {
  return {
    orderId: u.order_id,
    status: u.status,
    restock: u.restock ?? true,
    set: Object.fromEntries(SETTABLE.map((f) => [O[f.column], valueAt(u, f.path) ?? null])),
    cancelReason: u.cancel_reason,
    skipWebhook: u.skip_webhook ?? false,
  };
}

/** Notices every element gets whatever happens: the client flags this service does not act on. */
export function flagNotices(u: OrderUpdate): string[] {
  const given = CLIENT_FLAGS.filter((f) => u[f] !== undefined);
  if (!given.length) return [];
  return [`${given.join(", ")}: accepted; this service sends no e-mail and captures no payment`];
}

/** The answer for an order missing or cancelled already: cancelling again (or asking nothing) is a no-op. */
export function onClosed(u: OrderUpdate, pre: OrderRow | undefined, notices: string[]): UpdateOutcome {
  if (!pre) return fail(404, [`order_id: order ${u.order_id} not found`], notices);
  const asks = (u.status !== undefined && u.status !== "cancelled") || setsFields(u) || editsLines(u);
  if (asks) return fail(409, [CANCELLED_IS_FINAL], notices);
  notices.push(`status: order ${pre.id} is already cancelled; nothing changed`);
  return answer(pre, pre.status, undefined, notices);
}

/** Notices of a status change, from the order as it was before it. */
export function statusNotices(pre: OrderRow, u: OrderUpdate, gone: GoneLine[], notices: string[]) {
  if (!u.status) return;
  if (u.status === pre.status) {
    notices.push(`status: the order is already ${pre.status}; nothing changed`);
    return;
  }
  if (u.status !== "cancelled") return;
  if (u.restock === false) notices.push("restock: false: no stock was returned");
  else notices.push(...goneNotices(gone));
}

/** A successful element's answer: the order with its new status, and new totals after line edits. */
export function answer(pre: OrderRow, status: string, totals: Totals | undefined, notices: string[]): UpdateOutcome {
  const { subtotal, shippingPrice: shipping, discount, total } = pre;
  const t = totals ?? { subtotal, shipping, discount, total, tax: JSON.parse(pre.tax) as TaxLine[] };
  return { ok: true, orderId: pre.id, status, currency: pre.currency, ...t, notices };
}
