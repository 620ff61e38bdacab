import { z } from "zod";
import type { DB } from "../db/client";
import { decodeKeyCursor, encodeKeyCursor } from "../platform/cursor";
import { stmt } from "../platform/d1";
import { ApiError } from "../platform/errors";
import {
  boolText,
  cutShort,
  ignored,
  nextLink,
  Params,
  parseQuery,
  rowsThatFit,
  searchText,
  strictQuery,
  text,
  unixSeconds,
  whole,
} from "../platform/query";
import {
  type ModelledOrder,
  modelledOrder,
  modelledOrderDetails,
  type Row,
  STATUS_CODES,
  type StatusName,
} from "./modelled";

// GET /v1/orders in the modelled dialect (src/docs/modelled-reads.md, "Modelled reads").

/**
 * Page size bounds (one place, for the CPU budget). The modelled API allows 1,000 orders a page;
 * measured in workerd (npm run bench), 500 orders with details took 15.2 ms of CPU (median) and
 * 200 took 5.9 ms: D1's row mapping, presenting and serialising grow with the page, so 200 orders
 * and 800 lines are the most that fit the free plan's 10 ms (src/docs/modelled-reads.md, "Modelled reads").
 */
export const ORDER_LIMIT_DEFAULT = 100;
export const ORDER_LIMIT_MAX = 200;
/** Order lines in one page (4 a page order on average); an order has at most 500. */
export const PAGE_LINES_MAX = 800;
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
];

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
  })
  .superRefine((q, ctx) => {
    if (q.cursor !== undefined && (q.offset !== undefined || q.order_id !== undefined)) {
      ctx.addIssue({ code: "custom", path: ["cursor"], message: "cannot be combined with offset or order_id" });
    }
  });
export type OrderListQuery = z.output<typeof listQuery>;

export const parseOrderQuery = (url: string) => parseQuery(listQuery, strictQuery(url, PARAMS));

const SORT_COLUMN = { price: "total", date: "created_at", order_id: "id" } as const;

// Only the columns the presenters (modelled.ts) and the cursor read: D1 builds an object property
// per selected column of every row, which is the largest part of a page's CPU (bench/README.md).
const PRESENTED = [
  "id",
  "status",
  "created_at",
  "total",
  "date_paid",
  "status_date",
  "currency",
  "subtotal",
  "shipping_price",
  "discount",
  "tax",
  "shipping_id",
  "shipping_name",
  "tracking_number",
  "shipping_company",
  "note",
  "payment_method",
  "transaction_id",
  "email",
  "phone",
  "customer_type",
  "billing_details",
  "shipping_details",
]
  .map((c) => `o.${c}`)
  .join(", ");

// Customer name as the order gave it (billing or shipping), for search.
const NAME = (col: string) => `trim(coalesce(${col}->>'firstname', '') || ' ' || coalesce(${col}->>'lastname', ''))`;

/**
 * One D1 round trip whatever the page: the orders of the page and the lines of exactly those
 * orders in one batch (one snapshot). The default order is the modelled API's: newest order id first.
 */
export async function listOrders(
  db: DB,
  q: OrderListQuery,
  url: string,
): Promise<{ orders: ModelledOrder[]; link?: string }> {
  const params = new Params();
  const where: string[] = [];
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
        OR ${has(NAME("o.shipping_details"))} OR ${has("o.billing_details->>'company_name'")})`,
    );
  }
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
  const [os, ls] = await db.$client.batch<Row>([
    stmt(
      db,
      `SELECT ${PRESENTED}, (SELECT count(*) FROM order_lines AS c WHERE c.order_id = o.id) AS line_count
       FROM orders AS o ${filter} ORDER BY ${sort} LIMIT ${lim} + 1 OFFSET ${off}`,
      ...params.values,
    ),
    stmt(
      db,
      // Lines in the page's order, so that the first PAGE_LINES_MAX are those of its first orders.
      `SELECT l.rowid AS line_id, l.order_id, l.product_id, l.variant_id, l.sku, l.title, l.options, l.qty,
         l.unit_price FROM order_lines AS l JOIN orders AS po ON po.id = l.order_id
       WHERE l.order_id IN (SELECT o.id FROM orders AS o ${filter} ORDER BY ${sort} LIMIT ${lim} OFFSET ${off})
       ORDER BY ${sortOf("po")}, l.position LIMIT ${PAGE_LINES_MAX}`,
      ...params.values,
    ),
  ]);
  let more = os.results.length > limit;
  let rows = more ? os.results.slice(0, limit) : os.results;
  const fit = rowsThatFit(
    rows.map((o) => o.line_count as number),
    PAGE_LINES_MAX,
  );
  if (fit < rows.length) {
    cutShort(q.offset !== undefined, fit, "order lines", PAGE_LINES_MAX);
    rows = rows.slice(0, fit);
    more = true;
  }
  const byOrder = new Map<unknown, Row[]>();
  for (const l of ls.results) {
    const list = byOrder.get(l.order_id);
    if (list) list.push(l);
    else byOrder.set(l.order_id, [l]);
  }
  // A lookup by order_id answers the detail fields always: a public client reads them from that call.
  const present = q.include_details || q.order_id !== undefined ? modelledOrderDetails : modelledOrder;
  const orders = rows.map((o) => present(o, byOrder.get(o.id) ?? []));
  if (q.order_id !== undefined && !orders.length) throw new ApiError(404, `order ${q.order_id} not found`);
  let link: string | undefined;
  if (more) {
    const last = rows[rows.length - 1];
    link =
      q.offset !== undefined
        ? nextLink(url, { offset: String(offset + limit) })
        : nextLink(url, { cursor: encodeKeyCursor(last[column] as number, last.id as number) });
  }
  return { orders, link };
}
