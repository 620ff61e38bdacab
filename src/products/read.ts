import { getTableColumns } from "drizzle-orm";
import { toProduct } from "../db/rows";
import { products, variants } from "../db/schema";
import { optionColumn, sqlNames } from "../platform/columns";
import { type DB, runBatch, stmt } from "../platform/d1";
import { type Idem, snapshotStatement } from "../platform/idempotency";
import { VARIANT_FIELDS } from "./fields";
import { type ProductOut, presentProducts, type VariantOutRow } from "./present";
import type { ProductRef } from "./route";

// Products presented in JavaScript (presentProduct, ./present.ts), from the rows productReads reads
// (a 412's product as it is now, the tests' reference) or from the snapshot an idempotent write
// stored, for its replays.

// Only the variant columns an answer shows: every column of every row is built into an object by
// D1's binding before the Worker sees it, so the ones no answer reads are not selected.
// The described fields' (src/products/fields.ts) and what the presenter adds: id, product, options.
const P = sqlNames(products);
const V = sqlNames(variants);
const VARIANT_COLUMNS = [
  V.id,
  V.productId,
  ...[1, 2, 3, 4, 5].map((n) => optionColumn(V, n)),
  ...Object.values(VARIANT_FIELDS).map((f) => V[f.column]),
]
  .map((c) => `v.${c}`)
  .join(", ");
/** The variants of the products `where` selects, joined to them. */
const JOINED = `FROM ${V.$} AS v JOIN ${P.$} AS p ON p.${P.id} = v.${V.productId}`;
const VARIANT_ORDER = `v.${V.productId}, v.${V.position}, v.${V.id}`;

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
    stmt(db, `SELECT p.* FROM ${P.$} AS p WHERE ${where} ORDER BY p.${P.id} DESC`, ...params),
    stmt(db, `SELECT ${VARIANT_COLUMNS} ${JOINED} WHERE ${where} ORDER BY ${VARIANT_ORDER}`, ...params),
  ];
}

/** The rows of productReads' two statements, presented (newest product first). */
export function presentReads(ps: { results: Record<string, unknown>[] }, vs: { results: Record<string, unknown>[] }) {
  const rows = ps.results.map(toProduct);
  return { rows, products: presentProducts(rows, vs.results as unknown as VariantOutRow[]) };
}

/** A product as presentProduct answers it, or undefined (the reference the SQL answers are held to). */
export async function getProduct(db: DB, id: number): Promise<ProductOut | undefined> {
  const [ps, vs] = await runBatch(db, productReads(db, `p.${P.id} = ?1`, id));
  return presentReads(ps, vs).products[0];
}

// Replays of product writes (docs/security.md, "Guarantees"). A product write's recorded answer refers to
// its products as {"$product": token or id}; the same batch stores a snapshot of those products'
// rows as they are after the batch, and a replay presents the snapshot. So a retry gets the first
// answer even after the product changed again; only a snapshot too large to store (an answer of
// nearly 2 MB) falls back to the product's current state.

const jsonRow = (alias: string, table: typeof products | typeof variants) =>
  `json_object(${Object.values(getTableColumns(table))
    .map((c) => `'${c.name}', ${alias}.${c.name}`)
    .join(", ")})`;

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
      SELECT v.* ${JOINED} WHERE ${where} ORDER BY ${VARIANT_ORDER}) AS v))`;
  return snapshotStatement(db, idem, `SELECT ${select}`, ...params);
}

type Snapshot = { products: Record<string, unknown>[]; variants: Record<string, unknown>[] };

/** `v` with each {"$product": ref} in it replaced by `at(ref)`. */
function resolved(v: unknown, at: (ref: string | number) => unknown): unknown {
  if (Array.isArray(v)) return v.map((x) => resolved(x, at));
  if (v && typeof v === "object") {
    const ref = (v as Partial<ProductRef>).$product;
    if (typeof ref === "string" || typeof ref === "number") return at(ref);
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolved(x, at)]));
  }
  return v;
}

/** The Resolver of product writes: presents the snapshot the first request stored. */
export async function resolveProducts(db: DB, template: unknown, snapshot: unknown): Promise<unknown> {
  const refs = new Set<string | number>();
  resolved(template, (ref) => refs.add(ref));
  if (!refs.size) return template;
  const tokens = [...refs].filter((r) => typeof r === "string");
  const ids = [...refs].filter((r) => typeof r === "number");
  const wanted = `(p.${P.token} IN (SELECT value FROM json_each(?1)) OR p.${P.id} IN (SELECT value FROM json_each(?2)))`;
  const snap = snapshot as Snapshot | undefined;
  // Snapshot variants are raw column rows (json_object over the column names), as productReads selects.
  const [ps, vs] = snap
    ? [{ results: snap.products }, { results: snap.variants }]
    : await runBatch(db, productReads(db, wanted, JSON.stringify(tokens), JSON.stringify(ids)));
  const { rows, products: out } = presentReads(ps, vs);
  const found = new Map<string | number, unknown>();
  out.forEach((product, i) => {
    found.set(rows[i].id, product);
    if (rows[i].token) found.set(rows[i].token as string, product);
  });
  return resolved(template, (ref) => found.get(ref) ?? null);
}
