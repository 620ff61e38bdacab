import { z } from "zod";
import { products, skus, variants } from "../db/schema";
import type { PublicView } from "../keys/public";
import { sqlNames } from "../platform/columns";
import { decodeCursor, encodeCursor } from "../platform/cursor";
import { carriedSql, type DB, stmt } from "../platform/d1";
import { ApiError } from "../platform/errors";
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
import type { CarriedChunks } from "../platform/stream";
import { categoryFilter, categoryQuery } from "./categories";
import { MODELLED_BASE, MODELLED_DETAILS, productColumn, productField } from "./fields";
import { productParts } from "./modelled-json";
import { col, OPTION_NAMES, variantsInOrder } from "./present";
import { MAX_VARIANTS } from "./schema";
import { CATALOG_VERSION, catalogETag } from "./version";

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
export type ProductPage = {
  // Bare, as the modelled API's clients in the wild read it (docs/modelled-reads.md, "GET /v1/products").
  /**
   * The answer's JSON text, carried (src/platform/d1.ts), in chunks of SQLite's pieces, never
   * parsed or joined; each chunk's pieces are encoded one after another. (Joined, a page of
   * megabytes is copied once more only to be encoded; a Blob of the pieces cost more still, about
   * 1.3 ms on a page of 500 products, the seventh round in bench/README.md's history.)
   */
  chunks: CarriedChunks;
  link?: string;
  etag: string;
};

/**
 * A row of the page's statements: a product's text in pieces (see built), or (`t` null) a product
 * of the page whose text a later chunk reads, with its estimated bytes, or (id NEXT_PAGE) the mark
 * that a next page exists.
 */
type Row = { id: number; t: string | null; z?: string | null; est?: number | null } & Partial<
  Record<`r${number}`, string | null>
>;
const NEXT_PAGE = 0;
/** Above every product id: the first chunk is the whole page. */
const WHOLE_PAGE = Number.MAX_SAFE_INTEGER;
/** Variants per run: about 600 bytes each, far below what one D1 value may hold. */
const VARIANTS_PER_RUN = 256;
/**
 * A product's runs, by position: 0 to 255, 256 to 511, ... The writes number a product's variants
 * 0 to n-1, so a run holds at most 256; positions given otherwise (ties, gaps, past MAX_VARIANTS:
 * the last run takes those) change only the runs' sizes, never the order.
 */
const RUNS = Array.from({ length: MAX_VARIANTS / VARIANTS_PER_RUN }, (_, k) => k);
const LATER_RUNS = RUNS.slice(1);

/**
 * About the bytes of a product's answer (a products row `p`), from its texts' lengths and its
 * variants' number, without building it: only where chunks end depends on it. That number is its
 * last variant's position + 1, one index entry per product (the writes number positions 0 to n-1),
 * not a count of its variants.
 */
function estimate(withDetails: boolean) {
  const lengths = (cols: string[]) => cols.map((c) => `coalesce(length(p.${c}), 0)`).join(" + ");
  const base = lengths(textColumns(MODELLED_BASE));
  if (!withDetails) return `(350 + ${base})`;
  const details = lengths(textColumns(MODELLED_DETAILS));
  // A variant is about 420 bytes, and its options' names twice (each value is {"name", "val"}).
  const n = `coalesce((SELECT max(s.${V.position}) + 1 FROM ${V.$} AS s WHERE s.${V.productId} = p.${P.id}), 0)`;
  return `(600 + ${base} + ${details} + length(p.${P.images}) + ${n} * (420 + 2 * length(p.${P.optionNames})))`;
}

/** The column names of the plain text fields (not JSON) among `keys` (src/products/fields.ts). */
function textColumns(keys: readonly string[]) {
  return keys.flatMap((k) => {
    const f = productField(k);
    return f?.kind.text && !f.kind.json ? [productColumn(f).name] : [];
  });
}

/** Ends a subquery that SQLite must run as it stands (an OFFSET is never flattened into its outer query). */
const ONCE = " LIMIT -1 OFFSET 0";

/** Between a product's head and its variants. */
const VARIANTS_OPEN = ',"variants":[';

/** The text columns of a built row, in the order they are joined. */
const pieces = (withDetails: boolean) => (withDetails ? ["t", ...LATER_RUNS.map((k) => `r${k}`), "z"] : ["t"]);

/**
 * The products of the CTE `page` (rows of products with OPTION_NAMES, in id order) that `where`
 * keeps, each a row of texts (`wrap` applied to each) and a null `est`: `t`, the product's text, whole or (with
 * details, for a product of more than one run) up to the end of its first run; r1 to r7, its later
 * runs, each with the comma before it; `z`, what follows the last. Each product's variants are
 * joined to it through the index on (product_id, position) and grouped in one pass (present.ts,
 * variantsInOrder): its count, its stock and its runs, a run being the variants of 256 positions,
 * which the writes number 0 to n-1. (A run of 256 by a window over a product's variants read them
 * three more times, and counting and summing them twice more.)
 */
function built(withDetails: boolean, view: PublicView | undefined, where: string, wrap: (sql: string) => string) {
  const x = productParts(withDetails, view);
  const v = (c: { name: string }) => col("v", c);
  const from = `FROM page AS p LEFT JOIN ${variantsInOrder("v")} ON ${v(variants.productId)} = p.${P.id} ${where}
    GROUP BY p.${P.id}`;
  if (!x.variant) return `SELECT p.${P.id} AS id, ${wrap(x.head)} AS t, NULL AS est ${from}`;
  const position = v(variants.position);
  const range = (k: number) =>
    k === 0
      ? `${position} < ${VARIANTS_PER_RUN}`
      : k === RUNS.length - 1
        ? `${position} >= ${k * VARIANTS_PER_RUN}`
        : `${position} >= ${k * VARIANTS_PER_RUN} AND ${position} < ${(k + 1) * VARIANTS_PER_RUN}`;
  const runs = RUNS.map(
    (k) => `group_concat(${x.variant}, ',') FILTER (WHERE ${x.variantFilter} AND ${range(k)}) AS r${k}`,
  ).join(",\n    ");
  // `h` and `tl` are each read twice (substr and length): the OFFSET keeps SQLite from flattening
  // their subquery into the outer one, where each mention would build the object again.
  const grouped = `SELECT p.${P.id} AS id, ${x.head} AS h, ${x.tail} AS tl, ${runs} ${from}${ONCE}`;
  const none = (ks: number[]) => ks.map((k) => `r${k} IS NULL`).join(" AND ");
  const alone = none(LATER_RUNS);
  const end = `'],' || substr(tl, 2)`;
  const start = `substr(h, 1, length(h) - 1) || '${VARIANTS_OPEN}' || coalesce(r0, '')`;
  const later = LATER_RUNS.map(
    (k) => `${wrap(`iif(r${k} IS NULL, NULL, iif(${none(RUNS.slice(0, k))}, '', ',') || r${k})`)} AS r${k}`,
  );
  return `SELECT id, ${wrap(`${start} || iif(${alone}, ${end}, '')`)} AS t, ${later.join(", ")},
      ${wrap(`iif(${alone}, NULL, ${end})`)} AS z, NULL AS est
    FROM (${grouped})`;
}

/**
 * The page's first chunk, in one statement: the texts of its products up to PRODUCT_CHUNK_BYTES (by
 * estimate; the first product always), then a row with a null text for each of the others, then
 * the NEXT_PAGE row if a next page exists. Which products are on the page is fixed here, in one
 * snapshot with the batch's other statement. The first chunk ends at a key (`cut`): the whole page
 * when its estimates add up to a chunk, as they do but for pages of megabytes; only then are
 * running sums taken.
 */
function pageSql(withDetails: boolean, view: PublicView | undefined, where: string[], lim: string, off: string) {
  const filter = where.length ? `WHERE ${where.join(" AND ")}` : "";
  const running = `SELECT p.${P.id} AS id, row_number() OVER w AS n, sum(p.est) OVER w AS upto
    FROM page AS p WINDOW w AS (ORDER BY p.${P.id} ROWS UNBOUNDED PRECEDING)`;
  // Past the page's last product: a next page exists when the page is full and one more matches.
  const after = [...where, `p.${P.id} > (SELECT last FROM totals)`].join(" AND ");
  const nulls = pieces(withDetails)
    .map((c) => `NULL AS ${c}`)
    .join(", ");
  // `+ 0`: a LIMIT that is a bare bound parameter marks the statement as planned for its value,
  // so SQLite prepares this statement again at every request (about 4 ms of the page's SQL).
  return `WITH page AS MATERIALIZED (SELECT p.*, ${OPTION_NAMES}, ${estimate(withDetails)} AS est
        FROM ${P.$} AS p ${filter} ORDER BY p.${P.id} LIMIT ${lim} + 0 OFFSET ${off}),
      totals AS MATERIALIZED (SELECT count(*) AS n, sum(est) AS bytes, max(${P.id}) AS last FROM page),
      cut AS MATERIALIZED (SELECT iif((SELECT bytes FROM totals) <= ${PRODUCT_CHUNK_BYTES}, ${WHOLE_PAGE},
        (SELECT max(id) FROM (${running}) WHERE n = 1 OR upto <= ${PRODUCT_CHUNK_BYTES})) AS id)
    ${built(withDetails, view, `WHERE p.${P.id} <= (SELECT id FROM cut)`, carriedSql)}
    UNION ALL SELECT p.${P.id}, ${nulls}, p.est FROM cut CROSS JOIN page AS p
      WHERE cut.id < ${WHOLE_PAGE} AND p.${P.id} > cut.id
    UNION ALL SELECT ${NEXT_PAGE}, ${nulls}, NULL FROM totals
      WHERE n = ${lim} AND EXISTS (SELECT 1 FROM ${P.$} AS p WHERE ${after})`;
}

/** A later chunk: the texts of the products whose ids ?1 lists (a JSON array), as the page's first. */
function chunkSql(withDetails: boolean, view: PublicView | undefined) {
  // A storefront never sees a product hidden since the first read.
  const shown = view ? `WHERE p.${P.visible} = 1` : "";
  return `WITH page AS MATERIALIZED (SELECT p.*, ${OPTION_NAMES}
        FROM json_each(?1) AS w JOIN ${P.$} AS p ON p.${P.id} = w.value ${shown} ORDER BY p.${P.id})
    ${built(withDetails, view, "", carriedSql)}`;
}

/** The ids of `rows` in runs of about PRODUCT_CHUNK_BYTES (at least one product each), in page order. */
function chunkIds(rows: Row[]): number[][] {
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

/** The texts of built rows with commas between them, after the products before them on the page. */
function joined(rows: Row[], first: boolean, last: boolean): string[] {
  const json = first ? ["["] : [];
  for (let i = 0; i < rows.length; i++) {
    if (i || !first) json.push(",");
    json.push(...textOf(rows[i]));
  }
  if (last) json.push("]");
  return json;
}

/**
 * SQL of the products whose ids the subquery `ids` gives, each as `?product_id=&include_details=true`
 * answers it, for those whose answer is at most `maxBytes`; a larger one yields its id with a null
 * text (docs/webhooks.md, "Payloads"). Read with productTexts.
 */
export function productTextsSql(ids: string, maxBytes: number) {
  const columns = pieces(true);
  const total = columns.map((c) => `coalesce(length(CAST(${c} AS BLOB)), 0)`).join(" + ");
  const kept = columns.map((c) => `iif(total <= ${maxBytes}, ${c}, NULL) AS ${c}`).join(", ");
  return `WITH page AS MATERIALIZED (SELECT p.*, ${OPTION_NAMES} FROM ${P.$} AS p WHERE p.${P.id} IN (${ids}) ORDER BY p.${P.id})
    SELECT id, ${kept} FROM (SELECT *, ${total} AS total FROM (${built(true, undefined, "", (t) => t)}${ONCE}))`;
}

/** The rows of productTextsSql: each product's JSON text, or null where it was larger than the bound. */
export function productTexts(rows: Record<string, unknown>[]): Map<number, string | null> {
  const out = new Map<number, string | null>();
  for (const r of rows as Row[]) out.set(r.id, r.t === null ? null : textOf(r).join(""));
  return out;
}

/** A built row's texts, in order. */
function textOf(r: Row): string[] {
  const json = [r.t as string];
  for (const k of LATER_RUNS) {
    const run = r[`r${k}`];
    if (run != null) json.push(run);
  }
  if (r.z != null) json.push(r.z);
  return json;
}

/**
 * Rows in answer order, by id. Sorted here, not by SQLite: an ORDER BY sorted megabytes of texts
 * (about 1 ms of SQL on the products page of 500), the Worker a few hundred small objects mostly in
 * order already.
 */
const byId = (rows: Row[]) => rows.sort((a, b) => a.id - b.id);

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
export async function listProducts(db: DB, q: ProductListQuery, url: string, view?: PublicView): Promise<ProductPage> {
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
  const withDetails = q.include_details === true;
  const [page, catalog] = await db.$client.batch<Record<string, unknown>>([
    stmt(db, pageSql(withDetails, view, where, lim, off), ...params.values),
    // The catalog version the ETag is made of: the same snapshot.
    stmt(db, CATALOG_VERSION),
  ]);
  const etag = catalogETag(catalog.results[0]?.version, url, view);
  const rows = byId(page.results as Row[]);
  const more = rows[0]?.id === NEXT_PAGE;
  if (more) rows.shift();
  const later = rows.filter((r) => r.t === null);
  const products = later.length ? rows.filter((r) => r.t !== null) : rows;

  if (lookup) {
    if (!products.length) {
      const which = q.product_id !== undefined ? `product ${q.product_id}` : `product with sku ${q.sku}`;
      throw new ApiError(404, `${which} not found`);
    }
    return { chunks: { first: textOf(products[0]) }, etag };
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
    const got = byId(read.results as Row[]);
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
