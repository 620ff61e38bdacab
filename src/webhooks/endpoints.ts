import type { DB } from "../db/client";
import { runBatch, stmt } from "../platform/d1";
import { type EndpointInput, type Format, MAX_ENDPOINTS } from "./schema";
import { newSecret } from "./sign";

// The endpoint API's services (docs/webhooks.md, "Webhooks"). The secret is written once and read back only
// by the consumer that signs with it: no SELECT here names the column, so no answer can carry it.

const iso = (ms: unknown) => (typeof ms === "number" ? new Date(ms).toISOString() : null);

type Row = Record<string, unknown>;

function present(r: Row) {
  return {
    id: r.id as number,
    url: r.url as string,
    events: JSON.parse(r.events as string) as string[],
    format: r.format as Format,
    enabled: r.disabled_at === null,
    disabled_at: iso(r.disabled_at),
    disabled_reason: (r.disabled_reason as string | null) ?? null,
    created_at: iso(r.created_at) as string,
  };
}
export type EndpointOut = ReturnType<typeof present>;

const COLUMNS = "id, url, events, format, disabled_at, disabled_reason, created_at";

// The bound on endpoints is part of the INSERT, so concurrent registrations cannot pass it together.
const INSERT = `
INSERT INTO webhook_endpoints (url, events, format, secret, created_at)
SELECT ?1, ?2, ?3, ?4, ?5 WHERE (SELECT count(*) FROM webhook_endpoints) < ?6
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
  const { results } = await stmt(db, `SELECT ${COLUMNS} FROM webhook_endpoints ORDER BY id`).all<Row>();
  return results.map(present);
}

/** True when the endpoint existed; its delivery log goes with it (ON DELETE CASCADE). */
export async function deleteEndpoint(db: DB, id: number) {
  const row = await stmt(db, "DELETE FROM webhook_endpoints WHERE id = ? RETURNING id", id).first();
  return row !== null;
}

/** The latest attempts to one endpoint, newest first; undefined when there is no such endpoint. */
export async function listDeliveries(db: DB, endpointId: number, limit: number) {
  const [found, attempts] = await runBatch(db, [
    stmt(db, "SELECT id FROM webhook_endpoints WHERE id = ?", endpointId),
    stmt(
      db,
      `SELECT d.event_id, d.event_type, d.attempt, d.status, d.error, d.duration_ms, d.outcome, d.created_at,
         e.order_id, e.product_id
       FROM webhook_deliveries AS d LEFT JOIN events AS e ON e.id = d.event_id
       WHERE d.endpoint_id = ? ORDER BY d.id DESC LIMIT ?`,
      endpointId,
      limit,
    ),
  ]);
  if (!found.results.length) return undefined;
  return attempts.results.map((r) => ({
    event_id: r.event_id as string,
    event_type: r.event_type as string,
    // What the event is about, so a list names it (null for a test delivery).
    order_id: (r.order_id as number | null) ?? null,
    product_id: (r.product_id as number | null) ?? null,
    attempt: r.attempt as number,
    status: (r.status as number | null) ?? null,
    error: (r.error as string | null) ?? null,
    duration_ms: r.duration_ms as number,
    outcome: r.outcome as string,
    created_at: iso(r.created_at) as string,
  }));
}

/**
 * Sends one event to one endpoint again (the admin's Resend): a delivery job on the retry queue,
 * which attempts it at once and records the attempt like any other. False when the endpoint or
 * the event (a test delivery is no event) is unknown.
 */
export async function resendEvent(db: DB, retries: Queue, endpointId: number, eventId: string) {
  const [endpoint, event] = await runBatch(db, [
    stmt(db, "SELECT id FROM webhook_endpoints WHERE id = ?", endpointId),
    stmt(db, "SELECT id FROM events WHERE id = ?", eventId),
  ]);
  if (!endpoint.results.length || !event.results.length) return false;
  await retries.send({ event_id: eventId, endpoint_id: endpointId, attempt: 1 });
  return true;
}
