import { apiKeys, events as eventsTable, orderLines, variants, webhookEndpoints } from "../db/schema";
import { sqlNames } from "../platform/columns";
import { type DB, runBatch, stmt } from "../platform/d1";
import type { AttemptResult, EventKey, Target } from "./attempt";
import type { DeliveryMessage, EventMessage } from "./deliver";

// The queue consumer's read (./deliver.ts): a batch's messages to its jobs, one event to one endpoint
// each, in one round trip that also marks the events dispatched.

export const OUTCOMES = ["delivered", "retrying", "failed", "disabled"] as const;
export type Outcome = (typeof OUTCOMES)[number];
export type Job = Target & {
  secret: string;
  attempt: number;
  msg: Message<unknown>;
  fanOut: boolean;
  /** The event's object's lines or variants (deliver.ts, OBJECT_ROWS_BUDGET). */
  objectRows: number;
};
export type Done = Job & AttemptResult & { outcome: Outcome };

const E = sqlNames(eventsTable);
const W = sqlNames(webhookEndpoints);
const K = sqlNames(apiKeys);
const L = sqlNames(orderLines);
const V = sqlNames(variants);

/** SQL: whether endpoint `w` takes event `e`, of one of its types since it was registered (fan-out, view, resend). */
export const takes = (w: string, e: string) =>
  `${w}.${W.createdAt} <= ${e}.${E.createdAt}
  AND EXISTS (SELECT 1 FROM json_each(${w}.${W.events}) t WHERE t.value IN ('*', ${e}.${E.type}))`;

// One row per (event, endpoint) to deliver, the pair only: the event's and the endpoint's columns
// come once each (EVENTS, ENDPOINTS), since D1 builds an object of every row's every column (with
// 10 columns a pair, a full batch of 200 pairs took twice the CPU: bench/README.md, ninth round).
const FAN_OUT = `
SELECT e.${E.id} AS event_id, w.${W.id} AS endpoint_id
FROM ${E.$} e JOIN ${W.$} w ON w.${W.disabledAt} IS NULL AND ${takes("w", "e")}
WHERE e.${E.id} IN (SELECT value FROM json_each(?1))
ORDER BY e.${E.createdAt}, w.${W.id}`;

// A deleted or disabled endpoint yields no row: its pending retries end quietly.
const DIRECT = `
SELECT j.key AS i, e.${E.id} AS event_id, w.${W.id} AS endpoint_id
FROM json_each(?1) j
JOIN ${E.$} e ON e.${E.id} = j.value->>'event_id'
JOIN ${W.$} w ON w.${W.id} = j.value->>'endpoint_id' AND w.${W.disabledAt} IS NULL`;

/** The events' rows by id (?1, a JSON array), with the key that caused each and its object's lines or variants. */
export const EVENTS = `
SELECT e.${E.id} AS eventId, e.${E.type} AS type, e.${E.orderId} AS orderId, e.${E.productId} AS productId,
  e.${E.createdAt} AS eventAt,
  (SELECT json_object('id', k.${K.id}, 'name', k.${K.name}) FROM ${K.$} k WHERE k.${K.id} = e.${E.keyId}) AS key,
  iif(e.${E.type} LIKE 'order.%',
    (SELECT count(*) FROM ${L.$} l WHERE l.${L.orderId} = e.${E.orderId}),
    (SELECT count(*) FROM ${V.$} v WHERE v.${V.productId} = e.${E.productId})) AS objectRows
FROM ${E.$} e WHERE e.${E.id} IN (SELECT value FROM json_each(?1))`;

// Every enabled endpoint: at most MAX_ENDPOINTS rows.
const ENDPOINTS = `SELECT ${W.id} AS endpointId, ${W.url} AS url, ${W.format} AS format, ${W.secret} AS secret
FROM ${W.$} WHERE ${W.disabledAt} IS NULL`;

const MARK_DISPATCHED = `
UPDATE ${E.$} SET ${E.dispatchedAt} = ?2 WHERE ${E.dispatchedAt} IS NULL AND ${E.id} IN (SELECT value FROM json_each(?1))`;

type Row = Record<string, unknown>;

// What the jobs of one event, or of one endpoint, share: built once each, not once a pair.
type EventPart = Pick<Job, "eventId" | "type" | "orderId" | "productId" | "eventAt" | "key" | "objectRows">;
type EndpointPart = Pick<Job, "endpointId" | "url" | "format" | "secret">;

/** An EVENTS row, its columns named as the job's fields, with its key parsed. */
export const eventPart = (event: Row): EventPart => ({
  ...(event as EventPart),
  key: typeof event.key === "string" ? (JSON.parse(event.key) as EventKey) : null,
});

/**
 * Marks the event messages' events dispatched and reads every pair to deliver: theirs with the
 * enabled endpoints that take them, and each delivery message's own.
 */
export async function loadJobs(
  db: DB,
  events: Message<unknown>[],
  direct: Message<DeliveryMessage>[],
  eventIds: string[],
  now: number,
): Promise<Job[]> {
  const allIds = [...eventIds, ...direct.map((m) => m.body.event_id)];
  const [, fanRows, directRows, eventRows, endpointRows] = await runBatch(db, [
    stmt(db, MARK_DISPATCHED, JSON.stringify(eventIds), now),
    stmt(db, FAN_OUT, JSON.stringify(eventIds)),
    stmt(db, DIRECT, JSON.stringify(direct.map((m) => m.body))),
    stmt(db, EVENTS, JSON.stringify(allIds)),
    stmt(db, ENDPOINTS),
  ]);
  const eventOf = new Map(eventRows.results.map((r) => [r.eventId, eventPart(r)]));
  const endpointOf = new Map(endpointRows.results.map((r) => [r.endpointId, r as EndpointPart]));
  const byEvent = new Map(events.map((m) => [(m.body as EventMessage).event_id, m]));
  // Delivery messages first, so the budget goes to them: their retries are already late. Every
  // pair's event and endpoint were read in the same batch (one transaction), so both are found.
  const jobs: Job[] = [];
  const pair = (r: Row, msg: Message<unknown>, attemptNo: number, fanOut: boolean) => {
    const event = eventOf.get(r.event_id);
    const endpoint = endpointOf.get(r.endpoint_id);
    if (event && endpoint) jobs.push({ ...event, ...endpoint, attempt: attemptNo, msg, fanOut });
  };
  for (const r of directRows.results) {
    const msg = direct[r.i as number];
    // Attempts so far: the number the message was sent with, plus its redeliveries.
    pair(r, msg, msg.body.attempt + msg.attempts - 1, false);
  }
  for (const r of fanRows.results) {
    const msg = byEvent.get(r.event_id as string);
    if (msg) pair(r, msg, 1, true);
  }
  return jobs;
}
