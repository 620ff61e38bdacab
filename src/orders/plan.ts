import { type Catalog, type Line, resolve, type Selector } from "./catalog";
import type { CreateOptions, OrderOutcome } from "./create";
import { addLine, orderTotals, removeLines } from "./lines";
import type { AddEntry, Address, OrderInput } from "./schema";
import type { Money } from "./totals";

// Planning a new order from the catalog rows: lines, totals, the rows to write, and the stock
// each order of a request takes in turn.

export type Planned = {
  index: number;
  token: string;
  order: Record<string, unknown>;
  customer: Record<string, unknown> | null;
  lines: Line[];
  summary: Omit<Extract<OrderOutcome, { ok: true }>, "ok" | "orderId">;
};

// JSON-valued columns are read with `->`, which gives the text 'null' for a JSON null but SQL NULL
// for a missing key: absent blocks are left out of the row object, never set to null.
const addressJson = (a: Address | undefined) => a;

/** Everything about one order that the catalog read decides; errors name element-relative paths. */
export function planOrder(
  index: number,
  o: OrderInput,
  cat: Catalog,
  opts: CreateOptions,
): Planned | { index: number; errors: string[]; notices: string[] } {
  const errors: string[] = [];
  const notices: string[] = [];
  let lines: Line[] = [];
  const byKey = new Map<string, Line>();
  const take = (sel: Selector, qty: number, price: Money | undefined, path: string) => {
    const item = resolve(sel, path, cat);
    if (typeof item === "string") errors.push(item);
    else addLine(lines, byKey, { ...item, qty, unitPrice: price ?? item.catalogPrice, path }, errors);
  };
  o.products.forEach((l, i) => {
    take(l, l.qty, l.price, `products[${i}]`);
  });
  (o.products_add ?? []).forEach((a: AddEntry, i) => {
    take(a, a.qty ?? 1, undefined, `products_add[${i}]`);
  });
  lines = removeLines(lines, o.products_remove ?? [], notices);
  if (errors.length) return { index, errors, notices };

  const shipping = o.shipping?.price ?? 0;
  // At creation there is no earlier discount, so discount_remove only matters without discount_add.
  const totals = orderTotals(lines, shipping, o.discount_add?.amount ?? 0, errors);
  if (!totals) return { index, errors, notices };
  const { subtotal, discount, total, tax } = totals;
  const f = orderFields(o, opts);
  return {
    index,
    token: f.token,
    lines,
    customer: f.customer,
    order: { ...f.order, subtotal, discount, total, tax },
    summary: { currency: f.currency, subtotal, shipping, discount, total, tax, notices },
  };
}

/**
 * What an order row and its customer take from the request alone (no catalog): everything but the
 * totals. Shared by planOrder and the one-trip create of a cold isolate (cold.ts).
 */
export function orderFields(o: OrderInput, opts: Pick<CreateOptions, "defaultCurrency" | "keyId">) {
  const token = crypto.randomUUID();
  const c = o.customer;
  const emailKey = c?.email?.toLowerCase() ?? null;
  const currency = o.payment?.currency ?? opts.defaultCurrency;
  const shipping = o.shipping?.price ?? 0;
  return {
    token,
    currency,
    shipping,
    customer:
      c?.email === undefined
        ? null
        : {
            email: c.email,
            email_key: emailKey,
            type: c.type ?? null,
            phone: c.phone ?? null,
            billing_details: addressJson(c.billing_details),
            shipping_details: addressJson(c.shipping_details),
            has_login: c.login_create ?? 0,
            newsletter: c.newsletter_subscribe ?? 0,
          },
    order: {
      token,
      key_id: opts.keyId ?? null,
      email_key: emailKey,
      email: c?.email ?? null,
      phone: c?.phone ?? null,
      customer_type: c?.type ?? null,
      note: c?.note ?? null,
      login_create: c?.login_create ?? 0,
      newsletter_subscribe: c?.newsletter_subscribe ?? 0,
      billing_details: addressJson(c?.billing_details),
      shipping_details: addressJson(c?.shipping_details),
      payment_method: o.payment?.method ?? null,
      transaction_id: o.payment?.transaction_id ?? null,
      payment_log: o.payment?.log ?? null,
      currency,
      shipping_id: o.shipping?.id ?? null,
      shipping_name: o.shipping?.name ?? null,
      shipping_price: shipping,
      metadata: o.metadata,
    } as Record<string, unknown>,
  };
}

/**
 * Takes each planned order's stock from what the read saw, in the order of the request, so a
 * later order of the same request sees what an earlier one took. Orders that would take a
 * disable_minusqty item below zero fail here with a message; the CHECK constraints guarantee it.
 */
export function reserveStock(plans: Planned[]) {
  const left = new Map<string, number>();
  const ok: Planned[] = [];
  const failed: { index: number; errors: string[]; notices: string[] }[] = [];
  for (const plan of plans) {
    const want = new Map<string, { qty: number; line: Line }>();
    for (const l of plan.lines) {
      const w = want.get(l.stockKey);
      if (w) w.qty += l.qty;
      else want.set(l.stockKey, { qty: l.qty, line: l });
    }
    const errors: string[] = [];
    for (const [key, { qty, line }] of want) {
      const have = left.get(key) ?? line.stock;
      if (line.noMinus && have - qty < 0) {
        const name = line.sku ?? (line.variantId === null ? `product ${line.productId}` : `variant ${line.variantId}`);
        errors.push(`${line.path}.qty: insufficient stock for ${name}: ${Math.max(have, 0)} left`);
      }
    }
    if (errors.length) {
      failed.push({ index: plan.index, errors, notices: plan.summary.notices });
      continue;
    }
    for (const [key, { qty, line }] of want) left.set(key, (left.get(key) ?? line.stock) - qty);
    ok.push(plan);
  }
  return { ok, failed };
}
