import { orderLines, orders } from "../db/schema";
import { sqlNames } from "../platform/columns";
import { type DB, jsonChunks, stmt } from "../platform/d1";
import { type Catalog, itemName, type Line, readGuard } from "./catalog";
import { insertLines, lineRow } from "./insert";
import { orderTotals, planLines, type Totals } from "./lines";
import type { OrderUpdate } from "./schema";
import { type StockMove, sumMoves } from "./stock";

// Line edits of PUT /v1/orders on an unpaid order (docs/orders.md, "Orders"): products replace, then
// products_add, then products_remove, discounts, totals, and the stock moved by the difference.

type OrderRow = typeof orders.$inferSelect;
type LineRow = typeof orderLines.$inferSelect;

export const LINE_EDITS = ["products", "products_add", "products_remove", "discount_add", "discount_remove"] as const;
// What changes lines: an empty products_add or products_remove, or discount_remove false (the
// modelled docs' example sends it with every change), asks for nothing.
export const EDITS: Record<(typeof LINE_EDITS)[number], (u: OrderUpdate) => boolean> = {
  products: (u) => u.products !== undefined,
  products_add: (u) => (u.products_add?.length ?? 0) > 0,
  products_remove: (u) => (u.products_remove?.length ?? 0) > 0,
  discount_add: (u) => u.discount_add !== undefined,
  discount_remove: (u) => u.discount_remove === true,
};
export const editsLines = (u: OrderUpdate) => LINE_EDITS.some((f) => EDITS[f](u));

const L = sqlNames(orderLines);
const O = sqlNames(orders);

const DELETE_LINES = `DELETE FROM ${L.$} WHERE ${L.orderId} = ?1`;
const INSERT_LINES = insertLines("?2");
const UPDATE_TOTALS = `
  UPDATE ${O.$} SET ${O.subtotal} = ?2, ${O.discount} = ?3, ${O.total} = ?4, ${O.tax} = ?5,
    ${O.version} = ${O.version} + 1, ${O.updatedAt} = ?6
  WHERE ${O.id} = ?1`;

/** A stored line as a plan line: its snapshot stays, its stock facts come from today's catalog. */
function storedLine(r: LineRow, cat: Catalog): Line {
  const v = r.variantId === null ? undefined : cat.variants.get(r.variantId);
  const p = cat.products.get(r.productId);
  return {
    productId: r.productId,
    variantId: r.variantId,
    sku: r.sku,
    title: r.title,
    options: JSON.parse(r.options),
    catalogPrice: r.unitPrice,
    taxRate: r.taxRate,
    stockKey: r.variantId === null ? `p${r.productId}` : `v${r.variantId}`,
    noMinus: v ? v.noMinus === 1 : r.variantId === null && p ? p.disableMinusqty === 1 : false,
    stock: v ? v.qty : r.variantId === null && p ? p.stock : 0,
    productUpdatedAt: p?.updatedAt ?? 0,
    qty: r.qty,
    unitPrice: r.unitPrice,
    path: `products[${r.position - 1}]`,
  };
}

export type LinePlan = { lines: Line[]; totals: Totals; moves: StockMove[]; readProducts: Map<number, number> };

/** New lines, totals and stock moves of an unpaid order's line edits, or the errors. */
export function planEdit(u: OrderUpdate, pre: OrderRow, stored: LineRow[], cat: Catalog, notices: string[]) {
  const errors: string[] = [];
  const firstPath = new Map<string, string>();
  const readProducts = new Map<number, number>();
  // `products` replaces every line; otherwise the stored ones stay, their snapshots with them.
  const kept = u.products ? [] : stored.map((r) => storedLine(r, cat));
  const lines = planLines(kept, u, cat, false, errors, notices, (item, path) => {
    readProducts.set(item.productId, item.productUpdatedAt);
    if (!firstPath.has(item.stockKey)) firstPath.set(item.stockKey, path);
  });
  if (errors.length) return { errors };
  let discount = u.discount_remove ? 0 : pre.discount;
  if (u.discount_add) discount = u.discount_add.amount;
  const totals = orderTotals(lines, pre.shippingPrice, discount, errors);
  if (!totals) return { errors };

  // Stock moves by the difference per variant or product; a rise is refused like a create's take.
  const delta = new Map<string, { move: StockMove; line?: Line }>();
  const add = (key: string, l: Pick<Line, "productId" | "variantId">, qty: number, line?: Line) => {
    const d = delta.get(key) ?? { move: { product_id: l.productId, variant_id: l.variantId, qty: 0 } };
    d.move.qty += qty;
    d.line ??= line;
    delta.set(key, d);
  };
  for (const r of stored) add(r.variantId === null ? `p${r.productId}` : `v${r.variantId}`, r, -r.qty);
  for (const l of lines) add(l.stockKey, l, l.qty, l);
  for (const [key, { move, line }] of delta) {
    if (!line || move.qty <= 0 || !line.noMinus || line.stock - move.qty >= 0) continue;
    const path = firstPath.get(key) ?? line.path;
    errors.push(`${path}.qty: insufficient stock for ${itemName(line)}: ${Math.max(line.stock, 0)} left`);
  }
  if (errors.length) return { errors };
  const moves = sumMoves([...delta.values()].map((d) => d.move));
  return { plan: { lines, totals, moves, readProducts } satisfies LinePlan };
}

/** The line, totals and guard statements of a plan; its stock moves are the caller's (update.ts). */
export function lineStatements(db: DB, orderId: number, p: LinePlan, now: number): D1PreparedStatement[] {
  const rows = p.lines.map(lineRow);
  const { subtotal, discount, total, tax } = p.totals;
  return [
    // Prices and titles of new lines were read before this batch: a product changed since fails it.
    readGuard(db, p.readProducts),
    stmt(db, DELETE_LINES, orderId),
    ...jsonChunks(rows).map((json) => stmt(db, INSERT_LINES, json, orderId)),
    stmt(db, UPDATE_TOTALS, orderId, subtotal, discount, total, JSON.stringify(tax), now),
  ];
}
