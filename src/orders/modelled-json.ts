// Orders in the modelled dialect (docs/modelled-reads.md, "Modelled reads"), built by SQLite as
// JSON text, one text per order, which the Worker joins into the page without parsing: ids,
// money and statuses as strings, dates as "YYYY-MM-DD HH:MM:SS" UTC, order lines' ids and qty as
// JSON numbers, missing text as "". The JavaScript presenters in test/modelled-orders-reference.ts
// are the reference that test/orders.list.json.test.ts compares this SQL against.

/** Our status words to the modelled API's codes (docs/modelled-reads.md, "Modelled reads"). */
export const STATUS_CODES = { unpaid: "-1", paid: "1", done: "2", cancelled: "3" } as const;
export type StatusName = keyof typeof STATUS_CODES;

const s = (sql: string) => `coalesce(${sql}, '')`;
/** Minor units as two-decimal text (14895 -> "148.95", -50 -> "-0.50"). */
const money = (col: string) =>
  `(iif(${col} < 0, '-', '') || (abs(${col}) / 100) || '.' || substr('0' || (abs(${col}) % 100), -2))`;
const date = (col: string) => `iif(${col} IS NULL, '', strftime('%Y-%m-%d %H:%M:%S', ${col} / 1000, 'unixepoch'))`;
const status = `CASE o.status ${Object.entries(STATUS_CODES)
  .map(([name, code]) => `WHEN '${name}' THEN '${code}'`)
  .join(" ")} ELSE '' END`;
const field = (a: string, k: string) => s(`CAST(${a} ->> '${k}' AS TEXT)`);
/** "first last", either left out when missing or empty, as the order gave them. */
const fullName = (a: string) => {
  const [f, l] = [field(a, "firstname"), field(a, "lastname")];
  return `(${f} || iif(${f} <> '' AND ${l} <> '', ' ', '') || ${l})`;
};
const addressBlock = (a: string) => `json_object('company_name', ${field(a, "company_name")},
  'full_name', ${fullName(a)}, 'address', ${field(a, "address")}, 'address2', ${field(a, "address2")},
  'city', ${field(a, "city")}, 'zipcode', ${field(a, "zipcode")}, 'country', ${field(a, "country")})`;

/** An order line: its variant label is its option values joined by " / ". */
const LINE = `json_object('id', l.rowid, 'product_id', l.product_id, 'variant_id', l.variant_id,
  'title', ${s("l.title")}, 'sku', ${s("l.sku")},
  'variant', coalesce((SELECT group_concat(x.value ->> 'value', ' / ') FROM json_each(l.options) AS x), ''),
  'price', ${money("l.unit_price")}, 'qty', l.qty)`;

/** The lines of order `o`, in position order, as a JSON array. */
const LINES = `json(coalesce((SELECT json_group_array(json(${LINE}) ORDER BY l.position)
  FROM order_lines AS l WHERE l.order_id = o.id), '[]'))`;

const BASE = `'order_id', CAST(o.id AS TEXT), 'date_created', ${date("o.created_at")},
  'total_amount', ${money("o.total")}, 'status', ${status}, 'status_name', o.status, 'products', ${LINES}`;

// An order without its own shipping address ships to the billing address.
const BILLING = "coalesce(o.billing_details, '{}')";
const SHIPPING = "coalesce(o.shipping_details, o.billing_details, '{}')";
const TAX = "coalesce((SELECT sum(t.value ->> 'amount') FROM json_each(o.tax) AS t), 0)";

const DETAILS = `${BASE},
  'date_paid', ${date("o.date_paid")}, 'status_date', ${date("coalesce(o.status_date, o.created_at)")},
  'currency', ${s("o.currency")}, 'items_amount', ${money("o.subtotal")},
  'shipping_amount', ${money("o.shipping_price")}, 'discount_amount', ${money("o.discount")},
  'tax_amount', ${money(TAX)}, 'total_pay_amount', ${money("o.total")},
  'shipping_id', ${s("CAST(o.shipping_id AS TEXT)")}, 'shipping_name', ${s("o.shipping_name")},
  'tracking_number', ${s("o.tracking_number")}, 'shipping_company', ${s("o.shipping_company")},
  'notes', ${s("o.note")},
  'is_taxfree', json('false'), 'is_taxontop', json('false'),
  'paymethod', json_object('method', ${s("o.payment_method")}, 'transaction_id', ${s("o.transaction_id")}),
  'customer', json_object('email', ${s("o.email")}, 'phone', ${s("o.phone")},
    'customer_type', ${s("o.customer_type")}, 'company_name', ${field(BILLING, "company_name")},
    'full_name', ${fullName(BILLING)}, 'address', ${field(BILLING, "address")},
    'address2', ${field(BILLING, "address2")}, 'city', ${field(BILLING, "city")},
    'zipcode', ${field(BILLING, "zipcode")}, 'country', ${field(BILLING, "country")},
    'notes', ${s("o.note")}, 'shipping_details', ${addressBlock(SHIPPING)},
    'billing_details', ${addressBlock(BILLING)})`;

/** SQL of one order's modelled JSON text over a row `o` of orders (prices include tax here). */
export const orderJsonSql = (withDetails: boolean) => `json_object(${withDetails ? DETAILS : BASE})`;
