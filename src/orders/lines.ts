import { MAX_ORDER_TOTAL } from "../platform/fields";
import { toMoney } from "../products/present";
import { type Catalog, type Item, type Line, resolve, type Selector } from "./catalog";
import { type AddEntry, MAX_LINES, MAX_QTY, type RemoveEntry } from "./schema";
import { type Money, type TaxLine, taxByRate } from "./totals";

// An order's lines as a create or an update plans them: merging, products_remove, and the totals
// every stored order satisfies (docs/orders.md, "Orders").

const lineKey = (l: Pick<Line, "productId" | "variantId" | "unitPrice">) =>
  `${l.productId}:${l.variantId ?? "-"}:${l.unitPrice}`;

const matches = (l: Line, r: RemoveEntry) =>
  (r.sku === undefined || l.sku === r.sku) &&
  (r.product_id === undefined || l.productId === r.product_id) &&
  (r.variant_id === undefined || l.variantId === r.variant_id);

/** Drops every line that a remove entry matches; an entry that matched nothing is a notice. */
export function removeLines(lines: Line[], removes: RemoveEntry[], notices: string[]): Line[] {
  if (!removes.length) return lines;
  // One pass over the lines for all remove entries.
  const used = new Set<number>();
  const kept = lines.filter((l) => {
    const hit = removes.findIndex((r) => matches(l, r));
    if (hit < 0) return true;
    for (let i = hit; i < removes.length; i++) if (matches(l, removes[i])) used.add(i);
    return false;
  });
  removes.forEach((_, i) => {
    if (!used.has(i)) notices.push(`products_remove[${i}]: no line of the order matches; nothing removed`);
  });
  return kept;
}

/** The line edits of a body: what a create gives and a PUT may give. */
type Edits = {
  products?: (Selector & { qty: number; price?: Money })[];
  products_add?: AddEntry[];
  products_remove?: RemoveEntry[];
};

/**
 * An order's lines (docs/orders.md, "Orders"): `start` (those an edit keeps), `products`, then
 * `products_add`, each resolved in `cat` and merged, then `products_remove`. Errors and notices are
 * pushed; `onItem` sees each resolved line; `most` is a storefront's limit on one item, and why.
 */
export function planLines(
  start: Line[],
  body: Edits,
  cat: Catalog,
  visibleOnly: boolean,
  errors: string[],
  notices: string[],
  onItem?: (item: Item, path: string) => void,
  most?: { qty: number; why: string },
): Line[] {
  const lines = [...start];
  const byKey = new Map(lines.map((l) => [lineKey(l), l]));
  const take = (sel: Selector, qty: number, price: Money | undefined, path: string) => {
    const item = resolve(sel, path, cat, visibleOnly);
    if (typeof item === "string") {
      errors.push(item);
      return;
    }
    onItem?.(item, path);
    if (most && qty > most.qty) {
      errors.push(`${path}.qty: must be at most ${most.qty} ${most.why}`);
      return;
    }
    // Merged into an earlier line of the same variant and unit price, found by key so that merging
    // stays linear in the number of lines; `most` is a storefront's lower limit on a merged line.
    const line = { ...item, qty, unitPrice: price ?? item.catalogPrice, path };
    const key = lineKey(line);
    const same = byKey.get(key);
    if (!same) {
      lines.push(line);
      byKey.set(key, line);
    } else if (same.qty + qty > MAX_QTY) {
      errors.push(`${path}.qty: together with ${same.path} more than ${MAX_QTY} of one item`);
    } else if (most && same.qty + qty > most.qty) {
      errors.push(`${path}.qty: together with ${same.path} more than ${most.qty} of one item ${most.why}`);
    } else same.qty += qty;
  };
  for (const [i, l] of (body.products ?? []).entries()) take(l, l.qty, l.price, `products[${i}]`);
  for (const [i, a] of (body.products_add ?? []).entries()) take(a, a.qty ?? 1, undefined, `products_add[${i}]`);
  return removeLines(lines, body.products_remove ?? [], notices);
}

export type Totals = { subtotal: Money; shipping: Money; discount: Money; total: Money; tax: TaxLine[] };

/** Subtotal, total and tax; undefined, with errors pushed, for no lines, too many, too much discount or total. */
export function orderTotals(
  lines: { qty: number; unitPrice: Money; taxRate: number }[],
  shipping: Money,
  discount: Money,
  errors: string[],
): Totals | undefined {
  if (!lines.length) errors.push("products: the order has no lines left after products_remove");
  if (lines.length > MAX_LINES)
    errors.push(`products: at most ${MAX_LINES} lines per order, this one has ${lines.length}`);

  // Stops summing once past any possible valid total, so no sum leaves the safe integer range.
  const limit = MAX_ORDER_TOTAL * 2;
  let subtotal = 0;
  for (const l of lines) if (subtotal <= limit) subtotal += l.qty * l.unitPrice;
  if (subtotal <= limit && discount > subtotal + shipping) {
    errors.push(
      `discount_add.amount: ${toMoney(discount)} is more than the lines plus shipping (${toMoney(subtotal + shipping)})`,
    );
  }
  const total = subtotal + shipping - discount;
  if (subtotal > limit || total > MAX_ORDER_TOTAL) {
    errors.push(`products: the order total would be more than ${toMoney(MAX_ORDER_TOTAL)}`);
  }
  if (errors.length) return undefined;
  const amounts = lines.map((l) => ({ amount: l.qty * l.unitPrice, taxRate: l.taxRate }));
  return { subtotal, shipping, discount, total, tax: taxByRate(amounts, discount) };
}
