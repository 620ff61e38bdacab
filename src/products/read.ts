import type { DB } from "../db/client";
import { toProduct, toVariant } from "../db/rows";
import { stmt } from "../platform/d1";
import { presentProducts } from "./present";

/**
 * The two statements that read products and their variants, for a condition on the product `p`
 * (constant SQL from this codebase; values go in `params`). Every answer that shows a product —
 * GET, lists, the read-back of a write, an idempotent replay — reads through here, so they agree.
 * Plain statements and rowMapper rather than Drizzle's select: Drizzle maps every column of every
 * row through its column objects, which for a product of 2,048 variants cost more CPU than the
 * rest of the request together.
 */
export function productReads(db: DB, where: string, ...params: unknown[]) {
  return [
    stmt(db, `SELECT p.* FROM products AS p WHERE ${where} ORDER BY p.id DESC`, ...params),
    stmt(
      db,
      `SELECT v.* FROM variants AS v JOIN products AS p ON p.id = v.product_id WHERE ${where}
       ORDER BY v.product_id, v.position, v.id`,
      ...params,
    ),
  ];
}

/** The rows of productReads' two statements, presented (newest product first). */
export function presentReads(ps: D1Result<Record<string, unknown>>, vs: D1Result<Record<string, unknown>>) {
  const rows = ps.results.map(toProduct);
  return { rows, products: presentProducts(rows, vs.results.map(toVariant)) };
}
