import type { DB } from "../db/client";
import { isConstraintError, MAX_JSON_BYTES, runBatch, stmt } from "../platform/d1";
import { MAX_ORDER_TOTAL } from "../platform/fields";
import { committed, newEvent, outboxStatement } from "../webhooks/outbox";
import type { OrderOutcome, PlanOptions } from "./create";
import { insertOrders, UPSERT_CUSTOMERS } from "./insert";
import { orderFields } from "./plan";
import { MAX_QTY, type OrderInput } from "./schema";
import type { TaxLine } from "./totals";

// POST /v1/orders in ONE round trip when no cached catalog row can plan it (src/docs/orders.md, "Orders"): the
// first order of a fresh isolate, or one naming a product the isolate has not seen. Instead of
// reading the catalog and planning in JavaScript, one batch plans in SQL: it resolves each line
// (the rules of catalog.ts `resolve`), merges lines of the same item and unit price, prices them,
// sums totals and the tax per rate (the rules of lines.ts and totals.ts, for orders without a
// discount), writes the orders, their lines, the stock and the events, and reads back what the
// answer needs. Everything the JavaScript plan would refuse (an unknown or mismatched identifier,
// a product with variants named without one, more than MAX_QTY of one item, a total past the
// limit, and through the stock floor CHECKs too little stock) fails the batch, so nothing is
// written; the caller then takes the read path, whose JavaScript plan gives the exact errors (and
// fills the isolate's cache). The batch reads no catalog rows for the cache: they cost three
// statements, and this path serves the next such order as cheaply. test/orders.cold.test.ts proves
// the SQL plan equal to the JavaScript one on random catalogs and orders.

// ?1: the request's lines, one JSON array: {o: order index, vid, vnull, sku, pid, qty, price}.
const LINES = `
  SELECT j.key AS k, j.value->>'o' AS o, j.value->>'vid' AS vid, j.value->>'vnull' AS vnull,
    j.value->>'sku' AS sku_in, j.value->>'pid' AS pid, j.value->>'qty' AS qty, j.value->>'price' AS price
  FROM json_each(?1) AS j`;

// Each line with what it resolves to: by variant_id, else by SKU, else by product_id. `bad` says
// the plan would refuse it, with the same conditions as resolve() in catalog.ts.
const RESOLVED = `
  SELECT l.k, l.o, l.qty, p.id AS product_id, v.id AS variant_id,
    iif(v.id IS NULL, p.sku, v.sku) AS sku, p.title, p.tax_rate,
    coalesce(l.price, iif(v.id IS NULL, p.price, v.price)) AS unit_price,
    iif(v.id IS NULL, '[]', (SELECT json_group_array(json_object('name', n.value, 'value',
      CASE n.key WHEN 0 THEN v.option1_value WHEN 1 THEN v.option2_value WHEN 2 THEN v.option3_value
        WHEN 3 THEN v.option4_value ELSE v.option5_value END)) FROM json_each(p.option_names) AS n)) AS options,
    CASE
      WHEN l.vid IS NOT NULL THEN v.id IS NULL OR p.id IS NULL OR (l.pid IS NOT NULL AND l.pid <> p.id)
        OR (l.sku_in IS NOT NULL AND l.sku_in IS NOT v.sku AND l.sku_in IS NOT p.sku)
      WHEN l.sku_in IS NOT NULL THEN k.sku IS NULL OR p.id IS NULL OR (l.pid IS NOT NULL AND l.pid <> p.id)
        OR (k.variant_id IS NOT NULL AND (l.vnull = 1 OR v.id IS NULL))
        OR (k.variant_id IS NULL AND EXISTS (SELECT 1 FROM variants WHERE product_id = p.id))
      ELSE p.id IS NULL OR EXISTS (SELECT 1 FROM variants WHERE product_id = p.id)
    END AS bad
  FROM (${LINES}) AS l
  LEFT JOIN skus AS k ON l.vid IS NULL AND k.sku = l.sku_in
  LEFT JOIN variants AS v ON v.id = iif(l.vid IS NOT NULL, l.vid, k.variant_id)
  LEFT JOIN products AS p ON p.id = CASE WHEN l.vid IS NOT NULL THEN v.product_id
    WHEN l.sku_in IS NOT NULL THEN k.product_id ELSE l.pid END`;

// Lines of one item at one unit price are one line, at the place of the first (lines.ts addLine).
const MERGED = `
  SELECT o, product_id, variant_id, unit_price, min(sku) AS sku, min(title) AS title,
    min(tax_rate) AS tax_rate, min(options) AS options, sum(qty) AS qty, min(k) AS first
  FROM r GROUP BY o, product_id, variant_id, unit_price`;

// Each statement resolves the lines once (r) and merges them once (m), whatever uses them.
const WITH_LINES = `WITH r AS MATERIALIZED (${RESOLVED}), m AS MATERIALIZED (${MERGED})`;

// Whatever the JavaScript plan would refuse (?2: the orders' rows, for their shipping). The
// orders' INSERT writes a NULL status when it finds any, and the NOT NULL column fails the batch:
// the check costs no statement of its own.
const REFUSED = `
  SELECT 1 FROM r WHERE bad
  UNION ALL SELECT 1 FROM m WHERE qty > ${MAX_QTY}
  UNION ALL SELECT 1 FROM (SELECT o, total(qty * unit_price) AS s FROM m GROUP BY o) AS t
    JOIN json_each(?2) AS x ON x.key = t.o WHERE t.s + (x.value->>'shipping_price') > ${MAX_ORDER_TOTAL}`;

// Subtotal and the tax per rate, highest first: amount x rate / (100 + rate), half up (totals.ts).
const TOTALS = `
  SELECT o, sum(net) AS subtotal,
    json_group_array(json_object('rate', tax_rate, 'amount',
      (net * tax_rate * 2 + 100 + tax_rate) / (2 * (100 + tax_rate))) ORDER BY tax_rate DESC) AS tax
  FROM (SELECT o, tax_rate, sum(qty * unit_price) AS net FROM m GROUP BY o, tax_rate)
  GROUP BY o`;

// ?2 the orders' rows, ?3 now.
const INSERT_ORDERS = `${WITH_LINES} ${insertOrders({
  subtotal: "t.subtotal",
  discount: "0",
  total: "t.subtotal + (o.value->>'shipping_price')",
  tax: "t.tax",
  from: `json_each(?2) AS o JOIN (${TOTALS}) AS t ON t.o = o.key`,
  now: "?3",
  status: `CASE WHEN EXISTS (${REFUSED}) THEN NULL ELSE 'unpaid' END`,
})} RETURNING id, token, subtotal, total, tax`; // what the answer needs, with no statement of its own

// ?2 the tokens of the orders, by index.
const INSERT_LINES = `${WITH_LINES}
  INSERT INTO order_lines (order_id, position, product_id, variant_id, sku, title, options, qty,
    unit_price, tax_rate)
  SELECT o.id, row_number() OVER (PARTITION BY m.o ORDER BY m.first), m.product_id, m.variant_id,
    m.sku, m.title, m.options, m.qty, m.unit_price, m.tax_rate
  FROM m JOIN orders AS o ON o.token = ?2 ->> ('$[' || m.o || ']')`;

// The new orders' lines take their stock (?1 the tokens); the floors are CHECK constraints.
const NEW_LINES = `
  SELECT l.product_id, l.variant_id, l.qty FROM order_lines AS l JOIN orders AS r ON r.id = l.order_id
  WHERE r.token IN (SELECT value FROM json_each(?1))`;
const TAKE_VARIANT_STOCK = `
  UPDATE variants SET qty = variants.qty - t.q
  FROM (SELECT variant_id AS id, sum(qty) AS q FROM (${NEW_LINES}) WHERE variant_id IS NOT NULL GROUP BY 1) AS t
  WHERE variants.id = t.id`;
const TAKE_PRODUCT_STOCK = `
  UPDATE products SET stock = products.stock - t.q
  FROM (SELECT product_id AS id, sum(qty) AS q FROM (${NEW_LINES}) WHERE variant_id IS NULL GROUP BY 1) AS t
  WHERE products.id = t.id`;

type Items = { index: number; data: OrderInput }[];

/** Whether the SQL plan covers these orders; the rest take the read path (src/docs/orders.md, "Orders"). */
function eligible(items: Items, opts: PlanOptions): boolean {
  if (opts.recorder) return false; // a keyed answer is recorded in the batch, so it must be known first
  for (const { data } of items) {
    if (data.products_add?.length || data.products_remove?.length) return false;
    if ((data.discount_add?.amount ?? 0) !== 0) return false;
  }
  return true;
}

/**
 * The orders written in one batch planned in SQL; undefined when they are not eligible or the
 * batch was refused (nothing written): take the read path.
 */
export async function createCold(
  db: DB,
  items: Items,
  opts: PlanOptions,
): Promise<Map<number, OrderOutcome> | undefined> {
  if (!items.length || !eligible(items, opts)) return undefined;
  const fields = items.map(({ data }) => orderFields(data, opts));
  const lines = items.flatMap(({ data }, o) =>
    data.products.map((l) => ({
      o,
      vid: typeof l.variant_id === "number" ? l.variant_id : undefined,
      vnull: l.variant_id === null ? 1 : undefined,
      sku: l.sku,
      pid: l.product_id,
      qty: l.qty,
      price: l.price,
    })),
  );
  const linesJson = JSON.stringify(lines);
  const ordersJson = JSON.stringify(fields.map((f) => f.order));
  // One statement per table: a request too large for one bound value takes the chunked read path.
  if (linesJson.length > MAX_JSON_BYTES / 4 || ordersJson.length > MAX_JSON_BYTES / 4) return undefined;
  const tokens = JSON.stringify(fields.map((f) => f.token));
  const customers = fields.flatMap((f) => (f.customer ? [f.customer] : []));
  const events = fields.map((f) => newEvent("order.created", { orderToken: f.token, keyId: opts.keyId }));
  const { now } = opts;
  let results: D1Result<Record<string, unknown>>[];
  try {
    results = await runBatch(db, [
      ...(customers.length ? [stmt(db, UPSERT_CUSTOMERS, JSON.stringify(customers), now)] : []),
      stmt(db, INSERT_ORDERS, linesJson, ordersJson, now),
      stmt(db, INSERT_LINES, linesJson, tokens),
      stmt(db, TAKE_VARIANT_STOCK, tokens),
      stmt(db, TAKE_PRODUCT_STOCK, tokens),
      outboxStatement(db, events, now),
    ]);
  } catch (e) {
    if (!isConstraintError(e)) throw e;
    return undefined;
  }
  opts.events?.push(...committed(events, results));
  const inserted = results[customers.length ? 1 : 0];
  const rows = new Map(inserted.results.map((r) => [r.token as string, r]));
  const outcomes = new Map<number, OrderOutcome>();
  items.forEach(({ index }, i) => {
    const f = fields[i];
    const r = rows.get(f.token) as Record<string, unknown>;
    const subtotal = r.subtotal as number;
    outcomes.set(index, {
      ok: true,
      orderId: r.id as number,
      token: f.token,
      currency: f.currency,
      subtotal,
      shipping: f.shipping,
      discount: 0,
      total: r.total as number,
      tax: JSON.parse(r.tax as string) as TaxLine[],
      notices: [],
    });
  });
  return outcomes;
}
