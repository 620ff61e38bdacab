import { orderLines, orders } from "../db/schema";
import { sqlNames } from "../platform/columns";
import {
  arrange,
  type Encoding,
  isText,
  type LINE_FIELDS,
  MODELLED_LINE_LAYOUT,
  MODELLED_ORDER_LAYOUT,
  modelledSlots,
  PLAIN_LINE,
  PLAIN_ORDER,
  type Tree,
} from "./fields";

// Orders in the modelled dialect (docs/modelled-reads.md, "Modelled reads"), built by SQLite as one
// JSON text per order, which the Worker joins into the page without parsing. Plain fields come from
// their descriptions (fields.ts), the SPECIAL entries from here; test/orders.list.json.test.ts
// compares this SQL against the presenters of test/modelled-orders-reference.ts.

const O = sqlNames(orders);
const L = sqlNames(orderLines);

/** Our status words to the modelled API's codes (docs/modelled-reads.md, "Modelled reads"). */
export const STATUS_CODES = { unpaid: "-1", paid: "1", done: "2", cancelled: "3" } as const;
export type StatusName = keyof typeof STATUS_CODES;

const s = (sql: string) => `coalesce(${sql}, '')`;
/** Minor units as two-decimal text (14895 -> "148.95", -50 -> "-0.50"). */
const money = (col: string) =>
  `(iif(${col} < 0, '-', '') || (abs(${col}) / 100) || '.' || substr('0' || (abs(${col}) % 100), -2))`;
const date = (col: string) => `iif(${col} IS NULL, '', strftime('%Y-%m-%d %H:%M:%S', ${col} / 1000, 'unixepoch'))`;

/** Each encoding (fields.ts) of a column's SQL value. */
const ENCODE: Record<Encoding, (sql: string) => string> = {
  digits: (c) => s(`CAST(${c} AS TEXT)`),
  text: s,
  amount: money,
  date,
  number: (c) => c,
};

const status = `CASE o.${O.status} ${Object.entries(STATUS_CODES)
  .map(([name, code]) => `WHEN '${name}' THEN '${code}'`)
  .join(" ")} ELSE '' END`;
const field = (a: string, k: string) => s(`CAST(${a} ->> '${k}' AS TEXT)`);
/** "first last", either left out when missing or empty, as the order gave them. */
const fullName = (a: string) => {
  const [f, l] = [field(a, "firstname"), field(a, "lastname")];
  return `(${f} || iif(${f} <> '' AND ${l} <> '', ' ', '') || ${l})`;
};
const ADDRESS = ["company_name", "full_name", "address", "address2", "city", "zipcode", "country"];
const addressPart = (a: string, k: string) => (k === "full_name" ? fullName(a) : field(a, k));
const addressBlock = (a: string) => `json_object(${ADDRESS.map((k) => `'${k}', ${addressPart(a, k)}`).join(", ")})`;

/** A tree of SQL values as nested json_object calls. */
const jsonObject = (tree: Tree<string>): string =>
  `json_object(${tree.map((n) => `'${n.key}', ${n.children ? jsonObject(n.children) : n.value}`).join(", ")})`;

/** The SQL of each modelled slot of `fields` over the row alias `alias`, and the special ones. */
function slotsSql<F extends (typeof PLAIN_ORDER)[number] | (typeof PLAIN_LINE)[number]>(
  fields: F[],
  alias: string,
  names: Record<string, string>,
  details: boolean,
  special: Record<string, { sql: string; list?: true }>,
) {
  const out = new Map<string, string>();
  for (const { field: f, slot } of modelledSlots(fields, details)) {
    out.set(slot.at, ENCODE[slot.enc](`${alias}.${names[f.column]}`));
  }
  for (const [at, sp] of Object.entries(special)) if (details || sp.list) out.set(at, sp.sql);
  return out;
}

/** SPECIAL slots of a line: its id, and its variant label, its option values joined by " / ". */
const LINE_SPECIAL = {
  id: { sql: "l.rowid", list: true },
  // A line has at most 5 options (a product's): read by position, not through json_each, whose
  // every element D1 counts as a row read.
  variant: {
    sql: `concat_ws(' / ', ${[0, 1, 2, 3, 4].map((i) => `l.${L.options} ->> '$[${i}].value'`).join(", ")})`,
    list: true,
  },
} as const satisfies Record<Exclude<(typeof MODELLED_LINE_LAYOUT)[number], ModelledLinePath>, unknown>;
type ModelledLinePath = (typeof LINE_FIELDS)[keyof typeof LINE_FIELDS] extends infer F
  ? F extends { modelled: readonly { at: infer A }[] }
    ? A
    : never
  : never;

const LINE = jsonObject(arrange(MODELLED_LINE_LAYOUT, slotsSql(PLAIN_LINE, "l", L, true, LINE_SPECIAL)));

/**
 * The lines of order `o` as a JSON array, in the key's (order_id, position) order: an ORDER BY
 * inside the aggregate would copy every line into a sorter, a second row read for each.
 */
const LINES = `json(coalesce((SELECT json_group_array(json(${LINE}))
  FROM ${L.$} AS l WHERE l.${L.orderId} = o.${O.id}), '[]'))`;

// An order without its own shipping address ships to the billing address.
const BILLING = `coalesce(o.${O.billingDetails}, '{}')`;
const SHIPPING = `coalesce(o.${O.shippingDetails}, o.${O.billingDetails}, '{}')`;
const TAX = `coalesce((SELECT sum(t.value ->> 'amount') FROM json_each(o.${O.tax}) AS t), 0)`;

/** SPECIAL slots of an order (MODELLED_ORDER_LAYOUT). */
const ORDER_SPECIAL: Record<string, { sql: string; list?: true }> = {
  status: { sql: status, list: true },
  status_name: { sql: `o.${O.status}`, list: true },
  products: { sql: LINES, list: true },
  // An order whose status never changed has had it since it was created.
  status_date: { sql: date(`coalesce(o.${O.statusDate}, o.${O.createdAt})`) },
  tax_amount: { sql: money(TAX) },
  is_taxfree: { sql: "json('false')" },
  is_taxontop: { sql: "json('false')" },
  // The billing address, flattened into the customer.
  ...Object.fromEntries(ADDRESS.map((k) => [`customer.${k}`, { sql: addressPart(BILLING, k) }])),
  "customer.shipping_details": { sql: addressBlock(SHIPPING) },
  "customer.billing_details": { sql: addressBlock(BILLING) },
};

const orderSql = (details: boolean) =>
  jsonObject(arrange(MODELLED_ORDER_LAYOUT, slotsSql(PLAIN_ORDER, "o", O, details, ORDER_SPECIAL)));
const ORDER_LIST = orderSql(false);
const ORDER_DETAILS = orderSql(true);

/** SQL of one order's modelled JSON text over a row `o` of orders (prices include tax here). */
export const orderJsonSql = (withDetails: boolean) => (withDetails ? ORDER_DETAILS : ORDER_LIST);

/** Text lengths of the slots of `fields` over `alias`, each times its weight (fields.ts `estimate`). */
function textLengths<F extends (typeof PLAIN_ORDER)[number] | (typeof PLAIN_LINE)[number]>(
  fields: F[],
  alias: string,
  names: Record<string, string>,
  details: boolean,
) {
  return fields.flatMap((f) => {
    const slots = (f.modelled ?? []).filter((sl) => details || sl.list).length;
    const weight = details && "estimate" in f && f.estimate !== undefined ? f.estimate : slots;
    if (!isText(f.kind) || !weight) return [];
    const len = `coalesce(length(${alias}.${names[f.column]}), 0)`;
    return [weight === 1 ? len : `${weight} * ${len}`];
  });
}

/** About the bytes of an order's modelled answer, from text lengths: only where chunks end depends on it. */
const estimate = (withDetails: boolean) =>
  `(${[withDetails ? "1000" : "150", ...textLengths(PLAIN_ORDER, "o", O, withDetails)].join(" + ")}
  + coalesce((SELECT sum(${["130", ...textLengths(PLAIN_LINE, "l", L, true)].join(" + ")})
    FROM ${L.$} AS l WHERE l.${L.orderId} = o.${O.id}), 0))`;
const ESTIMATE_LIST = estimate(false);
const ESTIMATE_DETAILS = estimate(true);
export const estimateSql = (withDetails: boolean) => (withDetails ? ESTIMATE_DETAILS : ESTIMATE_LIST);
