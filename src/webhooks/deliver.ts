import { events, webhookDeliveries, webhookEndpoints } from "../db/schema";
import type { Bindings } from "../env";
import { sqlNames } from "../platform/columns";
import { getDb, runBatch, stmt } from "../platform/d1";
import { ATTEMPT_TIMEOUT_MS, type AttemptResult, attempt, delivered, requestOf } from "./attempt";
import { type Done, type Job, loadJobs, OUTCOMES } from "./jobs";
import { dataText, objectStatements, objectTexts } from "./payload";
import { signingKey } from "./sign";
import { urlProblem } from "./url";

// The queue consumer (docs/webhooks.md, "Webhooks") takes two kinds of message:
// - an event message `{event_id}` (dispatch, or the sweep): the event is marked dispatched and
//   attempted at once to every enabled endpoint that takes it; only the endpoints that failed get
//   a message of their own, so an event costs the free plan's daily Queues operations once;
// - a delivery message `{event_id, endpoint_id, attempt}`, on a queue of its own (RETRIES) and
//   retried along RETRY_DELAYS, so one endpoint's failures repeat no delivery to the others and a
//   receiver that hangs through its 10 s retries never holds up fresh events.
// Per invocation: two D1 round trips (load, record) and one between them reading the objects
// standard deliveries carry; at most FETCH_BUDGET fetches, six at a time and one at a time per
// endpoint. An endpoint that timed out has its other jobs of the invocation count as failed
// attempts without being made, and for SLOW_FOR_MS its new events go straight to the retries queue.

export type EventMessage = { event_id: string };
export type DeliveryMessage = { event_id: string; endpoint_id: number; attempt: number };

/** Seconds to wait after failed attempt n (index n - 1): about 3 days in all, then failed. */
export const RETRY_DELAYS = [5, 60, 300, 1800, 7200, 21600, 43200, 43200, 43200, 43200, 43200];
export const MAX_ATTEMPTS = RETRY_DELAYS.length + 1;
/** Attempts per invocation, the rest waiting for the next: the free plan allows 50 subrequests and 10 ms of CPU. */
export const FETCH_BUDGET = 25;
/**
 * Bytes of standard bodies signed per invocation (HMAC costs CPU per byte and endpoint); the jobs
 * past it wait for the next one. A payload of PAYLOAD_MAX_BYTES goes to one endpoint per
 * invocation; the first job is always attempted, whatever its size.
 */
export const SIGN_BYTES_BUDGET = 1024 * 1024;
/**
 * Order lines and variants of the objects read per invocation; the standard jobs whose objects do
 * not fit wait for the next one. Presenting costs CPU per line (ten events about orders of 500
 * lines took an invocation past 20 ms), so two such orders go in one; the first object is always read.
 */
export const OBJECT_ROWS_BUDGET = 1000;
/** A first attempt's wait: receivers should answer at once; a slower one gets a retry with ATTEMPT_TIMEOUT_MS. */
export const FIRST_ATTEMPT_TIMEOUT_MS = 3_000;
/** How long an endpoint that timed out gets its new events through the retries queue only. */
export const SLOW_FOR_MS = 60_000;
// Per isolate: a best effort that spares later invocations the same wait.
const slowUntil = new Map<number, number>();
const SKIPPED = "not attempted: the receiver timed out on another delivery just before";
// Workers keep at most six connections open per invocation; more would queue inside fetch, timing out.
const CONCURRENCY = 6;
// The free plan keeps a message 24 hours from its first send, however often it is retried: a
// retry that would end later goes out as a new message instead.
const RETENTION_MS = 20 * 3600 * 1000;
const TIMED_OUT = "timeout:";
const UTF8 = new TextEncoder();

const E = sqlNames(events);
const W = sqlNames(webhookEndpoints);
const D = sqlNames(webhookDeliveries);

// The EXISTS keeps an endpoint deleted during the attempts from failing the whole INSERT.
const RECORD = `
INSERT INTO ${D.$}
  (${D.endpointId}, ${D.eventId}, ${D.eventType}, ${D.attempt}, ${D.status}, ${D.error}, ${D.durationMs}, ${D.outcome}, ${D.createdAt})
SELECT j.value->>'w', j.value->>'e', j.value->>'t', j.value->>'a', j.value->>'s', j.value->>'x',
  j.value->>'d', j.value->>'o', ?2
FROM json_each(?1) j WHERE EXISTS (SELECT 1 FROM ${W.$} WHERE ${W.id} = j.value->>'w')`;

// Every event message of the batch has had its first attempts made or deferred: the sweep need not send it again.
const FANNED_OUT = `
UPDATE ${E.$} SET ${E.fannedOutAt} = ?2 WHERE ${E.fannedOutAt} IS NULL AND ${E.id} IN (SELECT value FROM json_each(?1))`;

const DISABLE = `
UPDATE ${W.$} SET ${W.disabledAt} = ?2, ${W.disabledReason} = 'the receiver answered 410 Gone'
WHERE ${W.disabledAt} IS NULL AND ${W.id} IN (SELECT value FROM json_each(?1))`;

const isEventMessage = (b: unknown): b is EventMessage =>
  typeof b === "object" && b !== null && typeof (b as EventMessage).event_id === "string";
const isDeliveryMessage = (b: unknown): b is DeliveryMessage =>
  isEventMessage(b) &&
  Number.isSafeInteger((b as DeliveryMessage).endpoint_id) &&
  Number.isSafeInteger((b as DeliveryMessage).attempt);

/**
 * Runs the jobs at most CONCURRENCY at a time and one at a time per endpoint, so a receiver that hangs
 * holds one connection, not six; once one of an endpoint's attempts has timed out, its jobs that
 * have not started are handed back as skipped instead of attempted.
 */
async function byEndpoint(jobs: Job[], fn: (j: Job) => Promise<Done>): Promise<{ done: Done[]; skipped: Job[] }> {
  const lanes = new Map<number, Job[]>();
  for (const j of jobs) {
    const lane = lanes.get(j.endpointId);
    if (lane) lane.push(j);
    else lanes.set(j.endpointId, [j]);
  }
  const queue = [...lanes.values()];
  const done: Done[] = [];
  const skipped: Job[] = [];
  const worker = async () => {
    for (let lane = queue.shift(); lane; lane = queue.shift()) {
      for (const [i, job] of lane.entries()) {
        const d = await fn(job);
        done.push(d);
        if (d.error?.startsWith(TIMED_OUT)) {
          skipped.push(...lane.slice(i + 1));
          break;
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, queue.length) }, worker));
  return { done, skipped };
}

function doneOf(job: Job, r: AttemptResult): Done {
  const outcome = delivered(r)
    ? "delivered"
    : r.status === 410
      ? "disabled"
      : job.attempt >= MAX_ATTEMPTS
        ? "failed"
        : "retrying";
  return { ...job, ...r, outcome };
}

// Importing a key costs more CPU than signing with it: keys live as long as the isolate (the
// resolved CryptoKey, not a promise of another invocation's). At most MAX_ENDPOINTS secrets are
// live at a time; the bound only guards against the keys of deleted endpoints piling up.
const keys = new Map<string, CryptoKey>();
async function keyOf(secret: string): Promise<CryptoKey> {
  let k = keys.get(secret);
  if (!k) {
    if (keys.size >= 64) keys.clear();
    k = await signingKey(secret);
    keys.set(secret, k);
  }
  return k;
}

export type DeliverOptions = { timeoutMs?: number; firstTimeoutMs?: number };

/** The `queue` handler: delivers a batch of event and delivery messages (see the top of this file). */
export async function deliverBatch(batch: MessageBatch<unknown>, env: Bindings, opts: DeliverOptions = {}) {
  const db = getDb(env.DB);
  const now = Date.now();
  const events: Message<unknown>[] = [];
  const direct: Message<DeliveryMessage>[] = [];
  for (const msg of batch.messages) {
    if (isDeliveryMessage(msg.body)) direct.push(msg as Message<DeliveryMessage>);
    else if (isEventMessage(msg.body)) events.push(msg);
    else msg.ack(); // nothing this Worker sends: retrying it would not make it readable
  }

  // A failure here throws, and Queues redelivers the whole batch: nothing was attempted yet.
  const eventIds = events.map((m) => (m.body as EventMessage).event_id);
  const jobs = await loadJobs(db, events, direct, eventIds, now);

  const allowLocal = env.ALLOW_LOCAL_WEBHOOKS === "true";
  // Checked again at delivery: the rules may be stricter than when the endpoint was registered.
  // Once per URL: a batch's jobs share its endpoints (10 events x 20 endpoints, 20 URLs).
  const problems = new Map<string, string | undefined>();
  const ready: Job[] = [];
  const deferred: Job[] = [];
  const refused: Done[] = [];
  for (const job of jobs) {
    if (!problems.has(job.url)) problems.set(job.url, urlProblem(job.url, allowLocal));
    const problem = problems.get(job.url);
    if (problem)
      refused.push({ ...job, status: null, error: `url refused: ${problem}`, durationMs: 0, outcome: "failed" });
    else if (job.fanOut && (slowUntil.get(job.endpointId) ?? 0) > now) deferred.push(job);
    else ready.push(job);
  }
  // A failure reading the objects throws too: nothing was attempted yet.
  const { run, later } = await pick(db, env, ready);
  deferred.push(...later);
  const { done: attempted, skipped } = await byEndpoint(run, async (job): Promise<Done> => {
    const wait = job.fanOut
      ? (opts.firstTimeoutMs ?? FIRST_ATTEMPT_TIMEOUT_MS)
      : (opts.timeoutMs ?? ATTEMPT_TIMEOUT_MS);
    const r = await attempt(job, await keyOf(job.secret), wait);
    if (r.error?.startsWith(TIMED_OUT)) {
      if (slowUntil.size >= 64) slowUntil.clear();
      slowUntil.set(job.endpointId, Date.now() + SLOW_FOR_MS);
    }
    return doneOf(job, r);
  });
  // Behind a receiver that just timed out: failed attempts, so its retries keep their schedule.
  const behind = skipped.map((j) => doneOf(j, { status: null, error: SKIPPED, durationMs: 0 }));
  const all = [...attempted, ...behind, ...refused];

  await record(db, all, eventIds, Date.now());
  await settle(env, events, direct, all, deferred, Date.now());
  console.log(
    JSON.stringify({
      level: "info",
      msg: "webhook deliveries",
      messages: batch.messages.length,
      attempts: attempted.length,
      skipped: behind.length,
      ...Object.fromEntries(OUTCOMES.map((o) => [o, all.filter((d) => d.outcome === o).length])),
      deferred: deferred.length,
    }),
  );
}

/**
 * Which of the ready jobs this invocation attempts, with their bodies, and which wait for the next
 * one: the objects of the standard jobs among the first FETCH_BUDGET are read while their rows fit
 * OBJECT_ROWS_BUDGET (the first always), then jobs are taken in order while FETCH_BUDGET and
 * SIGN_BYTES_BUDGET allow.
 */
async function pick(db: ReturnType<typeof getDb>, env: Bindings, ready: Job[]) {
  const read = new Set<string>();
  let rows = 0;
  for (const job of ready.slice(0, FETCH_BUDGET)) {
    if (job.format !== "standard" || read.has(job.eventId)) continue;
    if (read.size && rows + job.objectRows > OBJECT_ROWS_BUDGET) continue;
    read.add(job.eventId);
    rows += job.objectRows;
  }
  const objects = read.size ? objectTexts(env, await runBatch(db, objectStatements(db, env, [...read]))) : undefined;
  const run: Job[] = [];
  const later: Job[] = [];
  let signed = 0;
  // A standard body is the same for every endpoint of its event: encoded once, its bytes are what
  // each attempt signs and sends (encoding it per attempt, twice, was a third of the invocation's
  // CPU for orders of 500 lines) and what SIGN_BYTES_BUDGET counts.
  const encodedOf = new Map<string, Uint8Array>();
  for (const job of ready) {
    const data = objects && job.format === "standard" && read.has(job.eventId) ? dataText(objects, job) : undefined;
    if (data !== undefined && !encodedOf.has(job.eventId)) {
      encodedOf.set(job.eventId, UTF8.encode(requestOf({ ...job, data }).body));
    }
    const encoded = data === undefined ? undefined : encodedOf.get(job.eventId);
    const bytes = encoded?.length ?? 0;
    if (job.format === "standard" && data === undefined) later.push(job);
    else if (run.length < FETCH_BUDGET && (!run.length || signed + bytes <= SIGN_BYTES_BUDGET)) {
      run.push({ ...job, data, encoded });
      signed += bytes;
    } else later.push(job);
  }
  return { run, later };
}

/** Records every attempt, disables the endpoints that answered 410 and marks the events fanned out: one round trip. */
async function record(db: ReturnType<typeof getDb>, done: Done[], eventIds: string[], now: number) {
  if (!done.length && !eventIds.length) return;
  const rows = done.map((d) => ({
    w: d.endpointId,
    e: d.eventId,
    t: d.type,
    a: d.attempt,
    s: d.status,
    x: d.error,
    d: d.durationMs,
    o: d.outcome,
  }));
  const gone = [...new Set(done.filter((d) => d.outcome === "disabled").map((d) => d.endpointId))];
  try {
    await runBatch(db, [
      stmt(db, RECORD, JSON.stringify(rows), now),
      stmt(db, DISABLE, JSON.stringify(gone), now),
      stmt(db, FANNED_OUT, JSON.stringify(eventIds), now),
    ]);
  } catch (e) {
    // The deliveries happened, and throwing would send every message again at once. The events
    // stay not fanned out, so the sweep sends them again (receivers dedupe on webhook-id).
    console.error(JSON.stringify({ level: "warn", msg: "webhook deliveries not recorded", error: String(e) }));
  }
}

/** Acks, retries and follow-up messages for every message of the batch. */
async function settle(
  env: Bindings,
  events: Message<unknown>[],
  direct: Message<DeliveryMessage>[],
  done: Done[],
  deferred: Job[],
  now: number,
) {
  const next = (j: Job, attemptNo: number, delaySeconds: number): MessageSendRequest<DeliveryMessage> => ({
    body: { event_id: j.eventId, endpoint_id: j.endpointId, attempt: attemptNo },
    delaySeconds,
  });
  // A job left for the next invocation goes as a message of its own with the attempt it would have
  // been: retried instead, its redelivery would count as an attempt (loadJobs), and a backlog
  // deferred again and again would run through the retry schedule without being attempted.
  const followUps = deferred.map((j) => next(j, j.attempt, 0));
  const handled = new Set<Message<unknown>>();
  for (const d of done) {
    if (d.outcome !== "retrying") continue;
    const delay = RETRY_DELAYS[d.attempt - 1];
    if (!d.fanOut && now - d.msg.timestamp.getTime() + delay * 1000 < RETENTION_MS) {
      d.msg.retry({ delaySeconds: delay });
      handled.add(d.msg);
    } else followUps.push(next(d, d.attempt + 1, delay));
  }
  let sent = true;
  try {
    for (let i = 0; i < followUps.length; i += 100) await env.RETRIES.sendBatch(followUps.slice(i, i + 100));
  } catch (e) {
    sent = false;
    console.error(JSON.stringify({ level: "warn", msg: "webhook retries not queued", error: String(e) }));
  }
  // Without its follow-ups queued, a message is retried whole: at least once, never lost.
  for (const m of [...events, ...direct]) {
    if (handled.has(m)) continue;
    if (sent) m.ack();
    else m.retry({ delaySeconds: RETRY_DELAYS[0] });
  }
}
