import { z } from "zod";
import type { DB } from "../db/client";
import { catalogVersion, products, skus, variants } from "../db/schema";
import type { PublicView } from "../keys/public";
import { sqlNames } from "../platform/columns";
import { decodeCursor, encodeCursor } from "../platform/cursor";
import { stmt } from "../platform/d1";
import { ApiError } from "../platform/errors";
import { etagOf } from "../platform/hash";
import {
  boolText,
  ignored,
  nextLink,
  Params,
  parseQuery,
  searchText,
  strictQuery,
  text,
  whole,
} from "../platform/query";
import { carriedSql } from "../platform/quotes";
import type { CarriedChunks } from "../platform/stream";
import { categoryFilter, categoryQuery, urlSql } from "./categories";
import { MODELLED_BASE, MODELLED_DETAILS, productColumn, productField } from "./fields";
import { col } from "./json-sql";
import { productParts, VARIANT_TOTALS, variantTotals } from "./modelled-json";

// GET /v1/products and GET /v1/products/count in the modelled dialect (docs/modelled-reads.md, "Modelled reads").

/** Page size bounds: the modelled API's default and maximum. */
export const PRODUCT_LIMIT_DEFAULT = 100;
export const PRODUCT_LIMIT_MAX = 500;
/**
 * About how many bytes of products one D1 round trip brings (src/platform/stream.ts): a page up to
 * this is answered from one round trip; a larger one is streamed in chunks of about this size (a
 * product larger than it is a chunk of its own), whatever its total. Estimated from the products'
 * text lengths and variant counts (estimate), not built: only where chunks end depends on it.
 * Twice the orders' chunk, so every page of up to 2 MiB stays one round trip, as before streaming
 * (a further round trip costs about 0.1 to 0.3 ms of CPU in the bench, bench/README.md).
 */
export const PRODUCT_CHUNK_BYTES = 2 * 1024 * 1024;
const MAX_OFFSET = 100_000_000;

// The tables and columns of the statements below, through the schema (src/platform/columns.ts).
const P = sqlNames(products);
const V = sqlNames(variants);
const K = sqlNames(skus);
const C = sqlNames(catalogVersion);

const PARAMS = ["product_id", "sku", "search", "category", "include_details", "limit", "offset", "cursor", "apps_load"];

const listQuery = z
  .object({
    product_id: whole(1, Number.MAX_SAFE_INTEGER, "must be a positive whole number (an id)").optional(),
    sku: text(255).optional(),
    search: text(255).optional(),
    category: categoryQuery.optional(),
    include_details: boolText.optional(),
    limit: whole(1, PRODUCT_LIMIT_MAX).optional(),
    offset: whole(0, MAX_OFFSET).optional(),
    cursor: text(64).optional(),
    apps_load: ignored.optional(),
  })
  .superRefine((q, ctx) => {
    const lookup = q.product_id !== undefined || q.sku !== undefined;
    if (q.product_id !== undefined && q.sku !== undefined) {
      ctx.addIssue({ code: "custom", path: ["sku"], message: "give product_id or sku, not both" });
    }
    if (lookup && q.search !== undefined) {
      ctx.addIssue({ code: "custom", path: ["search"], message: "cannot be combined with product_id or sku" });
    }
    if (q.cursor !== undefined && (lookup || q.offset !== undefined)) {
      ctx.addIssue({ code: "custom", path: ["cursor"], message: "cannot be combined with offset, product_id or sku" });
    }
  });
/** visibleOnly: only visible products (a publishable key's catalog, docs/keys.md); never from the URL. */
export type ProductListQuery = z.output<typeof listQuery> & { visibleOnly?: boolean };

export const parseProductQuery = (url: string) => parseQuery(listQuery, strictQuery(url, PARAMS));

/** What GET /v1/products answers: the JSON text of the body, and the Link to the next page if any. */
export type ProductListAnswer = {
  // Bare, as the modelled API's clients in the wild read it (docs/modelled-reads.md, "GET /v1/products").
  /**
   * The answer's JSON text, carried (src/platform/quotes.ts), in chunks of SQLite's pieces, never
   * parsed or joined; each chunk's pieces are encoded one after another. (Joined, a page of
   * megabytes is copied once more only to be encoded; a Blob of the pieces cost more still, about
   * 1.3 ms on a page of 500 products, the seventh round in bench/README.md's history.)
   */
  chunks: CarriedChunks;
  link?: string;
  etag: string;
};

/** The catalog's version (a trigger moves it with every product or variant change, drizzle/0005_keys.sql). */
export const CATALOG_VERSION = `SELECT ${C.version} FROM ${C.$} WHERE ${C.id} = 1`;

/**
 * The ETag of a catalog answer: the catalog version (which every product, variant and stock change
 * moves in its own batch), the URL and what the caller may see. Hashing the answer itself would
 * cost CPU per byte of a page of megabytes (docs/keys.md, "Edge cache and ETag").
 */
export function catalogETag(version: unknown, url: string, view: PublicView | undefined): string {
  const u = new URL(url);
  const text = `${version}|${u.pathname}${u.search}|${view ? `${view.stock}${view.datafields}` : "all"}`;
  return etagOf(text);
}

/**
 * A part of a product's JSON text (see productParts): the whole product (one of up to
 * VARIANTS_PER_PART variants), or a larger one's head, a run of its variants, or its tail; or
 * (LATER) a product of the page whose text a later chunk reads, with its estimated bytes.
 */
type PagePart = { id: number; part: number; t: string; est?: number };
const LATER = -3;
const WHOLE = -2;
const HEAD = -1;
const TAIL = 1e9;
/** Variants per part: about 600 bytes each, far below what one D1 row may hold. */
const VARIANTS_PER_PART = 256;

/**
 * About the bytes of a product's answer (a row `p` of the page, with vc), from its texts' lengths
 * and its variant count, without building it: only where chunks end depends on it.
 */
function estimate(withDetails: boolean) {
  const lengths = (cols: string[]) => cols.map((c) => `coalesce(length(p.${c}), 0)`).join(" + ");
  const base = lengths(textColumns(MODELLED_BASE));
  if (!withDetails) return `(350 + ${base})`;
  const details = lengths(textColumns(MODELLED_DETAILS));
  // A variant is about 420 bytes, and its options' names twice (each value is {"name", "val"}).
  return `(600 + ${base} + ${details} + length(p.${products.images.name}) + p.vc * (420 + 2 * length(p.${products.optionNames.name})))`;
}

/** The column names of the plain text fields (not JSON) among `keys` (src/products/fields.ts). */
function textColumns(keys: readonly string[]) {
  return keys.flatMap((k) => {
    const f = productField(k);
    return f?.kind.text && !f.kind.json ? [productColumn(f).name] : [];
  });
}

/**
 * The page's first chunk, in one statement: the parts of its products up to PRODUCT_CHUNK_BYTES
 * (by estimate; the first product always), in answer order, then a LATER row for each of the
 * others. Which products are on the page is fixed here, in one snapshot with the batch's others.
 * The first chunk ends at a key (`cut`, the last id in it): the whole page when its estimates add
 * up to a chunk, as they do but for pages of megabytes; only then are running sums taken.
 */
function pageSql(withDetails: boolean, view: PublicView | undefined, filter: string, lim: string, off: string) {
  const totals = variantTotals(view !== undefined);
  // `+ 0`: a LIMIT that is a bare bound parameter marks the statement as planned for its value,
  // so SQLite prepares this statement again at every request (about 4 ms of the page's SQL).
  const page = `SELECT p.*, ${totals} FROM ${P.$} AS p ${filter} ORDER BY p.${P.id} LIMIT ${lim} + 0 OFFSET ${off}`;
  const running = `SELECT p.${P.id} AS id, row_number() OVER w AS n, sum(p.est) OVER w AS upto
    FROM sized AS p WINDOW w AS (ORDER BY p.${P.id} ROWS UNBOUNDED PRECEDING)`;
  return `WITH sized AS MATERIALIZED (SELECT p.*, ${estimate(withDetails)} AS est FROM (${page}) AS p),
      cut AS MATERIALIZED (SELECT iif((SELECT sum(est) FROM sized) <= ${PRODUCT_CHUNK_BYTES}, (SELECT max(${P.id}) FROM sized),
        (SELECT max(id) FROM (${running}) WHERE n = 1 OR upto <= ${PRODUCT_CHUNK_BYTES})) AS id),
      page AS MATERIALIZED (SELECT * FROM sized WHERE ${P.id} <= (SELECT id FROM cut)),
      parts AS (SELECT id, part, ${carriedSql("t")} AS t FROM (${partsSql(withDetails, view)}))
    SELECT id, part, t, 0 AS est FROM parts
    UNION ALL SELECT ${P.id}, ${LATER}, NULL, est FROM sized WHERE ${P.id} > (SELECT id FROM cut)`;
}

/** A later chunk: the parts of the products whose ids ?1 lists (a JSON array), as the page's first. */
function chunkSql(withDetails: boolean, view: PublicView | undefined) {
  const totals = variantTotals(view !== undefined);
  // A storefront never sees a product hidden since the first read.
  const shown = view ? `WHERE p.${P.visible} = 1` : "";
  return `WITH page AS MATERIALIZED (
        SELECT p.*, ${totals} FROM json_each(?1) AS w JOIN ${P.$} AS p ON p.${P.id} = w.value ${shown}),
      parts AS (SELECT id, part, ${carriedSql("t")} AS t FROM (${partsSql(withDetails, view)}))
    SELECT id, part, t FROM parts`;
}

/** The ids of `rows` in runs of about PRODUCT_CHUNK_BYTES (at least one product each), in page order. */
function chunkIds(rows: PagePart[]): number[][] {
  const out: number[][] = [];
  let bytes = 0;
  for (const r of rows) {
    const est = r.est ?? 0;
    if (!out.length || bytes + est > PRODUCT_CHUNK_BYTES) {
      out.push([]);
      bytes = 0;
    }
    out[out.length - 1].push(r.id);
    bytes += est;
  }
  return out;
}

/** The products' texts with commas between them, after the products before them on the page. */
function joined(products: { json: string[] }[], first: boolean, last: boolean): string[] {
  const json = first ? ["["] : [];
  for (let i = 0; i < products.length; i++) {
    if (i || !first) json.push(",");
    for (const t of products[i].json) json.push(t);
  }
  if (last) json.push("]");
  return json;
}

/** Ends a subquery that SQLite must run as it stands (an OFFSET is never flattened into its outer query). */
const ONCE = " LIMIT -1 OFFSET 0";

/** Between a product's head and its variants. */
const VARIANTS_OPEN = ',"variants":[';

/**
 * The parts (see PagePart) of every product of the CTE `page`: whole JSON objects (productParts),
 * a large product's head and tail cut to be joined around its runs of variants. Variants are read
 * in answer order from the index on (product_id, position) (id breaks ties: every index entry ends
 * with the rowid) and concatenated as they come, without a sort: a run is the VARIANTS_PER_PART
 * from its first key on. (Numbering all of a product's variant texts by a window and joining them
 * by their numbers sorted the texts three times: about 5 ms of SQL on the products page of 500.)
 */
function partsSql(withDetails: boolean, view: PublicView | undefined) {
  const x = productParts(withDetails, urlSql(), view);
  if (!x.variant) return `SELECT p.${P.id} AS id, ${WHOLE} AS part, ${x.head} AS t FROM page AS p`;
  const big = `p.vc > ${VARIANTS_PER_PART}`;
  const head = "substr(h, 1, length(h) - 1)";
  const tail = "',' || substr(tl, 2)";
  const v = (c: { name: string }) => col("v", c);
  const inOrder = `ORDER BY ${v(variants.position)}, ${v(variants.id)}`;
  const run = (from: string, limit: string) => `(SELECT group_concat(j, ',') FROM (
      SELECT ${x.variant} AS j FROM ${V.$} AS v WHERE ${v(variants.productId)} = p.${P.id} AND ${x.variantFilter}${from}
      ${inOrder}${limit}))`;
  // Where each run of a large product starts: every VARIANTS_PER_PART-th of its variants by key.
  const starts = `SELECT id, (n - 1) / ${VARIANTS_PER_PART} AS part, pos, vid FROM (
      SELECT p.${P.id} AS id, ${v(variants.position)} AS pos, ${v(variants.id)} AS vid, row_number() OVER (PARTITION BY p.${P.id} ${inOrder}) AS n
      FROM page AS p JOIN ${V.$} AS v ON ${v(variants.productId)} = p.${P.id} AND ${x.variantFilter} WHERE ${big})
    WHERE (n - 1) % ${VARIANTS_PER_PART} = 0`;
  // A product of up to VARIANTS_PER_PART variants is one row: fewer rows for D1's binding to build.
  // `h` and `tl` are each read twice (substr and length): the OFFSET keeps SQLite from flattening
  // their subquery into the outer one, where each mention would build the object again (about
  // 1.5 ms of SQL on the products page of 500).
  return `SELECT id, ${WHOLE} AS part, ${head} || '${VARIANTS_OPEN}' || coalesce(vs, '') || ']' || ${tail} AS t FROM (
         SELECT p.${P.id} AS id, ${x.head} AS h, ${x.tail} AS tl, ${run("", "")} AS vs FROM page AS p WHERE NOT ${big}${ONCE})
       UNION ALL
       SELECT id, ${HEAD}, ${head} FROM (SELECT p.${P.id} AS id, ${x.head} AS h FROM page AS p WHERE ${big}${ONCE})
       UNION ALL
       SELECT s.id, s.part, ${run(
         ` AND (${v(variants.position)}, ${v(variants.id)}) >= (s.pos, s.vid)`,
         ` LIMIT ${VARIANTS_PER_PART}`,
       )} FROM (${starts}) AS s JOIN page AS p ON p.${P.id} = s.id
       UNION ALL
       SELECT id, ${TAIL}, ${tail} FROM (SELECT p.${P.id} AS id, ${x.tail} AS tl FROM page AS p WHERE ${big}${ONCE})`;
}

/**
 * SQL of the products whose ids the subquery `ids` gives, each as `?product_id=&include_details=true`
 * answers it, for those whose answer is at most `maxBytes`; a larger one yields its head part with
 * a null text (docs/webhooks.md, "Payloads"). Read with productTexts.
 */
export function productTextsSql(ids: string, maxBytes: number) {
  const page = `SELECT p.*, ${VARIANT_TOTALS} FROM ${P.$} AS p WHERE p.${P.id} IN (${ids})`;
  return `WITH page AS MATERIALIZED (${page}), parts AS (${partsSql(true, undefined)})
    SELECT id, part, iif(total <= ${maxBytes}, t, NULL) AS t, 0 AS upto FROM (
      SELECT id, part, t, sum(length(CAST(t AS BLOB)) + 1) OVER (PARTITION BY id) AS total FROM parts)
    WHERE total <= ${maxBytes} OR part <= ${HEAD} ORDER BY id, part`;
}

/** The rows of productTextsSql: each product's JSON text, or null where it was larger than the bound. */
export function productTexts(rows: Record<string, unknown>[]): Map<number, string | null> {
  const out = new Map<number, string | null>();
  for (const r of rows as PagePart[]) if (r.t === null) out.set(r.id, null);
  const arrived = (rows as PagePart[]).filter((r) => r.t !== null);
  for (const p of assemble(arrived)) out.set(p.id, p.json.join(""));
  return out;
}

/**
 * The rows of pageSql or chunkSql in answer order, by id and part. Sorted here, not by SQLite: an
 * ORDER BY sorted megabytes of texts (about 1 ms of SQL on the products page of 500), the Worker
 * a few hundred small objects mostly in order already.
 */
const byIdAndPart = (rows: PagePart[]) => rows.sort((a, b) => a.id - b.id || a.part - b.part);

/** The products whose parts all arrived, as JSON texts. */
function assemble(parts: PagePart[]) {
  const out: { id: number; json: string[] }[] = [];
  let i = 0;
  while (i < parts.length) {
    const { id, part, t: head } = parts[i++];
    if (part === WHOLE) {
      out.push({ id, json: [head] });
      continue;
    }
    const json = [head, VARIANTS_OPEN];
    for (let first = true; i < parts.length && parts[i].id === id && parts[i].part !== TAIL; first = false) {
      if (!first) json.push(",");
      json.push(parts[i++].t);
    }
    if (i >= parts.length || parts[i].id !== id) break; // its tail did not arrive
    json.push("]", parts[i++].t);
    out.push({ id, json });
  }
  return out;
}

/**
 * The page: every product of it, whatever its size (docs/modelled-reads.md, "Paging"). SQLite
 * builds each product's modelled JSON text (variants included with include_details,
 * src/products/modelled-json.ts) and the Worker passes the texts on without parsing them. The
 * first D1 round trip reads, in one batch (one snapshot), which products are on the page and the
 * texts of those in its first PRODUCT_CHUNK_BYTES; when the page is larger, each further chunk is
 * read by its products' ids when the answer's reader takes the one before (src/platform/stream.ts).
 * Sorted by id ascending: offset paging then stays stable while products are added (new ones come
 * last), which is what a client paging "until a short page" relies on.
 */
export async function listProducts(
  db: DB,
  q: ProductListQuery,
  url: string,
  view?: PublicView,
): Promise<ProductListAnswer> {
  const params = new Params();
  const where: string[] = [];
  if (q.product_id !== undefined) where.push(`p.${P.id} = ${params.add(q.product_id)}`);
  // A storefront's lookups and searches never find a product by a hidden variant's SKU.
  const shownVariant = q.visibleOnly ? ` AND sv.${V.visible} = 1` : "";
  if (q.sku !== undefined) {
    where.push(`p.${P.id} = (SELECT k.${K.productId} FROM ${K.$} AS k WHERE k.${K.sku} = ${params.add(q.sku)}
      AND (k.${K.variantId} IS NULL
        OR EXISTS (SELECT 1 FROM ${V.$} AS sv WHERE sv.${V.id} = k.${K.variantId}${shownVariant})))`);
  }
  if (q.search !== undefined) {
    const s = params.add(searchText(q.search));
    const has = (col: string) => `instr(lower(${col}), ${s}) > 0`;
    where.push(
      `(${has(`p.${P.title}`)} OR ${has(`p.${P.sku}`)} OR ${has(`p.${P.gtin}`)}
        OR EXISTS (SELECT 1 FROM ${V.$} AS sv WHERE sv.${V.productId} = p.${P.id} AND ${has(`sv.${V.sku}`)}${shownVariant}))`,
    );
  }
  if (q.category !== undefined) where.push(categoryFilter(q.category, (v) => params.add(v)));
  if (q.cursor !== undefined) where.push(`p.${P.id} > ${params.add(decodeCursor(q.cursor))}`);
  if (q.visibleOnly) where.push(`p.${P.visible} = 1`);
  const lookup = q.product_id !== undefined || q.sku !== undefined;
  // A lookup answers its one product: the SDK sends limit=1 with it, and neither limit nor offset
  // may hide the product it asked for.
  const limit = lookup ? 1 : (q.limit ?? PRODUCT_LIMIT_DEFAULT);
  const offset = lookup ? 0 : (q.offset ?? 0);
  const lim = params.add(limit);
  const off = params.add(offset);
  const filter = where.length ? `WHERE ${where.join(" AND ")}` : "";
  const withDetails = q.include_details === true;
  const [page, next] = await db.$client.batch<Record<string, unknown>>([
    stmt(db, pageSql(withDetails, view, filter, lim, off), ...params.values),
    // Whether a next page exists, and the catalog version the ETag is made of: the same snapshot.
    stmt(
      db,
      `SELECT EXISTS (SELECT 1 FROM ${P.$} AS p ${filter} LIMIT 1 OFFSET ${off} + ${lim}) AS more,
         (${CATALOG_VERSION}) AS version`,
      ...params.values,
    ),
  ]);
  const etag = catalogETag(next.results[0]?.version, url, view);
  const rows = byIdAndPart(page.results as PagePart[]);
  const more = next.results[0]?.more === 1;
  const later = rows.filter((r) => r.part === LATER);
  const products = assemble(later.length ? rows.filter((r) => r.part !== LATER) : rows);

  if (lookup) {
    if (!products.length) {
      const which = q.product_id !== undefined ? `product ${q.product_id}` : `product with sku ${q.sku}`;
      throw new ApiError(404, `${which} not found`);
    }
    return { chunks: { first: products[0].json }, etag };
  }
  let link: string | undefined;
  if (more) {
    // Offset paging continues by offset; any other page continues by cursor (our extension).
    link =
      q.offset !== undefined
        ? nextLink(url, { offset: String(offset + limit) })
        : nextLink(url, { cursor: encodeCursor(rows[rows.length - 1].id) });
  }
  if (!later.length) return { chunks: { first: joined(products, true, true) }, link, etag };
  // The rest by id, in the page's order: the page is the one the first round trip saw.
  const rest = chunkIds(later);
  const sql = chunkSql(withDetails, view);
  let n = 0;
  const following = async () => {
    if (n >= rest.length) return undefined;
    const ids = rest[n++];
    const read = await stmt(db, sql, JSON.stringify(ids)).all<Record<string, unknown>>();
    const got = assemble(byIdAndPart(read.results as PagePart[]));
    // Deleted (or hidden from a storefront) since the first read: the answer breaks off rather
    // than end as a page shorter than its limit, which a client would take for the last.
    if (got.length !== ids.length) throw new Error("a product of this page was removed while it was read; ask again");
    return joined(got, false, n === rest.length);
  };
  return { chunks: { first: joined(products, true, false), next: following }, link, etag };
}

/** GET /v1/products/count: how many products the store has, as a string (the modelled type). */
export async function countProducts(db: DB, url: string) {
  strictQuery(url, []);
  const row = await stmt(db, `SELECT count(*) AS n FROM ${P.$}`).first<{ n: number }>();
  return { count: String(row?.n ?? 0) };
}
