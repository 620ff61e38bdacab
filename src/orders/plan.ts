import { customers, orders } from "../db/schema";
import { sqlNames } from "../platform/columns";
import { type Catalog, itemName, type Line } from "./catalog";
import type { OrderOutcome, PlanOptions } from "./create";
import { customerRow, orderRow } from "./insert";
import { orderTotals, planLines } from "./lines";
import type { OrderInput } from "./schema";
import { STOREFRONT_LINE, storefrontShipping } from "./storefront";

// Planning a new order from the catalog rows: lines, totals, rows, and the stock it takes in turn.

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
  // A secret key's order gives its own shipping (docs/orders.md, "Creating orders").
  const s = o.shipping;
  const ship = sf
    ? storefrontShipping(o, sf, lines, errors, notices)
    : { id: s?.id ?? null, name: s?.name ?? null, price: s?.price ?? 0 };
  // At creation there is no earlier discount, so discount_remove only matters without discount_add.
  const totals = ship && orderTotals(lines, ship.price, o.discount_add?.amount ?? 0, errors);
  if (!ship || !totals) return { index, errors, notices };
  const token = crypto.randomUUID();
  const c = o.customer;
  // A storefront's order links no customer and changes none: its details stay on the order.
  const emailKey = sf ? null : (c?.email?.toLowerCase() ?? null);
  const currency = o.payment?.currency ?? opts.defaultCurrency;
  const { subtotal, discount, total, tax } = totals;
  return {
    index,
    token,
    lines,
    customer: c?.email === undefined || emailKey === null ? null : customerRow(c, emailKey),
    order: {
      ...orderRow(o),
      // What the store decides rather than the body, and what the INSERT reads besides.
      [O.currency]: currency,
      [O.shippingId]: ship.id,
      [O.shippingName]: ship.name,
      [O.shippingPrice]: ship.price,
      [O.token]: token,
      [O.keyId]: opts.keyId ?? null,
      [O.storefront]: sf ? 1 : 0,
      [C.emailKey]: emailKey,
      [O.subtotal]: subtotal,
      [O.discount]: discount,
      [O.total]: total,
      [O.tax]: tax,
    },
    summary: { currency, ...totals, notices },
  };
}

/**
 * Takes each planned order's stock from what the read saw, in request order, so a later order sees
 * what an earlier one took; one that would take a disable_minusqty item below zero fails here.
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
        // A storefront without the stock permission is not told the count (docs/storefront.md).
        const count = showCount ? `${Math.max(have, 0)} left` : "this line cannot be filled";
        errors.push(`${line.path}.qty: insufficient stock for ${itemName(line)}: ${count}`);
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
