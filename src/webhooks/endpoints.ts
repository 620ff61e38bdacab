import type { DB } from "../db/client";
import { events, webhookDeliveries, webhookEndpoints } from "../db/schema";
import { sqlNames } from "../platform/columns";
import { runBatch, stmt } from "../platform/d1";
import { type EndpointInput, type Format, MAX_ENDPOINTS } from "./schema";
import { newSecret } from "./sign";

// The endpoint API's services (docs/webhooks.md, "Webhooks"). The secret is written once and read back only
// by the consumer that signs with it: no SELECT here names the column, so no answer can carry it.

const W = sqlNames(webhookEndpoints);
const D = sqlNames(webhookDeliveries);
const E = sqlNames(events);

const iso = (ms: unknown) => (typeof ms === "number" ? new Date(ms).toISOString() : null);

type Row = Record<string, unknown>;

function present(r: Row) {
  return {
    id: r[W.id] as number,
    url: r[W.url] as string,
    events: JSON.parse(r[W.events] as string) as string[],
    format: r[W.format] as Format,
    enabled: r[W.disabledAt] === null,
    disabled_at: iso(r[W.disabledAt]),
    disabled_reason: (r[W.disabledReason] as string | null) ?? null,
    created_at: iso(r[W.createdAt]) as string,
  };
}
export type EndpointOut = ReturnType<typeof present>;

const COLUMNS = [W.id, W.url, W.events, W.format, W.disabledAt, W.disabledReason, W.createdAt].join(", ");

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
  ).first<Row>();
  return row ? { ...present(row), secret } : undefined;
}

export async function listEndpoints(db: DB) {
  const { results } = await stmt(db, `SELECT ${COLUMNS} FROM ${W.$} ORDER BY ${W.id}`).all<Row>();
  return results.map(present);
}

/** True when the endpoint existed; its delivery log goes with it (ON DELETE CASCADE). */
export async function deleteEndpoint(db: DB, id: number) {
  const row = await stmt(db, `DELETE FROM ${W.$} WHERE ${W.id} = ? RETURNING ${W.id}`, id).first();
  return row !== null;
}

const ENDPOINT = `SELECT ${W.id} FROM ${W.$} WHERE ${W.id} = ?`;
const DELIVERIES = `
SELECT d.${D.eventId}, d.${D.eventType}, d.${D.attempt}, d.${D.status}, d.${D.error}, d.${D.durationMs}, d.${D.outcome},
  d.${D.createdAt}, e.${E.orderId}, e.${E.productId}
FROM ${D.$} AS d LEFT JOIN ${E.$} AS e ON e.${E.id} = d.${D.eventId}
WHERE d.${D.endpointId} = ? ORDER BY d.${D.id} DESC LIMIT ?`;

/** The latest attempts to one endpoint, newest first; undefined when there is no such endpoint. */
export async function listDeliveries(db: DB, endpointId: number, limit: number) {
  const [found, attempts] = await runBatch(db, [
    stmt(db, ENDPOINT, endpointId),
    stmt(db, DELIVERIES, endpointId, limit),
  ]);
  if (!found.results.length) return undefined;
  return attempts.results.map((r) => ({
    event_id: r[D.eventId] as string,
    event_type: r[D.eventType] as string,
    // What the event is about, so a list names it (null for a test delivery).
    order_id: (r[E.orderId] as number | null) ?? null,
    product_id: (r[E.productId] as number | null) ?? null,
    attempt: r[D.attempt] as number,
    status: (r[D.status] as number | null) ?? null,
    error: (r[D.error] as string | null) ?? null,
    duration_ms: r[D.durationMs] as number,
    outcome: r[D.outcome] as string,
    created_at: iso(r[D.createdAt]) as string,
  }));
}

/**
 * Sends one event to one endpoint again (the admin's Resend): a delivery job on the retry queue,
 * which attempts it at once and records the attempt like any other. False when the endpoint or
 * the event (a test delivery is no event) is unknown.
 */
export async function resendEvent(db: DB, retries: Queue, endpointId: number, eventId: string) {
  const [endpoint, event] = await runBatch(db, [
    stmt(db, ENDPOINT, endpointId),
    stmt(db, `SELECT ${E.id} FROM ${E.$} WHERE ${E.id} = ?`, eventId),
  ]);
  if (!endpoint.results.length || !event.results.length) return false;
  await retries.send({ event_id: eventId, endpoint_id: endpointId, attempt: 1 });
  return true;
}
