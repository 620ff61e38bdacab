import { getTableColumns } from "drizzle-orm";
import type { DB } from "../db/client";
import { toProduct } from "../db/rows";
import { products, variants } from "../db/schema";
import { sqlNames } from "../platform/columns";
import { runBatch } from "../platform/d1";
import { type Idem, snapshotStatement } from "../platform/idempotency";
import { presentProducts, type VariantOutRow } from "./present";
import { presentReads, productReads } from "./read";
import type { ProductRef } from "./write";

// Replays of product writes (docs/security.md, "Guarantees"). A product write's recorded answer refers to
// its products as {"$product": token or id}; the same batch stores a snapshot of those products'
// rows as they are after the batch, and a replay presents the snapshot. So a retry gets the first
// answer even after the product changed again; only a snapshot too large to store (an answer of
// nearly 2 MB) falls back to the product's current state.

const jsonRow = (alias: string, table: typeof products | typeof variants) =>
  `json_object(${Object.values(getTableColumns(table))
    .map((c) => `'${c.name}', ${alias}.${c.name}`)
    .join(", ")})`;

const P = sqlNames(products);
const V = sqlNames(variants);
const PRODUCT_JSON = jsonRow("p", products);
const VARIANT_JSON = jsonRow("v", variants);

/**
 * The statement that snapshots the products matching `where` (a condition on `p`, as for
 * productReads) into the request's idempotency record; the last statement of the batch.
 */
export function productSnapshot(db: DB, idem: Idem, where: string, ...params: unknown[]) {
  const select = `json_object(
    'products', (SELECT json_group_array(${PRODUCT_JSON}) FROM ${P.$} AS p WHERE ${where}),
    'variants', (SELECT json_group_array(${VARIANT_JSON}) FROM (
      SELECT v.* FROM ${V.$} AS v JOIN ${P.$} AS p ON p.${P.id} = v.${V.productId} WHERE ${where}
      ORDER BY v.${V.productId}, v.${V.position}, v.${V.id}) AS v))`;
  return snapshotStatement(db, idem, `SELECT ${select}`, ...params);
}

type Snapshot = { products: Record<string, unknown>[]; variants: Record<string, unknown>[] };

function collect(v: unknown, refs: Set<string | number>) {
  if (Array.isArray(v)) for (const x of v) collect(x, refs);
  else if (v && typeof v === "object") {
    const ref = (v as Partial<ProductRef>).$product;
    if (typeof ref === "string" || typeof ref === "number") refs.add(ref);
    else for (const x of Object.values(v)) collect(x, refs);
  }
}

function fill(v: unknown, found: Map<string | number, unknown>): unknown {
  if (Array.isArray(v)) return v.map((x) => fill(x, found));
  if (v && typeof v === "object") {
    const ref = (v as Partial<ProductRef>).$product;
    if (typeof ref === "string" || typeof ref === "number") return found.get(ref) ?? null;
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fill(x, found)]));
  }
  return v;
}

/** The Resolver of product writes: presents the snapshot the first request stored. */
export async function resolveProducts(db: DB, template: unknown, snapshot: unknown): Promise<unknown> {
  const refs = new Set<string | number>();
  collect(template, refs);
  if (!refs.size) return template;
  let rows: ReturnType<typeof toProduct>[];
  let out: ReturnType<typeof presentProducts>;
  if (snapshot) {
    const snap = snapshot as Snapshot;
    rows = snap.products.map(toProduct);
    // Snapshot variants are raw column rows (json_object over the column names), as productReads selects.
    out = presentProducts(rows, snap.variants as unknown as VariantOutRow[]);
  } else {
    const tokens = [...refs].filter((r) => typeof r === "string");
    const ids = [...refs].filter((r) => typeof r === "number");
    const wanted = `(p.${P.token} IN (SELECT value FROM json_each(?1)) OR p.${P.id} IN (SELECT value FROM json_each(?2)))`;
    const [ps, vs] = await runBatch(db, productReads(db, wanted, JSON.stringify(tokens), JSON.stringify(ids)));
    ({ rows, products: out } = presentReads(ps, vs));
  }
  const found = new Map<string | number, unknown>();
  out.forEach((product, i) => {
    found.set(rows[i].id, product);
    if (rows[i].token) found.set(rows[i].token as string, product);
  });
  return fill(template, found);
}
