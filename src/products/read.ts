import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { DB } from "../db/client";
import { toProduct } from "../db/rows";
import { products, variants } from "../db/schema";
import { stmt } from "../platform/d1";
import { VARIANT_FIELDS, variantColumn } from "./fields";
import { col, PRODUCTS, VARIANTS } from "./json-sql";
import { presentProducts, type VariantOutRow } from "./present";

// Only the variant columns an answer shows: every column of every row is built into an object by
// D1's binding before the Worker sees it, so the ones no answer reads are not selected.
// The described fields' (src/products/fields.ts) and what the presenter adds: id, product, options.
const v = variants;
const VARIANT_COLUMNS = [
  v.id,
  v.productId,
  v.option1,
  v.option2,
  v.option3,
  v.option4,
  v.option5,
  ...Object.values(VARIANT_FIELDS).map((f) => variantColumn(f)),
]
  .map((c) => col("v", c))
  .join(", ");
const P = (c: SQLiteColumn) => col("p", c);
const V = (c: SQLiteColumn) => col("v", c);
/** The variants of the products `where` selects, joined to them. */
const JOINED = `FROM ${VARIANTS} AS v JOIN ${PRODUCTS} AS p ON ${P(products.id)} = ${V(v.productId)}`;
const VARIANT_ORDER = `${V(v.productId)}, ${V(v.position)}, ${V(v.id)}`;

/**
 * The two statements that read products and their variants, for a condition on the product `p`
 * (constant SQL from this codebase; values go in `params`). Every answer that shows a product —
 * GET, lists, the read-back of a write, an idempotent replay — reads through here, so they agree.
 * Plain statements rather than Drizzle's select: Drizzle maps every column of every row through
 * its column objects, which for a product of 2,048 variants cost more CPU than the rest of the
 * request together. Variant rows are presented as D1 gives them, without a mapped row between.
 */
export function productReads(db: DB, where: string, ...params: unknown[]) {
  return [
    stmt(db, `SELECT p.* FROM ${PRODUCTS} AS p WHERE ${where} ORDER BY ${P(products.id)} DESC`, ...params),
    stmt(db, `SELECT ${VARIANT_COLUMNS} ${JOINED} WHERE ${where} ORDER BY ${VARIANT_ORDER}`, ...params),
  ];
}

/** The rows of productReads' two statements, presented (newest product first). */
export function presentReads(ps: D1Result<Record<string, unknown>>, vs: D1Result<Record<string, unknown>>) {
  const rows = ps.results.map(toProduct);
  return { rows, products: presentProducts(rows, vs.results as unknown as VariantOutRow[]) };
}

/**
 * The read-back of a write answered with `Prefer: return=minimal` (docs/products.md,
 * "Prefer: return=minimal"): the same products as productReads, in the same order, but only what a minimal
 * answer shows, so neither D1's binding nor presenting builds the rest.
 */
export function minimalReads(db: DB, where: string, ...params: unknown[]) {
  return [
    stmt(
      db,
      `SELECT ${[products.id, products.token, products.sku, products.updatedAt].map(P).join(", ")}
       FROM ${PRODUCTS} AS p WHERE ${where} ORDER BY ${P(products.id)} DESC`,
      ...params,
    ),
    stmt(
      db,
      `SELECT ${[v.id, v.productId, v.sku].map(V).join(", ")} ${JOINED} WHERE ${where} ORDER BY ${VARIANT_ORDER}`,
      ...params,
    ),
  ];
}

type MinimalVariant = { variant_id: number; sku: string | null };
export type MinimalProduct = { product_id: number; sku: string | null; updated_at: string; variants: MinimalVariant[] };

/** The rows of minimalReads' two statements as minimal products (see src/platform/prefer.ts). */
export function presentMinimal(ps: D1Result<Record<string, unknown>>, vs: D1Result<Record<string, unknown>>) {
  const byId = new Map<number, MinimalVariant[]>();
  const rows = ps.results.map((r) => ({ id: Number(r.id), token: String(r.token) }));
  const products = ps.results.map((r): MinimalProduct => {
    const variants: MinimalVariant[] = [];
    byId.set(Number(r.id), variants);
    return {
      product_id: Number(r.id),
      sku: r.sku as string | null,
      updated_at: new Date(Number(r.updated_at)).toISOString(),
      variants,
    };
  });
  for (const v of vs.results)
    byId.get(Number(v.product_id))?.push({ variant_id: Number(v.id), sku: v.sku as string | null });
  return { rows, products };
}

/** The read-back of a write, full or minimal. */
export const readBack = (minimal: boolean | undefined) =>
  minimal ? { reads: minimalReads, present: presentMinimal } : { reads: productReads, present: presentReads };
