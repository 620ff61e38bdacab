import { orders } from "../db/schema";
import { sqlNames } from "../platform/columns";
import { rowMapper } from "../platform/d1";
import { editsLines } from "./edit";
import { SETTABLE, valueAt } from "./fields";
import type { Totals } from "./lines";
import { CLIENT_FLAGS, type OrderUpdate } from "./schema";
import { CANCELLED_IS_FINAL, type GoneLine, goneNotices, type StatusChange } from "./status";
import type { TaxLine } from "./totals";

// What an element of PUT /v1/orders answers (docs/orders.md, "Orders"), whichever path of update.ts
// applied it, decided from the order as it was before the change.

export type UpdateOutcome =
  | (Totals & { ok: true; orderId: number; status: string; currency: string; notices: string[] })
  | { ok: false; status: 400 | 404 | 409 | 503; errors: string[]; notices: string[] };

const O = sqlNames(orders);
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
