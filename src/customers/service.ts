import type { z } from "zod";
import { customers, orders } from "../db/schema";
import { sqlNames } from "../platform/columns";
import { type DB, rowMapper, stmt } from "../platform/d1";
import { Params, searchText } from "../platform/query";
import { toMoney } from "../products/present";
import {
  CUSTOMER_LIMIT_DEFAULT,
  CUSTOMER_ORDERS_MAX,
  type CustomerOut,
  type CustomerQuery,
  type customerOrder,
} from "./schema";

// The customers the store holds (docs/customers.md): one per e-mail, made and updated by secret
// keys' orders (src/orders/insert.ts), each answered with its totals, summed in SQL.

const C = sqlNames(customers);
const O = sqlNames(orders);

const toCustomer = rowMapper(customers);
/** The totals the statements below select beside a stored row. */
type Totals = { n: number; spent: number; last_id: number | null; last_at: number | null };

// Per customer of `c` (a page, or one): its orders joined by customer_id and summed in one pass.
// Cancelled orders and orders in another currency than the store's add nothing to the spend.
const WITH_TOTALS = (from: string, currency: string) => `
  SELECT c.*, count(o.${O.id}) AS n,
    coalesce(sum(iif(o.${O.status} <> 'cancelled' AND o.${O.currency} = ${currency}, o.${O.total}, 0)), 0) AS spent,
    max(o.${O.id}) AS last_id, max(o.${O.createdAt}) AS last_at
  FROM (${from}) AS c LEFT JOIN ${O.$} AS o ON o.${O.customerId} = c.${C.id}
  GROUP BY c.${C.id} ORDER BY c.${C.id} DESC`;

const details = (text: string | null): Record<string, unknown> | null => (text ? JSON.parse(text) : null);
const fullName = (d: Record<string, unknown> | null) =>
  [d?.firstname, d?.lastname]
    .filter((s) => typeof s === "string" && s.trim())
    .join(" ")
    .trim();
const iso = (ms: number) => new Date(ms).toISOString();

function present(row: Record<string, unknown>, currency: string): CustomerOut {
  const c = toCustomer(row);
  const t = row as Totals;
  const billing = details(c.billingDetails);
  const shipping = details(c.shippingDetails);
  return {
    customer_id: c.id,
    email: c.email,
    name: fullName(billing) || fullName(shipping),
    phone: c.phone,
    type: c.type,
    login_create: c.hasLogin === 1,
    newsletter_subscribe: c.newsletter === 1,
    billing_details: billing,
    shipping_details: shipping,
    orders_count: t.n,
    total_spent: toMoney(t.spent),
    currency,
    last_order_id: t.last_id,
    last_order_at: t.last_at === null ? null : iso(t.last_at),
    created_at: iso(c.createdAt),
    updated_at: iso(c.updatedAt),
  };
}

// A customer's name as its addresses give it, for search.
const NAME = (col: string) => `trim(coalesce(${col}->>'firstname', '') || ' ' || coalesce(${col}->>'lastname', ''))`;

/** The search's condition on customer `c`, its lowercased text bound at `s`. */
function matches(s: string): string {
  const has = (col: string) => `instr(lower(${col}), ${s}) > 0`;
  return `(${has(`c.${C.email}`)} OR ${has(NAME(`c.${C.billingDetails}`))} OR ${has(NAME(`c.${C.shippingDetails}`))}
    OR ${has(`coalesce(c.${C.billingDetails}->>'company_name', '')`)} OR ${has(`coalesce(c.${C.phone}, '')`)})`;
}

/** A page of customers, newest first, with totals, whether more follow, and (with count) how many match. */
export async function listCustomers(db: DB, q: CustomerQuery, currency: string) {
  const params = new Params();
  const cur = params.add(currency);
  const search = q.search === undefined ? undefined : searchText(q.search);
  const filter = search === undefined ? "" : `WHERE ${matches(params.add(search))}`;
  const limit = q.limit ?? CUSTOMER_LIMIT_DEFAULT;
  const offset = q.offset ?? 0;
  const lim = params.add(limit);
  const off = params.add(offset);
  // `+ 0`: a bare bound LIMIT would have SQLite prepare the statement anew at every request.
  const page = `SELECT c.* FROM ${C.$} AS c ${filter} ORDER BY c.${C.id} DESC LIMIT ${lim} + 0 OFFSET ${off}`;
  const counting =
    search === undefined
      ? stmt(db, `SELECT count(*) AS n FROM ${C.$}`)
      : stmt(db, `SELECT count(*) AS n FROM ${C.$} AS c WHERE ${matches("?1")}`, search);
  const [rows, next, counted] = await db.$client.batch<Record<string, unknown>>([
    stmt(db, WITH_TOTALS(page, cur), ...params.values),
    stmt(
      db,
      `SELECT EXISTS (SELECT 1 FROM ${C.$} AS c ${filter} LIMIT 1 OFFSET ${off} + ${lim}) AS more`,
      ...params.values,
    ),
    ...(q.count ? [counting] : []),
  ]);
  return {
    customers: rows.results.map((r) => present(r, currency)),
    more: next.results[0]?.more === 1,
    total: counted?.results[0]?.n as number | undefined,
    limit,
    offset,
  };
}

type OrderRow = { id: number; status: string; paid: number | null; total: number; currency: string; created: number };

/** One customer with its totals and its latest orders; null when there is none. One round trip. */
export async function getCustomer(db: DB, id: number, currency: string) {
  const [one, latest] = await db.$client.batch<Record<string, unknown>>([
    stmt(db, WITH_TOTALS(`SELECT * FROM ${C.$} WHERE ${C.id} = ?1`, "?2"), id, currency),
    stmt(
      db,
      `SELECT ${O.id} AS id, ${O.status} AS status, ${O.datePaid} AS paid, ${O.total} AS total,
         ${O.currency} AS currency, ${O.createdAt} AS created
       FROM ${O.$} WHERE ${O.customerId} = ?1 ORDER BY ${O.id} DESC LIMIT ${CUSTOMER_ORDERS_MAX}`,
      id,
    ),
  ]);
  const row = one.results[0];
  if (!row) return null;
  const list: z.output<typeof customerOrder>[] = (latest.results as OrderRow[]).map((o) => ({
    order_id: o.id,
    status: o.status as z.output<typeof customerOrder>["status"],
    date_paid: o.paid === null ? null : iso(o.paid),
    total: toMoney(o.total),
    currency: o.currency,
    created_at: iso(o.created),
  }));
  return { ...present(row, currency), orders: list };
}
