import { customers, orders } from "../db/schema";
import { sqlNames } from "../platform/columns";
import type { Catalog, Line } from "./catalog";
import type { OrderOutcome, PlanOptions } from "./create";
import { customerRow, orderRow } from "./insert";
import { orderTotals, planLines } from "./lines";
import type { OrderInput } from "./schema";
import { type Shipping, STOREFRONT_LINE, storefrontShipping } from "./storefront";

// Planning a new order from the catalog rows: lines, totals, the rows to write, and the stock
// each order of a request takes in turn.

const O = sqlNames(orders);
const C = sqlNames(customers);

export type Planned = {
  index: number;
  token: string;
  order: Record<string, unknown>;
  customer: Record<string, unknown> | null;
  lines: Line[];
  summary: Omit<Extract<OrderOutcome, { ok: true }>, "ok" | "orderId">;
};

/** Everything about one order that the catalog read decides; errors name element-relative paths. */
export function planOrder(
  index: number,
  o: OrderInput,
  cat: Catalog,
  opts: PlanOptions,
): Planned | { index: number; errors: string[]; notices: string[] } {
  const errors: string[] = [];
  const notices: string[] = [];
  const sf = opts.storefront;
  // A storefront's lines of one item count together against its line limit (docs/storefront.md).
  const most = sf ? { qty: sf.maxLineQty, why: STOREFRONT_LINE } : undefined;
  const lines = planLines([], o, cat, sf !== undefined, errors, notices, undefined, most);
  const units = lines.reduce((n, l) => n + l.qty, 0);
  if (sf && units > sf.maxHeldUnits) {
    errors.push(
      `products: ${units} units is more than the ${sf.maxHeldUnits} that unpaid storefront orders from one address may hold`,
    );
  }
  if (errors.length) return { index, errors, notices };

  let ship = givenShipping(o);
  if (sf) {
    const subtotal = lines.reduce((a, l) => a + l.qty * l.unitPrice, 0);
    const chosen = storefrontShipping(o, sf, subtotal, errors, notices);
    if (!chosen) return { index, errors, notices };
    ship = chosen;
  }
  // At creation there is no earlier discount, so discount_remove only matters without discount_add.
  const totals = orderTotals(lines, ship.price, o.discount_add?.amount ?? 0, errors);
  if (!totals) return { index, errors, notices };
  const { subtotal, discount, total, tax } = totals;
  const shipping = ship.price;
  const f = orderFields(o, opts, ship);
  return {
    index,
    token: f.token,
    lines,
    customer: f.customer,
    order: { ...f.order, [O.subtotal]: subtotal, [O.discount]: discount, [O.total]: total, [O.tax]: tax },
    summary: { currency: f.currency, subtotal, shipping, discount, total, tax, notices },
  };
}

/** The shipping a secret key's order gives itself (docs/orders.md, "Creating orders"). */
const givenShipping = (o: OrderInput): Shipping => ({
  id: o.shipping?.id ?? null,
  name: o.shipping?.name ?? null,
  price: o.shipping?.price ?? 0,
});

/**
 * What an order row and its customer take from the request alone (no catalog): everything but the
 * totals. A storefront's order (opts.storefront) links no customer and changes none: its details
 * stay on the order.
 */
export function orderFields(
  o: OrderInput,
  opts: Pick<PlanOptions, "defaultCurrency" | "keyId" | "storefront">,
  ship = givenShipping(o),
) {
  const token = crypto.randomUUID();
  const c = o.customer;
  const storefront = opts.storefront !== undefined;
  const emailKey = storefront ? null : (c?.email?.toLowerCase() ?? null);
  const currency = o.payment?.currency ?? opts.defaultCurrency;
  const shipping = ship.price;
  const order = orderRow(o);
  // Special entries: what the store decides rather than the body, and what the INSERT reads besides.
  Object.assign(order, {
    [O.currency]: currency,
    [O.shippingId]: ship.id,
    [O.shippingName]: ship.name,
    [O.shippingPrice]: shipping,
    [O.token]: token,
    [O.keyId]: opts.keyId ?? null,
    [O.storefront]: storefront ? 1 : 0,
    [C.emailKey]: emailKey,
  });
  return {
    token,
    currency,
    shipping,
    customer: c?.email === undefined || emailKey === null ? null : customerRow(c, emailKey),
    order,
  };
}

/**
 * Takes each planned order's stock from what the read saw, in the order of the request, so a
 * later order of the same request sees what an earlier one took. Orders that would take a
 * disable_minusqty item below zero fail here with a message; the CHECK constraints guarantee it.
 */
export function reserveStock(plans: Planned[], showCount = true) {
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
        // A storefront without the stock permission is not told the count (docs/storefront.md).
        const count = showCount ? `${Math.max(have, 0)} left` : "this line cannot be filled";
        errors.push(`${line.path}.qty: insufficient stock for ${name}: ${count}`);
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
