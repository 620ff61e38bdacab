import type { Context } from "hono";
import { Hono } from "hono";
import { z } from "zod";
import { products } from "../db/schema";
import type { AppEnv } from "../env";
import { publicView } from "../keys/public";
import {
  bodyItems,
  fieldNames,
  jsonBody,
  MINIMAL_APPLIED,
  minimalProduct,
  parseItems,
  prefersMinimal,
} from "../platform/body";
import { sqlNames } from "../platform/columns";
import { carriedJson, type DB, escapeBackticks, stmt } from "../platform/d1";
import { ApiError, envelope } from "../platform/errors";
import { id } from "../platform/fields";
import { type Claim, completeStatements, type Idem, idempotencyWith, recordStatements } from "../platform/idempotency";
import { carriedChunks } from "../platform/stream";
import { zv } from "../platform/zv";
import { dispatch, type PendingEvent, waiterOf } from "../webhooks/outbox";
import { createProducts } from "./create";
import { deleteProducts } from "./delete";
import { countProducts, listProducts, parseProductQuery } from "./list";
import { type ProductOut, ProductText, productRead, storeUrl } from "./present";
import { productSnapshot, resolveProducts } from "./read";
import { productCreate, productDelete, productUpdate } from "./schema";
import { updateProducts } from "./update/index";
import { catalogEdge, ifMatchTags, notModified, productETag, VERSION_OF } from "./version";

const BY_ID = `p.${sqlNames(products).id} = ?1`;

/** Idempotency-Key handling of the product writes: replays present the stored snapshot. */
export const productIdempotency = idempotencyWith(resolveProducts);

export const productsRoute = new Hono<AppEnv>()
  .use(storeUrl)
  .post("/", jsonBody, productIdempotency, (c) => writeProducts(c, productCreate, createProducts))
  .put("/", jsonBody, productIdempotency, async (c) => {
    // If-Match (docs/stock.md): a write of one product, only if it is still the version the client
    // read; the answer carries the product's ETag.
    const ifMatch = ifMatchTags(c.req.header("If-Match"));
    if (!ifMatch) return writeProducts(c, productUpdate, updateProducts);
    if (bodyItems(c.var.body, "product", true, fieldNames(productUpdate)).length !== 1) {
      throw new ApiError(400, "If-Match: applies to a PUT of one product; send one product object");
    }
    const res = await writeProducts(c, productUpdate, (db, items, now, recorder, options) =>
      updateProducts(db, items, now, recorder, { ...options, ifMatch }),
    );
    if (ifMatch.etag) res.headers.set("ETag", ifMatch.etag);
    return res;
  })
  .delete("/", jsonBody, productIdempotency, (c) =>
    writeProducts(c, productDelete, deleteProducts, { products: false }),
  )
  .get("/", notModified, catalogEdge, async (c) => {
    const pub = publicView(c.var.credential);
    const q = { ...parseProductQuery(c.req.url), visibleOnly: pub !== undefined };
    const { chunks, link, etag } = await listProducts(c.var.db, q, c.req.url, pub);
    // SQLite's text as is, streamed when large: the page is never parsed in the Worker (docs/design.md).
    return carriedChunks(c, chunks, { ETag: etag, ...(link ? { Link: link } : {}) });
  })
  .get("/count", async (c) => c.json(await countProducts(c.var.db, c.req.url)))
  .get("/:product_id", notModified, zv("param", z.object({ product_id: id })), catalogEdge, async (c) => {
    const { product_id } = c.req.valid("param");
    const pub = publicView(c.var.credential);
    // SQLite's text as is (./present.ts), a storefront's with only what it may see. The ETag comes
    // of the product's version: hashing a megabyte of answer cost about a quarter of this read's CPU.
    const db = c.var.db;
    const [found, version] = await db.$client.batch<Record<string, unknown>>([
      productRead(db, pub, BY_ID, product_id),
      stmt(db, VERSION_OF, product_id),
    ]);
    // A hidden product does not exist for a storefront (productRead yields no row for it).
    if (!found.results.length) throw new ApiError(404, `product ${product_id} not found`);
    // The product's own version: it moves when this product changes or sells, not when another
    // does, so it is also what If-Match on PUT compares (docs/stock.md).
    const tag = productETag(product_id, version.results[0]?.version, pub);
    return c.body(found.results[0].json as string, 200, { "Content-Type": "application/json", ETag: tag });
  });

// ---------------------------------------------------------------------------------------------
// What POST, PUT and DELETE /v1/products share (docs/products.md, "Products"): the body read as items, each
// validated on its own, one service call, the answer {success, errors, notices, products}, the
// Idempotency-Key record and the events handed to the queue once the batch committed.

/**
 * How a write answers: `minimal` reads back only ids, SKUs and updated_at (docs/products.md,
 * "Prefer: return=minimal"). keyId: the stored API key making the write (null: the bootstrap
 * API_KEY), for the audit trail.
 */
export type WriteOptions = { minimal?: boolean; keyId?: number | null; ifMatch?: IfMatch };

/**
 * An If-Match on a PUT of one product (docs/stock.md): the tags it
 * names; the write sets `etag` to the product's ETag as it answers it (written, or current on 412).
 */
export type IfMatch = { any: boolean; tags: string[]; etag?: string };

/** One item of a product write: either its product, or why it failed and with which status. */
export type ItemOutcome<P = ProductOut | ProductText> =
  | { ok: true; product: P }
  | { ok: false; status: 400 | 404 | 409 | 412 | 413; errors: string[]; current?: ProductOut };

/** What a product write service returns: each item's outcome and the events its batches wrote. */
export type Written<P = ProductOut | ProductText> = {
  outcomes: Map<number, ItemOutcome<P>>;
  events: PendingEvent[];
  /** Nothing a catalogue read shows changed (every item refused, or none changed anything). */
  unchanged?: true;
};

/** A product the write batch will create or change, referred to before its id is known. */
export type ProductRef = { $product: string | number };

/** How a product write records its answer for Idempotency-Key retries (docs/security.md, "Guarantees"). */
export type Recorder = {
  idem: Idem;
  /** Claims the key with the request's whole answer (a deletion's items answer the deleted id). */
  claim: Claim<Map<number, ItemOutcome<ProductRef | number>>>;
  /** Claims the key before the request's first of several batches (PUT naming a product twice). */
  pending: () => D1PreparedStatement[];
  /** Completes a pending record with the whole answer, in the last batch. */
  complete: Claim<Map<number, ItemOutcome<ProductRef>>>;
  /**
   * The last statement of a batch that claimed or completed the record: stores the products
   * matching `where` (as for productReads) as they are then, for replays (docs/security.md, "Guarantees").
   */
  snapshot: (where: string, ...params: unknown[]) => D1PreparedStatement;
};

/** `sku: ...` inside item `[2]` reads `[2].sku: ...` (docs/api.md, "Conventions"). */
export function itemPath(prefix: string, message: string) {
  if (!prefix || message.startsWith("[")) return message;
  // A message about the item as a whole ("must be a product object") has no path of its own.
  return /^[\w[\].]+: /.test(message) ? `${prefix}.${message}` : `${prefix}: ${message}`;
}

/** A product of an answer, or a reference to one, by what identifies it. */
const identity = (p: unknown) => {
  if (typeof p === "number") return p;
  const o = p as { product_id?: number; $product?: string | number };
  return o.product_id ?? o.$product;
};

export type Status = 200 | 400 | 404 | 409 | 412 | 413;

/**
 * The response of a product write: success counts the items that took effect; status 200 when one
 * did, else the status of the first failed item. `products` holds each product once, in the state
 * of its last change (a stock tool's 100 items over one product answer that product once).
 */
export function productWriteResponse<P = ProductOut>(
  parsed: { index: number; prefix: string; notices: string[] }[],
  outcomes: Map<number, ItemOutcome<P>>,
) {
  const errors: string[] = [];
  const notices: string[] = [];
  const shown = new Map<unknown, P>();
  let success = 0;
  let firstFailure: number | undefined;
  for (const item of parsed) {
    notices.push(...item.notices);
    const o = outcomes.get(item.index);
    if (!o) continue;
    if (o.ok) {
      success++;
      // A product named again keeps its first place and takes its later (final) state.
      shown.set(identity(o.product), o.product);
    } else {
      firstFailure ??= o.status;
      errors.push(...o.errors.map((e) => itemPath(item.prefix, e)));
      // A 412's product as it is now (docs/stock.md).
      if (o.current) shown.set(identity(o.current), o.current as P);
    }
  }
  const status = (success ? 200 : (firstFailure ?? 400)) as Status;
  return { status, body: { success, errors, notices, products: [...shown.values()] } };
}

/** What retries of a multi-round PUT get if it stopped between its rounds (see updateProducts). */
const STOPPED_PARTWAY = envelope(
  409,
  "a request with this Idempotency-Key stopped partway: some of its items may have been applied; read the products before sending changes again",
);

type Parsed = { index: number; prefix: string; notices: string[]; ok: boolean; errors?: string[] };

/** The answer's body as recorded: DELETE answers no products. */
const shape = (body: ReturnType<typeof productWriteResponse>["body"], products: boolean) => {
  if (products) return body;
  const { products: _, ...rest } = body;
  return rest;
};

/** Records the answer a product write is about to give, for Idempotency-Key retries. */
function recorder(db: DB, idem: Idem | undefined, parsed: Parsed[], now: number, products: boolean) {
  if (!idem) return undefined;
  const answer = (planned: Map<number, ItemOutcome<ProductRef | number>>) => {
    const all = new Map(planned);
    for (const p of parsed) if (!p.ok) all.set(p.index, { ok: false, status: 400, errors: p.errors ?? [] });
    const { status, body } = productWriteResponse(parsed, all);
    return [status, shape(body, products)] as const;
  };
  return {
    idem,
    claim: (planned) => recordStatements(db, idem, ...answer(planned), now),
    pending: () => recordStatements(db, idem, 409, STOPPED_PARTWAY, now),
    complete: (planned) => completeStatements(db, idem, ...answer(planned)),
    snapshot: (where, ...params) => productSnapshot(db, idem, where, ...params),
  } satisfies Recorder;
}

type Writer<T, P> = (
  db: DB,
  items: { index: number; data: T }[],
  now: number,
  recorder?: Recorder,
  options?: WriteOptions,
) => Promise<Written<P>>;

/**
 * POST, PUT and DELETE alike: items parsed on their own (a wrapped list, `{"0": {...}}` or
 * `{"ProductUpdate": {...}}`, read as its values), written by one service call, events handed to
 * the queue after the commit.
 */
export async function writeProducts<S extends z.ZodObject, P extends ProductOut | ProductText | number>(
  c: Context<AppEnv>,
  schema: S,
  write: Writer<z.output<S>, P>,
  { products = true }: { products?: boolean } = {},
) {
  const now = Date.now();
  // Prefer: return=minimal (RFC 7240; docs/products.md, "Prefer: return=minimal") on answers that show
  // products: the service reads back only ids, SKUs and updated_at where it can.
  const minimal = products && prefersMinimal(c.req.header("prefer"));
  const options = { minimal, keyId: c.var.credential?.keyId ?? null };
  const parsed = parseItems(schema, bodyItems(c.var.body, "product", true, fieldNames(schema)));
  const outcomes = new Map<number, ItemOutcome<P>>();
  for (const p of parsed) if (!p.ok) outcomes.set(p.index, { ok: false, status: 400, errors: p.errors });
  const valid = parsed.flatMap((p) => (p.ok ? [{ index: p.index, data: p.data }] : []));
  const rec = recorder(c.var.db, c.var.idem, parsed, now, products);
  const result = await write(c.var.db, valid, now, rec, options);
  for (const [i, o] of result.outcomes) outcomes.set(i, o);
  dispatch(c.env, waiterOf(c), result.events);
  if (result.unchanged) c.set("catalogKept", true);
  const { status, body } = productWriteResponse(parsed, outcomes);
  const texts = body.products as unknown[];
  // Products SQLite built (./present.ts), answered in the form asked for, written around.
  if (texts.length && texts.every((p) => p instanceof ProductText)) {
    const variants = (texts as ProductText[]).reduce((n, p) => n + p.variants, 0);
    c.set("logCounts", { products: body.success, variants });
    const { products: _, ...rest } = body;
    // The products' texts are carried (src/platform/d1.ts); notices may quote a backtick.
    const head = escapeBackticks(JSON.stringify({ ...rest, products: [] }));
    // In parts: joined, the megabyte of a large product would be copied once more to be encoded.
    const parts = [head.slice(0, -2)];
    for (const [i, p] of (texts as ProductText[]).entries()) parts.push(i ? "," : "", p.text);
    parts.push("]}");
    return carriedJson(c, parts, status, minimal ? MINIMAL_APPLIED : { Vary: "Prefer" });
  }
  const shown = (body.products as unknown[]).filter((p): p is ProductOut => typeof p === "object");
  c.set("logCounts", { products: body.success, variants: shown.reduce((n, p) => n + p.variants.length, 0) });
  if (!minimal) return c.json(shape(body, products), status, products ? { Vary: "Prefer" } : {});
  // Paths that read back whole products (the stock tools' path) are cut down here.
  const short = { ...body, products: shown.map(minimalProduct) };
  return c.json(short, status, MINIMAL_APPLIED);
}
