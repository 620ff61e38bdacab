import { z } from "zod";
import { orderLines, orders } from "../db/schema";
import { sqlNames } from "../platform/columns";
import { decodeKeyCursor, encodeKeyCursor } from "../platform/cursor";
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
  unixSeconds,
  whole,
} from "../platform/query";
import type { CarriedChunks } from "../platform/stream";
import { estimateSql, orderJsonSql, STATUS_CODES, type StatusName } from "./modelled-json";

// GET /v1/orders in the modelled dialect (docs/modelled-reads.md, "Modelled reads"), with our own
// filters and total count beside it (docs/orders.md, "Finding orders").

/** Page size bounds: the modelled API's default, and its maximum of 500 (docs/modelled-reads.md). */
export const ORDER_LIMIT_DEFAULT = 100;
export const ORDER_LIMIT_MAX = 500;
/**
 * About how many bytes of orders one D1 round trip brings (src/platform/stream.ts): a larger page
 * is streamed in chunks of about this size, estimated from the text lengths, not built.
 */
export const ORDER_CHUNK_BYTES = 1024 * 1024;
const MAX_OFFSET = 100_000_000;

const DAY_MS = 86_400_000;
/** An ISO 8601 date or a time with its offset, as epoch ms: a day's first millisecond, or with `end` its last. */
const isoTime = (end: boolean) =>
  text(40).transform((v, ctx) => {
    const day = /^\d{4}-\d{2}-\d{2}$/.test(v) ? Date.parse(`${v}T00:00:00Z`) : Number.NaN;
    if (!Number.isNaN(day)) return end ? day + DAY_MS - 1 : day;
    const t = /^\d{4}-\d{2}-\d{2}T[\d:.]+(Z|[+-]\d{2}:\d{2})$/i.test(v) ? Date.parse(v) : Number.NaN;
    if (!Number.isNaN(t)) return t;
    ctx.addIssue({
      code: "custom",
      message: "must be an ISO 8601 date (2026-11-26) or a time with its offset (2026-11-26T00:00:00+01:00)",
      input: v,
    });
    return z.NEVER;
  });

const BY_CODE: Record<string, StatusName> = Object.fromEntries(
  Object.entries(STATUS_CODES).map(([name, code]) => [code, name as StatusName]),
);

/** A status as a word (unpaid, paid, done, cancelled) or a code (-1, 1, 2, 3). */
const statusParam = text(16).transform((v, ctx) => {
  const word = v.toLowerCase();
  if (Object.hasOwn(STATUS_CODES, word)) return word as StatusName;
  if (Object.hasOwn(BY_CODE, v)) return BY_CODE[v];
  ctx.addIssue({ code: "custom", message: "must be unpaid, paid, done, cancelled, -1, 1, 2 or 3", input: v });
  return z.NEVER;
});

const listQuery = z
  .object({
    order_id: whole(1, Number.MAX_SAFE_INTEGER, "must be a positive whole number (an id)").optional(),
    search: text(255).optional(),
    offset: whole(0, MAX_OFFSET).optional(),
    limit: whole(1, ORDER_LIMIT_MAX).optional(),
    sort_order: z.enum(["asc", "desc"], { error: "must be asc or desc" }).optional(),
    order_by: z.enum(["price", "date", "order_id"], { error: "must be price, date or order_id" }).optional(),
    include_details: boolText.optional(),
    from_date_paid: unixSeconds.optional(),
    to_date_paid: unixSeconds.optional(),
    from_status_date: unixSeconds.optional(),
    status: statusParam.optional(),
    apps_load: ignored.optional(),
    cursor: text(80).optional(),
    created_from: isoTime(false).optional(),
    created_to: isoTime(true).optional(),
    paid: boolText.optional(),
    count: boolText.optional(),
  })
  .superRefine((q, ctx) => {
    if (q.cursor !== undefined && (q.offset !== undefined || q.order_id !== undefined)) {
      ctx.addIssue({ code: "custom", path: ["cursor"], message: "cannot be combined with offset or order_id" });
    }
  });
export type OrderListQuery = z.output<typeof listQuery>;

export const parseOrderQuery = (url: string) => parseQuery(listQuery, strictQuery(url, Object.keys(listQuery.shape)));

const O = sqlNames(orders);
const L = sqlNames(orderLines);

const SORT_COLUMN = { price: O.total, date: O.createdAt, order_id: O.id };

// Customer name as the order gave it (billing or shipping), for search.
const NAME = (col: string) => `trim(coalesce(${col}->>'firstname', '') || ' ' || coalesce(${col}->>'lastname', ''))`;

/** A page's order as the first round trip gives it: its text only if it is in the first chunk. */
type PageRow = { id: number; k: number; est: number; j: string | null };

/** The ids of `rows` in runs of about ORDER_CHUNK_BYTES (at least one order each), in page order. */
function chunkIds(rows: PageRow[]): number[][] {
  const out: number[][] = [];
  let bytes = 0;
  for (const r of rows) {
    if (!out.length || bytes + r.est > ORDER_CHUNK_BYTES) {
      out.push([]);
      bytes = 0;
    }
    out[out.length - 1].push(r.id);
    bytes += r.est;
  }
  return out;
}

/** One chunk's order texts as a part of the page's array: opened if first, closed if last, commas between. */
function joined(texts: readonly string[], first: boolean, last: boolean): string[] {
  const json = first ? ["["] : [];
  for (let i = 0; i < texts.length; i++) {
    if (i || !first) json.push(",");
    json.push(texts[i]);
  }
  if (last) json.push("]");
  return json;
}

/**
 * The page, whatever its size (docs/modelled-reads.md, "Paging"): the first round trip reads in
 * one snapshot which orders are on it and the texts of its first ORDER_CHUNK_BYTES; each further
 * chunk is read by id when the reader takes the one before. Newest order id first by default.
 */
export async function listOrders(
  db: DB,
  q: OrderListQuery,
  url: string,
): Promise<{ chunks: CarriedChunks; link?: string; total?: number }> {
  const params = new Params();
  const where: string[] = [];
  // Our own filters (docs/orders.md, "Finding orders"), then the modelled API's.
  if (q.created_from !== undefined) where.push(`o.${O.createdAt} >= ${params.add(q.created_from)}`);
  if (q.created_to !== undefined) where.push(`o.${O.createdAt} <= ${params.add(q.created_to)}`);
  if (q.paid !== undefined) where.push(`o.${O.datePaid} IS ${q.paid ? "NOT " : ""}NULL`);
  if (q.order_id !== undefined) where.push(`o.${O.id} = ${params.add(q.order_id)}`);
  if (q.status !== undefined) where.push(`o.${O.status} = ${params.add(q.status)}`);
  if (q.from_date_paid !== undefined) where.push(`o.${O.datePaid} >= ${params.add(q.from_date_paid)}`);
  // Up to and including the given second.
  if (q.to_date_paid !== undefined) where.push(`o.${O.datePaid} < ${params.add(q.to_date_paid + 1000)}`);
  // An order whose status never changed has had it since it was created.
  if (q.from_status_date !== undefined) {
    where.push(`coalesce(o.${O.statusDate}, o.${O.createdAt}) >= ${params.add(q.from_status_date)}`);
  }
  if (q.search !== undefined) {
    const s = params.add(searchText(q.search));
    const has = (col: string) => `instr(lower(${col}), ${s}) > 0`;
    const idParam = params.add(/^\d{1,15}$/.test(q.search) ? Number(q.search) : null);
    where.push(
      `(o.${O.id} = ${idParam} OR ${has(`o.${O.email}`)} OR ${has(NAME(`o.${O.billingDetails}`))}
        OR ${has(NAME(`o.${O.shippingDetails}`))} OR ${has(`o.${O.billingDetails}->>'company_name'`)}
        OR EXISTS (SELECT 1 FROM ${L.$} AS l WHERE l.${L.orderId} = o.${O.id} AND ${has(`l.${L.sku}`)}))`,
    );
  }
  // The count is of every order the filters match, whatever page or cursor this is.
  const matching = where.length ? `WHERE ${where.join(" AND ")}` : "";
  const matchingValues = params.values.slice();
  const orderBy = q.order_by ?? "order_id";
  const dir = q.sort_order ?? "desc";
  const column = SORT_COLUMN[orderBy];
  const key = `o.${column}`;
  if (q.cursor !== undefined) {
    const c = decodeKeyCursor(q.cursor);
    const op = dir === "desc" ? "<" : ">";
    const k = params.add(c.key);
    const i = params.add(c.id);
    where.push(
      orderBy === "order_id"
        ? `o.${O.id} ${op} ${i}`
        : `(${key} ${op} ${k} OR (${key} = ${k} AND o.${O.id} ${op} ${i}))`,
    );
  }
  const limit = q.limit ?? ORDER_LIMIT_DEFAULT;
  const offset = q.offset ?? 0;
  const lim = params.add(limit);
  const off = params.add(offset);
  const filter = where.length ? `WHERE ${where.join(" AND ")}` : "";
  const sort = orderBy === "order_id" ? `o.${O.id} ${dir}` : `${key} ${dir}, o.${O.id} ${dir}`;
  // A lookup by order_id answers the detail fields always: a public client reads them from that call.
  const withDetails = q.include_details === true || q.order_id !== undefined;
  const order = orderJsonSql(withDetails);
  const [page, next, counted] = await db.$client.batch<Record<string, unknown>>([
    // Each order's text is carried (src/platform/d1.ts); SQLite builds only the first chunk's.
    // `+ 0`: a bare bound LIMIT would have SQLite prepare the statement again at every request
    // (docs/design.md, "What a page's SQL costs").
    stmt(
      db,
      `SELECT o.${O.id} AS id, o.k, o.est, iif(o.n = 1 OR o.upto <= ${ORDER_CHUNK_BYTES}, ${carriedSql(order)}, NULL) AS j
       FROM (SELECT o.*, row_number() OVER (ORDER BY ${sort}) AS n,
               sum(o.est) OVER (ORDER BY ${sort} ROWS UNBOUNDED PRECEDING) AS upto
             FROM (SELECT o.*, o.${column} AS k, ${estimateSql(withDetails)} AS est
                   FROM ${O.$} AS o ${filter} ORDER BY ${sort} LIMIT ${lim} + 0 OFFSET ${off}) AS o) AS o
       ORDER BY o.n`,
      ...params.values,
    ),
    stmt(
      db,
      `SELECT EXISTS (SELECT 1 FROM ${O.$} AS o ${filter} LIMIT 1 OFFSET ${off} + ${lim}) AS more`,
      ...params.values,
    ),
    ...(q.count ? [stmt(db, `SELECT count(*) AS n FROM ${O.$} AS o ${matching}`, ...matchingValues)] : []),
  ]);
  const rows = page.results as PageRow[];
  const more = next.results[0]?.more === 1;
  if (q.order_id !== undefined && !rows.length) throw new ApiError(404, `order ${q.order_id} not found`);
  const end = rows[rows.length - 1];
  const link = !more
    ? undefined
    : nextLink(
        url,
        q.offset !== undefined ? { offset: String(offset + limit) } : { cursor: encodeKeyCursor(end.k, end.id) },
      );
  const total = counted?.results[0]?.n as number | undefined;
  const built = rows.findIndex((r) => r.j === null);
  const first = (built < 0 ? rows : rows.slice(0, built)).map((r) => r.j as string);
  if (built < 0) return { chunks: { first: joined(first, true, true) }, link, total };
  // The rest by id, in the page's order: the page is the one the first round trip saw.
  const rest = chunkIds(rows.slice(built));
  const rowsSql = `SELECT ${carriedSql(order)} AS j FROM json_each(?1) AS w JOIN ${O.$} AS o ON o.${O.id} = w.value
    ORDER BY w.key`;
  let n = 0;
  const later = async () => {
    if (n >= rest.length) return undefined;
    const { results } = await stmt(db, rowsSql, JSON.stringify(rest[n++])).all<{ j: string }>();
    const texts = results.map((x) => x.j);
    return joined(texts, false, n === rest.length);
  };
  return { chunks: { first: joined(first, true, false), next: later }, link, total };
}
