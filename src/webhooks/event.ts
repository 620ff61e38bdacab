import type { DB } from "../db/client";
import type { Bindings } from "../env";
import type { Carried } from "../keys/scopes";
import { runBatch, stmt } from "../platform/d1";
import { requestOf } from "./attempt";
import { TAKEN } from "./endpoints";
import { EVENTS, eventPart } from "./jobs";
import { dataText, objectStatements, objectTexts } from "./payload";

// What a delivery of one event to one endpoint carries (docs/webhooks.md, "Reading a delivery"), for
// the admin's payload view: not stored, but what a delivery made now sends, read in one round trip
// by the consumer's own statements.

/**
 * The event as the endpoint receives it: what it is about, and its JSON text, built once the caller
 * has checked that the credential may read that resource. Undefined, alike, when the endpoint or the
 * event is unknown or the endpoint never took the event (jobs.ts, `takes`).
 */
export async function eventDelivery(
  db: DB,
  env: Pick<Bindings, "STORE_URL" | "UNPAID_ORDER_HOLD_MINUTES" | "STOREFRONT_HOLD_MINUTES">,
  endpointId: number,
  eventId: string,
): Promise<{ about: Carried; text: () => string } | undefined> {
  const [endpoint, event, ...objects] = await runBatch(db, [
    stmt(db, TAKEN, endpointId, eventId),
    stmt(db, EVENTS, JSON.stringify([eventId])),
    ...objectStatements(db, env, [eventId]),
  ]);
  const ep = endpoint.results[0];
  const row = event.results[0];
  if (!ep || !row) return undefined;
  const ev = eventPart(row);
  const format = ep.format as string;
  const text = () => {
    const data = dataText(objectTexts(env, objects), ev);
    const req = requestOf({ ...ev, endpointId, url: ep.url as string, format, data });
    const head = JSON.stringify({
      event_id: ev.eventId,
      event_type: ev.type,
      order_id: ev.orderId,
      product_id: ev.productId,
      format,
      method: req.method,
      url: req.url,
    });
    return `${head.slice(0, -1)},"payload":${req.body || "null"}}`;
  };
  return { about: ev.type.startsWith("order.") ? "order" : "product", text };
}
