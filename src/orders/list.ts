import { z } from "zod";
import type { DB } from "../db/client";
import { decodeKeyCursor, encodeKeyCursor } from "../platform/cursor";
import { stmt } from "../platform/d1";
import { ApiError } from "../platform/errors";
import {
  boolText,
  ignored,
  nextLink,
  Params,
  parseQuery,
  refuseOffsetPastBound,
  searchText,
  strictQuery,
  text,
  unixSeconds,
  whole,
} from "../platform/query";
import { carriedSql } from "../platform/quotes";
import { orderJsonSql, STATUS_CODES, type StatusName } from "./modelled-json";

// GET /v1/orders in the modelled dialect (src/docs/modelled-reads.md, "Modelled reads"), with our own
// filters and total count beside it (src/docs/orders.md, "Finding orders").

/** Page size bounds: the modelled API's default, and its maximum of 500 (src/docs/modelled-reads.md). */
export const ORDER_LIMIT_DEFAULT = 100;
export const ORDER_LIMIT_MAX = 500;
/**
 * The most JSON text one orders page may answer (src/docs/orders.md, "Limits"): whole orders with
 * all their lines up to this many bytes, inside the CPU budget (bench/README.md).
 */
export const ORDER_PAGE_BYTES_MAX = 2 * 1024 * 1024;
const MAX_OFFSET = 100_000_000;

const PARAMS = [
  "order_id",
  "search",
  "offset",
  "limit",
  "sort_order",
  "order_by",
  "include_details",
  "from_date_paid",
  "to_date_paid",
  "from_status_date",
  "status",
  "apps_load",
  "cursor",
  "created_from",
  "created_to",
  "paid",
  "count",
];

const DAY_MS = 86_400_000;
/**
 * An ISO 8601 date (a whole UTC day) or a time with its offset, as epoch milliseconds: the day's
 * first millisecond, or with `end` its last, so a range of dates includes both.
 */
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

export const parseOrderQuery = (url: string) => parseQuery(listQuery, strictQuery(url, PARAMS));

const SORT_COLUMN = { price: "total", date: "created_at", order_id: "id" } as const;

// Customer name as the order gave it (billing or shipping), for search.
const NAME = (col: string) => `trim(coalesce(${col}->>'firstname', '') || ' ' || coalesce(${col}->>'lastname', ''))`;

/** Our own filters' conditions (src/docs/orders.md, "Finding orders"). */
function ownFilters(q: OrderListQuery, params: Params): string[] {
  const where: string[] = [];
  if (q.created_from !== undefined) where.push(`o.created_at >= ${params.add(q.created_from)}`);
  if (q.created_to !== undefined) where.push(`o.created_at <= ${params.add(q.created_to)}`);
  if (q.paid !== undefined) where.push(`o.date_paid IS ${q.paid ? "NOT " : ""}NULL`);
  return where;
}

/**
 * One D1 round trip whatever the page: the orders of the page and the lines of exactly those
 * orders in one batch (one snapshot). The default order is the modelled API's: newest order id first.
 */
export async function listOrders(
  db: DB,
  q: OrderListQuery,
  url: string,
): Promise<{ json: string[]; link?: string; total?: number }> {
  const params = new Params();
  const where: string[] = ownFilters(q, params);
  if (q.order_id !== undefined) where.push(`o.id = ${params.add(q.order_id)}`);
  if (q.status !== undefined) where.push(`o.status = ${params.add(q.status)}`);
  if (q.from_date_paid !== undefined) where.push(`o.date_paid >= ${params.add(q.from_date_paid)}`);
  // Up to and including the given second.
  if (q.to_date_paid !== undefined) where.push(`o.date_paid < ${params.add(q.to_date_paid + 1000)}`);
  // An order whose status never changed has had it since it was created.
  if (q.from_status_date !== undefined) {
    where.push(`coalesce(o.status_date, o.created_at) >= ${params.add(q.from_status_date)}`);
  }
  if (q.search !== undefined) {
    const s = params.add(searchText(q.search));
    const has = (col: string) => `instr(lower(${col}), ${s}) > 0`;
    const idParam = params.add(/^\d{1,15}$/.test(q.search) ? Number(q.search) : null);
    where.push(
      `(o.id = ${idParam} OR ${has("o.email")} OR ${has(NAME("o.billing_details"))}
        OR ${has(NAME("o.shipping_details"))} OR ${has("o.billing_details->>'company_name'")}
        OR EXISTS (SELECT 1 FROM order_lines AS l WHERE l.order_id = o.id AND ${has("l.sku")}))`,
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
      orderBy === "order_id" ? `o.id ${op} ${i}` : `(${key} ${op} ${k} OR (${key} = ${k} AND o.id ${op} ${i}))`,
    );
  }
  const limit = q.limit ?? ORDER_LIMIT_DEFAULT;
  const offset = q.offset ?? 0;
  const lim = params.add(limit);
  const off = params.add(offset);
  const filter = where.length ? `WHERE ${where.join(" AND ")}` : "";
  const sortOf = (alias: string) =>
    orderBy === "order_id" ? `${alias}.id ${dir}` : `${alias}.${column} ${dir}, ${alias}.id ${dir}`;
  const sort = sortOf("o");
  // A lookup by order_id answers the detail fields always: a public client reads them from that call.
  const order = orderJsonSql(q.include_details === true || q.order_id !== undefined);
  const bytes = "length(CAST(j AS BLOB)) + 1";
  const [page, next, counted] = await db.$client.batch<Record<string, unknown>>([
    // Orders up to the first that crosses the byte bound: the ones after it would not be answered.
    // Each order's text is carried (src/platform/quotes.ts) and measured as answered.
    stmt(
      db,
      `SELECT id, k, j, upto FROM (
         SELECT id, k, j, sum(${bytes}) OVER (ORDER BY n ROWS UNBOUNDED PRECEDING) AS upto FROM (
           SELECT o.id, o.${column} AS k, ${carriedSql(order)} AS j, row_number() OVER (ORDER BY ${sort}) AS n
           FROM (SELECT * FROM orders AS o ${filter} ORDER BY ${sort} LIMIT ${lim} OFFSET ${off}) AS o))
       WHERE upto - (${bytes}) < ${ORDER_PAGE_BYTES_MAX} ORDER BY upto`,
      ...params.values,
    ),
    stmt(
      db,
      `SELECT EXISTS (SELECT 1 FROM orders AS o ${filter} LIMIT 1 OFFSET ${off} + ${lim}) AS more`,
      ...params.values,
    ),
    ...(q.count ? [stmt(db, `SELECT count(*) AS n FROM orders AS o ${matching}`, ...matchingValues)] : []),
  ]);
  let rows = page.results as { id: number; k: number; j: string; upto: number }[];
  let more = next.results[0]?.more === 1;
  const last = rows[rows.length - 1];
  if (last && last.upto > ORDER_PAGE_BYTES_MAX && rows.length > 1) {
    rows = rows.slice(0, -1);
    refuseOffsetPastBound(q.offset !== undefined, rows.length, "orders", ORDER_PAGE_BYTES_MAX);
    more = true;
  }
  if (q.order_id !== undefined && !rows.length) throw new ApiError(404, `order ${q.order_id} not found`);
  let link: string | undefined;
  if (more) {
    const end = rows[rows.length - 1];
    link =
      q.offset !== undefined
        ? nextLink(url, { offset: String(offset + limit) })
        : nextLink(url, { cursor: encodeKeyCursor(end.k, end.id) });
  }
  const json = ["["];
  for (let i = 0; i < rows.length; i++) {
    if (i) json.push(",");
    json.push(rows[i].j);
  }
  json.push("]");
  // Its parts, carried, as the products page's (src/products/list.ts, ProductListAnswer).
  return { json, link, total: counted?.results[0]?.n as number | undefined };
}
