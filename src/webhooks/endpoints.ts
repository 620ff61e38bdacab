import { eq, getTableColumns } from "drizzle-orm";
import { events, webhookDeliveries, webhookEndpoints } from "../db/schema";
import type { Bindings } from "../env";
import type { Carried } from "../keys/scopes";
import { sqlNames } from "../platform/columns";
import { type DB, rowMapper, runBatch, stmt } from "../platform/d1";
import { requestOf } from "./attempt";
import { EVENTS, eventPart, takes } from "./jobs";
import { dataText, objectStatements, objectTexts } from "./payload";
import { type EndpointInput, type Format, MAX_ENDPOINTS } from "./schema";
import { newSecret } from "./sign";

// The endpoint API's services (docs/webhooks.md, "Webhooks"). The secret is written once and read back only
// by the consumer that signs with it: no SELECT here names the column, so no answer can carry it.

const W = sqlNames(webhookEndpoints);
const D = sqlNames(webhookDeliveries);
const E = sqlNames(events);

const iso = (ms: unknown) => (typeof ms === "number" ? new Date(ms).toISOString() : null);

const w = webhookEndpoints;
/** What an endpoint's answer shows: every column but its secret. */
const { secret: _secret, ...SHOWN } = getTableColumns(webhookEndpoints);
type Row = Omit<typeof webhookEndpoints.$inferSelect, "secret">;

function present(r: Row) {
  return {
    id: r.id,
    url: r.url,
    events: JSON.parse(r.events) as string[],
    format: r.format as Format,
    enabled: r.disabledAt === null,
    disabled_at: iso(r.disabledAt),
    disabled_reason: r.disabledReason ?? null,
    created_at: iso(r.createdAt) as string,
  };
}

const COLUMNS = Object.values(SHOWN)
  .map((c) => c.name)
  .join(", ");
const toRow = rowMapper(webhookEndpoints);

// The bound on endpoints is part of the INSERT, so concurrent registrations cannot pass it together.
const INSERT = `
INSERT INTO ${W.$} (${W.url}, ${W.events}, ${W.format}, ${W.secret}, ${W.createdAt})
SELECT ?1, ?2, ?3, ?4, ?5 WHERE (SELECT count(*) FROM ${W.$}) < ?6
RETURNING ${COLUMNS}`;

/** The new endpoint with its secret, or undefined when MAX_ENDPOINTS already exist. */
export async function createEndpoint(db: DB, input: EndpointInput, now: number) {
  const secret = newSecret();
  const row = await stmt(
    db,
    INSERT,
    input.url,
    JSON.stringify(input.events),
    input.format ?? "standard",
    secret,
    now,
    MAX_ENDPOINTS,
  ).first();
  return row ? { ...present(toRow(row)), secret } : undefined;
}

export async function listEndpoints(db: DB) {
  const rows = await db.select(SHOWN).from(w).orderBy(w.id).all();
  return rows.map(present);
}

/** True when the endpoint existed; its delivery log goes with it (ON DELETE CASCADE). */
export async function deleteEndpoint(db: DB, id: number) {
  const row = await db.delete(w).where(eq(w.id, id)).returning({ id: w.id }).get();
  return row !== undefined;
}

const ENDPOINT = `SELECT ${W.id} FROM ${W.$} WHERE ${W.id} = ?`;
// Named and ordered as the answer shows them; order_id and product_id say what the event is about
// (null for a test delivery).
const DELIVERIES = `
SELECT d.${D.eventId} AS event_id, d.${D.eventType} AS event_type, e.${E.orderId} AS order_id,
  e.${E.productId} AS product_id, d.${D.attempt} AS attempt, d.${D.status} AS status, d.${D.error} AS error,
  d.${D.durationMs} AS duration_ms, d.${D.outcome} AS outcome, d.${D.createdAt} AS created_at
FROM ${D.$} AS d LEFT JOIN ${E.$} AS e ON e.${E.id} = d.${D.eventId}
WHERE d.${D.endpointId} = ? ORDER BY d.${D.id} DESC LIMIT ?`;

/** The latest attempts to one endpoint, newest first; undefined when there is no such endpoint. */
export async function listDeliveries(db: DB, endpointId: number, limit: number) {
  const [found, attempts] = await runBatch(db, [
    stmt(db, ENDPOINT, endpointId),
    stmt(db, DELIVERIES, endpointId, limit),
  ]);
  if (!found.results.length) return undefined;
  return attempts.results.map((r) => ({ ...r, created_at: iso(r.created_at) as string }));
}

/** The endpoint ?1 and the event ?2, when that endpoint takes that event. */
const TAKEN = `SELECT w.${W.url} AS url, w.${W.format} AS format FROM ${W.$} w JOIN ${E.$} e ON e.${E.id} = ?2
WHERE w.${W.id} = ?1 AND ${takes("w", "e")}`;

/**
 * Sends one event to one endpoint again (the admin's Resend), as a delivery job on the retry queue.
 * False when the endpoint or the event is unknown, or the endpoint never took the event: a resend
 * repeats only what fan-out owed that endpoint.
 */
export async function resendEvent(db: DB, retries: Queue, endpointId: number, eventId: string) {
  if (!(await stmt(db, TAKEN, endpointId, eventId).first())) return false;
  await retries.send({ event_id: eventId, endpoint_id: endpointId, attempt: 1 });
  return true;
}

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
