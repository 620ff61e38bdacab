import { type Context, Hono } from "hono";
import { z } from "zod";
import type { DB } from "../db/client";
import type { AppEnv } from "../env";
import { jsonBody } from "../platform/body";
import { decodeCursor, encodeCursor } from "../platform/cursor";
import { ApiError, envelope } from "../platform/errors";
import { id, int, opt, str } from "../platform/fields";
import { completeStatements, type Idem, idempotency, recordStatements } from "../platform/idempotency";
import { bodyItems, parseItems } from "../platform/items";
import { zv } from "../platform/zv";
import {
  createProducts,
  findBySku,
  getProduct,
  type ItemOutcome,
  listProducts,
  type ProductRef,
  type Recorder,
} from "./create";
import type { ProductOut } from "./present";
import { productCreate, productUpdate } from "./schema";
import { updateProducts } from "./update/index";

/** `sku: ...` inside item `[2]` reads `[2].sku: ...` (contract 1). */
export function itemPath(prefix: string, message: string) {
  if (!prefix || message.startsWith("[")) return message;
  // A message about the item as a whole ("must be a product object") has no path of its own.
  return /^[\w[\].]+: /.test(message) ? `${prefix}.${message}` : `${prefix}: ${message}`;
}

/**
 * The response of a product write (contract 4): success counts the items that took effect;
 * status 200 when one did, else the status of the first failed item.
 */
export function productWriteResponse<P = ProductOut>(
  parsed: { index: number; prefix: string; notices: string[] }[],
  outcomes: Map<number, ItemOutcome<P>>,
) {
  const errors: string[] = [];
  const notices: string[] = [];
  const out: P[] = [];
  let firstFailure: number | undefined;
  for (const item of parsed) {
    notices.push(...item.notices);
    const o = outcomes.get(item.index);
    if (!o) continue;
    if (o.ok) out.push(o.product);
    else {
      firstFailure ??= o.status;
      errors.push(...o.errors.map((e) => itemPath(item.prefix, e)));
    }
  }
  const status = out.length ? 200 : (firstFailure ?? 400);
  return { status: status as 200 | 400 | 404 | 409, body: { success: out.length, errors, notices, products: out } };
}

/** What retries of a multi-round PUT get if it stopped between its rounds (see updateProducts). */
const STOPPED_PARTWAY = envelope(
  409,
  "a request with this Idempotency-Key stopped partway: some of its items may have been applied; read the products before sending changes again",
);

/** Records the answer a product write is about to give, for Idempotency-Key retries. */
export function recorder(
  db: DB,
  idem: Idem | undefined,
  parsed: { index: number; prefix: string; notices: string[]; ok: boolean; errors?: string[] }[],
  now: number,
): Recorder | undefined {
  if (!idem) return undefined;
  const answer = (planned: Map<number, ItemOutcome<ProductRef>>) => {
    const all = new Map(planned);
    for (const p of parsed) if (!p.ok) all.set(p.index, { ok: false, status: 400, errors: p.errors ?? [] });
    return productWriteResponse(parsed, all);
  };
  return {
    idem,
    claim: (planned) => {
      const { status, body } = answer(planned);
      return recordStatements(db, idem, status, body, now);
    },
    pending: () => recordStatements(db, idem, 409, STOPPED_PARTWAY, now),
    complete: (planned) => {
      const { status, body } = answer(planned);
      return completeStatements(db, idem, status, body);
    },
  };
}

type Writer<T> = (
  db: DB,
  items: { index: number; data: T }[],
  now: number,
  recorder?: Recorder,
) => Promise<Map<number, ItemOutcome>>;

/** POST and PUT alike (contract 4, 5): items parsed on their own, written by one service call. */
async function writeProducts<S extends z.ZodType>(c: Context<AppEnv>, schema: S, write: Writer<z.output<S>>) {
  const parsed = parseItems(schema, bodyItems(c.var.body, "product", true));
  const outcomes = new Map<number, ItemOutcome>();
  for (const p of parsed) if (!p.ok) outcomes.set(p.index, { ok: false, status: 400, errors: p.errors });
  const valid = parsed.flatMap((p) => (p.ok ? [{ index: p.index, data: p.data }] : []));
  const now = Date.now();
  for (const [i, o] of await write(c.var.db, valid, now, recorder(c.var.db, c.var.idem, parsed, now))) {
    outcomes.set(i, o);
  }
  const { status, body } = productWriteResponse(parsed, outcomes);
  c.set("logCounts", { products: body.success, variants: body.products.reduce((n, p) => n + p.variants.length, 0) });
  return c.json(body, status);
}

const listQuery = z.object({
  sku: opt(str(255)),
  limit: opt(int(1, 100)),
  cursor: opt(str(64)),
});

export const productsRoute = new Hono<AppEnv>()
  .post("/", jsonBody, idempotency, (c) => writeProducts(c, productCreate, createProducts))
  .put("/", jsonBody, idempotency, (c) => writeProducts(c, productUpdate, updateProducts))
  .get("/", zv("query", listQuery), async (c) => {
    const q = c.req.valid("query");
    if (q.sku !== undefined) return c.json({ products: await findBySku(c.var.db, q.sku) });
    const page = await listProducts(c.var.db, q.limit ?? 50, q.cursor ? decodeCursor(q.cursor) : undefined);
    return c.json({ products: page.products, next_cursor: page.next === null ? null : encodeCursor(page.next) });
  })
  .get("/:product_id", zv("param", z.object({ product_id: id })), async (c) => {
    const { product_id } = c.req.valid("param");
    const product = await getProduct(c.var.db, product_id);
    if (!product) throw new ApiError(404, `product ${product_id} not found`);
    return c.json(product);
  });
