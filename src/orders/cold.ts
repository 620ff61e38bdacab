import type { DB } from "../db/client";
import { orderLines, orders, products, skus, variants } from "../db/schema";
import { sqlNames } from "../platform/columns";
import { isConstraintError, MAX_JSON_BYTES, runBatch, stmt } from "../platform/d1";
import { MAX_ORDER_TOTAL } from "../platform/fields";
import { versionBumpsOf } from "../products/version";
import { committed, newEvent, outboxStatement } from "../webhooks/outbox";
import type { OrderOutcome, PlanOptions } from "./create";
import { insertOrders, LINE_COLUMNS, UPSERT_CUSTOMERS } from "./insert";
import { orderFields } from "./plan";
import { MAX_QTY, type OrderInput } from "./schema";
import type { TaxLine } from "./totals";

// POST /v1/orders in ONE round trip when no cached catalog row can plan it (docs/orders.md, "Orders"): the
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

const P = sqlNames(products);
const V = sqlNames(variants);
const K = sqlNames(skus);
const O = sqlNames(orders);
const L = sqlNames(orderLines);
/** A variant's option value columns, in order. */
const OPTION_VALUES = [V.option1, V.option2, V.option3, V.option4, V.option5];

// Each line with what it resolves to: by variant_id, else by SKU, else by product_id. `bad` says
// the plan would refuse it, with the same conditions as resolve() in catalog.ts. Its columns are
// named as order_lines' (INSERT_LINES).
const RESOLVED = `
  SELECT l.k, l.o, l.qty, p.${P.id} AS ${L.productId}, v.${V.id} AS ${L.variantId},
    iif(v.${V.id} IS NULL, p.${P.sku}, v.${V.sku}) AS ${L.sku}, p.${P.title} AS ${L.title}, p.${P.taxRate} AS ${L.taxRate},
    coalesce(l.price, iif(v.${V.id} IS NULL, p.${P.price}, v.${V.price})) AS ${L.unitPrice},
    iif(v.${V.id} IS NULL, '[]', (SELECT json_group_array(json_object('name', n.value, 'value',
      CASE n.key ${OPTION_VALUES.slice(0, -1)
        .map((c, i) => `WHEN ${i} THEN v.${c}`)
        .join(" ")} ELSE v.${OPTION_VALUES[4]} END)) FROM json_each(p.${P.optionNames}) AS n)) AS ${L.options},
    CASE
      WHEN l.vid IS NOT NULL THEN v.${V.id} IS NULL OR p.${P.id} IS NULL OR (l.pid IS NOT NULL AND l.pid <> p.${P.id})
        OR (l.sku_in IS NOT NULL AND l.sku_in IS NOT v.${V.sku} AND l.sku_in IS NOT p.${P.sku})
      WHEN l.sku_in IS NOT NULL THEN k.${K.sku} IS NULL OR p.${P.id} IS NULL OR (l.pid IS NOT NULL AND l.pid <> p.${P.id})
        OR (k.${K.variantId} IS NOT NULL AND (l.vnull = 1 OR v.${V.id} IS NULL))
        OR (k.${K.variantId} IS NULL AND EXISTS (SELECT 1 FROM ${V.$} WHERE ${V.productId} = p.${P.id}))
      ELSE p.${P.id} IS NULL OR EXISTS (SELECT 1 FROM ${V.$} WHERE ${V.productId} = p.${P.id})
    END AS bad
  FROM (${LINES}) AS l
  LEFT JOIN ${K.$} AS k ON l.vid IS NULL AND k.${K.sku} = l.sku_in
  LEFT JOIN ${V.$} AS v ON v.${V.id} = iif(l.vid IS NOT NULL, l.vid, k.${K.variantId})
  LEFT JOIN ${P.$} AS p ON p.${P.id} = CASE WHEN l.vid IS NOT NULL THEN v.${V.productId}
    WHEN l.sku_in IS NOT NULL THEN k.${K.productId} ELSE l.pid END`;

// Lines of one item at one unit price are one line, at the place of the first (lines.ts addLine).
const MERGED = `
  SELECT o, ${L.productId}, ${L.variantId}, ${L.unitPrice}, min(${L.sku}) AS ${L.sku}, min(${L.title}) AS ${L.title},
    min(${L.taxRate}) AS ${L.taxRate}, min(${L.options}) AS ${L.options}, sum(qty) AS ${L.qty}, min(k) AS first
  FROM r GROUP BY o, ${L.productId}, ${L.variantId}, ${L.unitPrice}`;

// Each statement resolves the lines once (r) and merges them once (m), whatever uses them.
const WITH_LINES = `WITH r AS MATERIALIZED (${RESOLVED}), m AS MATERIALIZED (${MERGED})`;

// Whatever the JavaScript plan would refuse (?2: the orders' rows, for their shipping). The
// orders' INSERT writes a NULL status when it finds any, and the NOT NULL column fails the batch:
// the check costs no statement of its own.
const REFUSED = `
  SELECT 1 FROM r WHERE bad
  UNION ALL SELECT 1 FROM m WHERE ${L.qty} > ${MAX_QTY}
  UNION ALL SELECT 1 FROM (SELECT o, total(${L.qty} * ${L.unitPrice}) AS s FROM m GROUP BY o) AS t
    JOIN json_each(?2) AS x ON x.key = t.o WHERE t.s + (x.value->>'${O.shippingPrice}') > ${MAX_ORDER_TOTAL}`;

// Subtotal and the tax per rate, highest first: amount x rate / (100 + rate), half up (totals.ts).
const TOTALS = `
  SELECT o, sum(net) AS subtotal,
    json_group_array(json_object('rate', ${L.taxRate}, 'amount',
      (net * ${L.taxRate} * 2 + 100 + ${L.taxRate}) / (2 * (100 + ${L.taxRate}))) ORDER BY ${L.taxRate} DESC) AS tax
  FROM (SELECT o, ${L.taxRate}, sum(${L.qty} * ${L.unitPrice}) AS net FROM m GROUP BY o, ${L.taxRate})
  GROUP BY o`;

// ?2 the orders' rows, ?3 now.
const INSERT_ORDERS = `${WITH_LINES} ${insertOrders({
  subtotal: "t.subtotal",
  discount: "0",
  total: `t.subtotal + (o.value->>'${O.shippingPrice}')`,
  tax: "t.tax",
  from: `json_each(?2) AS o JOIN (${TOTALS}) AS t ON t.o = o.key`,
  now: "?3",
  status: `CASE WHEN EXISTS (${REFUSED}) THEN NULL ELSE 'unpaid' END`,
})} RETURNING ${O.id}, ${O.token}, ${O.subtotal}, ${O.total}, ${O.tax}`; // what the answer needs, with no statement of its own

// ?2 the tokens of the orders, by index. m's columns are order_lines' (RESOLVED, MERGED).
const INSERT_LINES = `${WITH_LINES}
  INSERT INTO ${L.$} (${L.orderId}, ${L.position}, ${LINE_COLUMNS.join(", ")})
  SELECT o.${O.id}, row_number() OVER (PARTITION BY m.o ORDER BY m.first), ${LINE_COLUMNS.map((c) => `m.${c}`).join(", ")}
  FROM m JOIN ${O.$} AS o ON o.${O.token} = ?2 ->> ('$[' || m.o || ']')`;

// The new orders' lines take their stock (?1 the tokens); the floors are CHECK constraints.
const NEW_LINES = `
  SELECT l.${L.productId} AS pid, l.${L.variantId} AS vid, l.${L.qty} AS qty
  FROM ${L.$} AS l JOIN ${O.$} AS r ON r.${O.id} = l.${L.orderId}
  WHERE r.${O.token} IN (SELECT value FROM json_each(?1))`;
const take = (table: { $: string; id: string }, stock: string, variant: boolean) => `
  UPDATE ${table.$} SET ${stock} = ${table.$}.${stock} - t.q
  FROM (SELECT ${variant ? "vid" : "pid"} AS id, sum(qty) AS q FROM (${NEW_LINES})
        WHERE vid IS ${variant ? "NOT " : ""}NULL GROUP BY 1) AS t
  WHERE ${table.$}.${table.id} = t.id`;
const TAKE_VARIANT_STOCK = take(V, V.qty, true);
const TAKE_PRODUCT_STOCK = take(P, P.stock, false);

type Items = { index: number; data: OrderInput }[];

/** Whether the SQL plan covers these orders; the rest take the read path (docs/orders.md, "Orders"). */
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
      // The products that sold move their versions and the catalogue's, once.
      ...versionBumpsOf(db, `SELECT DISTINCT pid AS id FROM (${NEW_LINES})`, tokens),
      outboxStatement(db, events, now),
    ]);
  } catch (e) {
    if (!isConstraintError(e)) throw e;
    return undefined;
  }
  opts.events?.push(...committed(events, results));
  const inserted = results[customers.length ? 1 : 0];
  const rows = new Map(inserted.results.map((r) => [r[O.token] as string, r]));
  const outcomes = new Map<number, OrderOutcome>();
  items.forEach(({ index }, i) => {
    const f = fields[i];
    const r = rows.get(f.token) as Record<string, unknown>;
    const subtotal = r[O.subtotal] as number;
    outcomes.set(index, {
      ok: true,
      orderId: r[O.id] as number,
      token: f.token,
      currency: f.currency,
      subtotal,
      shipping: f.shipping,
      discount: 0,
      total: r[O.total] as number,
      tax: JSON.parse(r[O.tax] as string) as TaxLine[],
      notices: [],
    });
  });
  return outcomes;
}
