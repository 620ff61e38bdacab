import { products, variants } from "../db/schema";
import { sqlNames } from "../platform/columns";
import { type DB, jsonChunks, stmt } from "../platform/d1";
import { heldVersionBumps } from "../products/version";

// Stock moves of orders, shared by create, update and cancel: a variant's qty, or the stock of a
// product without variants. The floors are CHECK constraints (disable_minusqty), so a batch that
// would oversell fails whole and is planned again.

/** One stock move: `qty` taken (negative: given back) from a variant, or from a product when variant_id is null. */
export type StockMove = { product_id: number; variant_id: number | null; qty: number };

const V = sqlNames(variants);
const P = sqlNames(products);

// ?1 the moves (StockMove objects, summed: one per row) as one JSON array.
const take = (table: { $: string; id: string }, stock: string, variant: boolean) => `
  UPDATE ${table.$} SET ${stock} = ${table.$}.${stock} - t.q
  FROM (SELECT s.value->>'${variant ? "variant_id" : "product_id"}' AS id, s.value->>'qty' AS q FROM json_each(?1) AS s
        WHERE s.value->>'variant_id' IS ${variant ? "NOT " : ""}NULL) AS t
  WHERE ${table.$}.${table.id} = t.id`;
const TAKE_VARIANT_STOCK = take(V, V.qty, true);
const TAKE_PRODUCT_STOCK = take(P, P.stock, false);

/** Sums moves per variant or product, so the JSON stays small whatever the number of lines. */
export function sumMoves(moves: StockMove[]): StockMove[] {
  const taken = new Map<string, StockMove>();
  for (const m of moves) {
    const key = `${m.product_id}:${m.variant_id}`;
    const t = taken.get(key);
    if (t) t.qty += m.qty;
    else taken.set(key, { ...m });
  }
  return [...taken.values()].filter((m) => m.qty !== 0);
}

/** The moves of taking `lines`' qty (`sign` 1) or of giving it back (-1). */
export const lineMoves = (sign: 1 | -1, lines: { productId: number; variantId: number | null; qty: number }[]) =>
  lines.map((l): StockMove => ({ product_id: l.productId, variant_id: l.variantId, qty: sign * l.qty }));

/**
 * The statements that move `moves` (summed) and bump their products' versions: a product deleted
 * since its read fails the bump rather than being skipped, and the caller plans again.
 */
export function stockWrites(db: DB, moves: StockMove[]): D1PreparedStatement[] {
  const summed = sumMoves(moves);
  if (!summed.length) return [];
  const chunks = jsonChunks(summed);
  // An UPDATE that would match no row still costs its statement in the batch: leave it out.
  const apply = (sql: string, variants: boolean) =>
    summed.some((m) => (m.variant_id !== null) === variants) ? chunks.map((json) => stmt(db, sql, json)) : [];
  return [
    ...apply(TAKE_VARIANT_STOCK, true),
    ...apply(TAKE_PRODUCT_STOCK, false),
    ...heldVersionBumps(db, [...new Set(summed.map((m) => m.product_id))]),
  ];
}
