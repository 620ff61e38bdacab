import { apiKeys, events, orderLines, orders } from "../db/schema";
import type { Bindings } from "../env";
import { holds } from "../orders/hold";
import { presentOrder } from "../orders/read";
import { sqlNames } from "../platform/columns";
import { type DB, rowMapper, stmt } from "../platform/d1";
import { productTexts, productTextsSql } from "../products/list";
import { useStoreUrl } from "../products/present";

// The objects a standard delivery carries in `data` (docs/webhooks.md, "Payloads"): the order as
// GET /v1/orders/{id} answers it, the product as GET /v1/products?product_id=&include_details=true
// does, read when the batch is delivered in one round trip whatever the number of events. Products
// are SQLite's JSON text, never parsed here; an object past PAYLOAD_MAX_BYTES travels as its id and
// `truncated: true`. Queue messages carry event ids only: a message holds at most 128 KB.

/** The most `data` a delivery carries, in UTF-8 bytes: an order of 2,000 lines fits (about 0.5 MB). */
export const PAYLOAD_MAX_BYTES = 1024 * 1024;
const utf8 = new TextEncoder();

/** Whether `text` passes PAYLOAD_MAX_BYTES in UTF-8 (encoded only when its length cannot tell). */
const tooLarge = (text: string) =>
  text.length > PAYLOAD_MAX_BYTES ||
  (text.length * 3 > PAYLOAD_MAX_BYTES && utf8.encode(text).length > PAYLOAD_MAX_BYTES);

const E = sqlNames(events);
const O = sqlNames(orders);
const L = sqlNames(orderLines);
const K = sqlNames(apiKeys);

// The events' objects, by the ids of the events the batch delivers (?1, a JSON array).
const EVENT_IDS = "SELECT value FROM json_each(?1)";
const ORDERS_OF = `SELECT ${E.orderId} FROM ${E.$} WHERE ${E.id} IN (${EVENT_IDS}) AND ${E.orderId} IS NOT NULL`;
const PRODUCTS_OF = `SELECT ${E.productId} FROM ${E.$} WHERE ${E.id} IN (${EVENT_IDS}) AND ${E.productId} IS NOT NULL`;
const ORDERS = `SELECT o.*, (SELECT json_object('id', k.${K.id}, 'name', k.${K.name}) FROM ${K.$} AS k WHERE k.${K.id} = o.${O.keyId})
  AS creator FROM ${O.$} AS o WHERE o.${O.id} IN (${ORDERS_OF})`;
const LINES = `SELECT l.* FROM ${L.$} AS l WHERE l.${L.orderId} IN (${ORDERS_OF}) ORDER BY l.${L.orderId}, l.${L.position}`;

/** The three statements that read the objects of the events `eventIds`. */
export function objectStatements(db: DB, env: Pick<Bindings, "STORE_URL">, eventIds: string[]) {
  const ids = JSON.stringify(eventIds);
  // A product's url is built in its SQL from STORE_URL.
  useStoreUrl(env.STORE_URL);
  return [stmt(db, ORDERS, ids), stmt(db, LINES, ids), stmt(db, productTextsSql(PRODUCTS_OF, PAYLOAD_MAX_BYTES), ids)];
}

const toOrder = rowMapper(orders);
const toLine = rowMapper(orderLines);

/** `data` texts by resource: "order:<id>" and "product:<id>". */
export type Objects = Map<string, string>;

/** The objects statements' results as the `data` texts of standard payloads. */
export function objectTexts(
  env: Pick<Bindings, "UNPAID_ORDER_HOLD_MINUTES" | "STOREFRONT_HOLD_MINUTES">,
  [os, ls, ps]: D1Result<Record<string, unknown>>[],
): Objects {
  const out: Objects = new Map();
  const lines = new Map<unknown, ReturnType<typeof toLine>[]>();
  for (const l of ls.results) {
    const list = lines.get(l[L.orderId]);
    if (list) list.push(toLine(l));
    else lines.set(l[L.orderId], [toLine(l)]);
  }
  const hold = holds(env);
  for (const o of os.results) {
    const order = presentOrder(toOrder(o), lines.get(o[O.id]) ?? [], hold);
    const text = JSON.stringify(o.creator ? { ...order, key: JSON.parse(o.creator as string) } : order);
    out.set(`order:${o[O.id]}`, tooLarge(text) ? stub("order", o[O.id], "truncated") : text);
  }
  for (const [id, text] of productTexts(ps.results)) {
    // product_id first, as the thin payload had it: receivers that read only the id keep working.
    out.set(`product:${id}`, text === null ? stub("product", id, "truncated") : `{"product_id":${id},${text.slice(1)}`);
  }
  return out;
}

const stub = (what: string, id: unknown, why: "truncated" | "deleted") => `{"${what}_id":${id},"${why}":true}`;

/** The `data` text of an event's standard payload: its object, or where it is gone its id and `deleted: true`. */
export function dataText(objects: Objects, t: { type: string; orderId: number | null; productId: number | null }) {
  const [what, id] = t.type.startsWith("order.") ? ["order", t.orderId] : ["product", t.productId];
  return objects.get(`${what}:${id}`) ?? stub(what, id, "deleted");
}
