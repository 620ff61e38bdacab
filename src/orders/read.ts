import { eq, sql } from "drizzle-orm";
import type { DB } from "../db/client";
import { apiKeys, orderHistory, orderLines, orders } from "../db/schema";
import { type OrderRow, toMoney } from "../products/present";
import { type Holds, holdOf } from "./hold";
import type { TaxLine } from "./totals";

// GET /v1/orders/{id} and the order list: rows to the plain JSON answer.

export type LineRow = typeof orderLines.$inferSelect;
const parse = (json: string | null) => (json === null ? null : JSON.parse(json));
const isoOrNull = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** An order as GET /v1/orders/{id} returns it: request field names (interface.md 2.1) where they exist. */
export function presentOrder(o: OrderRow, lines: LineRow[], holds?: Holds) {
  const holdMinutes = holds && holdOf(holds, o.storefront === 1);
  return {
    order_id: o.id,
    status: o.status,
    date_paid: isoOrNull(o.datePaid),
    date_done: isoOrNull(o.dateDone),
    date_cancelled: isoOrNull(o.dateCancelled),
    status_date: isoOrNull(o.statusDate),
    cancel_reason: o.cancelReason,
    // While a hold is set, an order it applies to (hold.ts HELD) shows when the job will cancel it.
    hold_expires_at:
      holdMinutes !== undefined && o.status === "unpaid" && o.datePaid === null && o.dateDone === null
        ? isoOrNull(o.createdAt + holdMinutes * 60_000)
        : null,
    currency: o.currency,
    customer: {
      customer_id: o.customerId,
      type: o.customerType,
      email: o.email,
      phone: o.phone,
      login_create: o.loginCreate === 1,
      newsletter_subscribe: o.newsletterSubscribe === 1,
      billing_details: parse(o.billingDetails),
      shipping_details: parse(o.shippingDetails),
      note: o.note,
    },
    payment: { method: o.paymentMethod, transaction_id: o.transactionId, currency: o.currency, log: o.paymentLog },
    shipping: { id: o.shippingId, name: o.shippingName, price: toMoney(o.shippingPrice) },
    shipping_info: { trackingnumber: o.trackingNumber, company: o.shippingCompany },
    products: lines.map((l) => ({
      product_id: l.productId,
      variant_id: l.variantId,
      sku: l.sku,
      title: l.title,
      options: JSON.parse(l.options),
      qty: l.qty,
      price: toMoney(l.unitPrice),
      tax_rate: l.taxRate,
      total: toMoney(l.qty * l.unitPrice),
    })),
    subtotal: toMoney(o.subtotal),
    discount: toMoney(o.discount),
    total: toMoney(o.total),
    tax: (JSON.parse(o.tax) as TaxLine[]).map((t) => ({ rate: t.rate, amount: toMoney(t.amount) })),
    metadata: parse(o.metadata),
    created_at: new Date(o.createdAt).toISOString(),
    updated_at: new Date(o.updatedAt).toISOString(),
  };
}
export type OrderOut = ReturnType<typeof presentOrder>;

type HistoryRow = typeof orderHistory.$inferSelect;

/** The order's history (docs/orders.md, "History"), oldest first. */
const presentHistory = (rows: HistoryRow[]) =>
  rows.map((h) => ({
    at: new Date(h.at).toISOString(),
    change: h.change,
    restock: h.restock === null ? null : h.restock === 1,
    reason: h.reason,
    key: { id: h.keyId, name: h.keyName },
    via: h.via,
  }));

/**
 * The order with, where a stored key created it, `key: {id, name}` (docs/keys.md, "Audit"),
 * and its history: every change made to it since, with who made it.
 */
export async function getOrder(db: DB, id: number, holds?: Holds): Promise<StoredOrder | undefined> {
  const [os, ls, ks, hs] = await db.batch([
    db.select().from(orders).where(eq(orders.id, id)),
    db.select().from(orderLines).where(eq(orderLines.orderId, id)).orderBy(orderLines.position),
    db
      .select({ id: apiKeys.id, name: apiKeys.name })
      .from(apiKeys)
      .where(eq(apiKeys.id, sql`(SELECT key_id FROM orders WHERE id = ${id})`)),
    db.select().from(orderHistory).where(eq(orderHistory.orderId, id)).orderBy(orderHistory.id),
  ]);
  if (!os[0]) return undefined;
  const out = presentOrder(os[0], ls, holds);
  const shown = { ...out, ...(ks[0] ? { key: ks[0] } : {}), history: presentHistory(hs) };
  // Out of the answer (not enumerable): what the route checks a publishable key's read against.
  const { token, keyId, storefront, createdAt } = os[0];
  for (const [k, value] of Object.entries({ token, keyId, storefront: storefront === 1, createdAt })) {
    Object.defineProperty(shown, k, { value, enumerable: false });
  }
  return shown as StoredOrder;
}

export type StoredOrder = OrderOut & {
  key?: { id: number; name: string };
  history: ReturnType<typeof presentHistory>;
  token: string;
  keyId: number | null;
  storefront: boolean;
  createdAt: number;
};
