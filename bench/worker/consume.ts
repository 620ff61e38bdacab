import { Hono } from "hono";
import type { AppEnv, Bindings } from "../../src/env";
import { auth } from "../../src/keys/auth";
import { deliverBatch, FETCH_BUDGET } from "../../src/webhooks/deliver";
import { MAX_ENDPOINTS } from "../../src/webhooks/schema";
import { newSecret } from "../../src/webhooks/sign";
import { countedDb, countHeaders, resetCounts } from "./count";

/**
 * The webhook consumer case (bench/README.md, "Method"): one `queue` invocation of the store, as
 * Queues makes it, on a full batch. MAX_ENDPOINTS endpoints subscribed to every event and
 * max_batch_size (wrangler.toml) event messages make 200 deliveries, so the invocation spends its
 * whole FETCH_BUDGET and queues the rest. The receivers are a stub in place of the global fetch
 * for the call's duration; everything else (D1 load, signing, the delivery log, acks, follow-up
 * messages) is the consumer's own code against the bench's D1.
 */
export const consume = new Hono<AppEnv>().basePath("/__bench/consume");
consume.use("*", auth);

const BATCH = 10; // max_batch_size in wrangler.toml
// Fresh events for every invocation (so MARK_DISPATCHED marks ten each time): 200 batches, more
// than one case's probe, warm-up and profiled requests; past that they are used again.
const POOL_BATCHES = 200;
const URL_PREFIX = "https://hooks.bench.example/";
const EVENT_PREFIX = "bench-consume-";
let seeded = false;
let next = 0;

/**
 * The endpoints and the event pool, straight into D1 once per case (its probe request, not
 * profiled). Public https URLs: the consumer checks every URL before its attempt, and with
 * ALLOW_LOCAL_WEBHOOKS unset it runs the full host rules, as in production. Half the endpoints
 * take the modelled API's format (GET with the event in the query), half the standard JSON POST.
 */
async function seed(db: D1Database) {
  const now = Date.now();
  const endpoints = Array.from({ length: MAX_ENDPOINTS }, (_, i) =>
    db
      .prepare("INSERT INTO webhook_endpoints (url, events, format, secret, created_at) VALUES (?1, ?2, ?3, ?4, ?5)")
      .bind(
        `${URL_PREFIX}${i}?token=receiver-${i}`,
        '["*"]',
        i % 2 ? "quickbutik" : "standard",
        newSecret(),
        now - 60_000,
      ),
  );
  // About real orders and products of the seeded store, so that each standard delivery carries
  // its object (src/webhooks/payload.ts), and the largest there are: orders of 500 lines (the most
  // an order has) and the first 40 products, one of them of 2,048 variants. The consumer's object
  // budgets (src/webhooks/deliver.ts) are what keep such an invocation under the CPU budget.
  const events = db
    .prepare(
      `WITH RECURSIVE n(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM n WHERE k + 1 < ?1),
         o AS MATERIALIZED (SELECT id, row_number() OVER (ORDER BY id) - 1 AS r FROM orders
           WHERE (SELECT count(*) FROM order_lines l WHERE l.order_id = orders.id) = 500),
         p AS MATERIALIZED (SELECT id, row_number() OVER (ORDER BY id) - 1 AS r FROM products)
       INSERT INTO events (id, type, order_id, product_id, created_at)
       SELECT ?2 || k, CASE k % 2 WHEN 0 THEN 'order.new' ELSE 'product.update' END,
         CASE k % 2 WHEN 0 THEN (SELECT id FROM o WHERE r = k % 400) END,
         CASE k % 2 WHEN 1 THEN (SELECT id FROM p WHERE r = k % 40) END, ?3 + k FROM n`,
    )
    .bind(POOL_BATCHES * BATCH, EVENT_PREFIX, now);
  await db.batch([...endpoints, events]);
  seeded = true;
  next = 0;
}

/**
 * One consumer invocation. `?status=` is what every receiver answers (200: all delivered; 500:
 * every attempt fails and its retry is queued). `?keys=cold`: every endpoint gets a new secret
 * first, so the consumer imports all its signing keys again, as the first invocation of a fresh
 * isolate does (deliver.ts keeps them per isolate); the rotation's own statement is not counted
 * as the consumer's round trip, but its small CPU is in the profile. Answers what the invocation
 * did, and 500 when it did not spend its whole budget (then the case is not measuring what it says).
 */
consume.post("/run", async (c) => {
  if (!seeded) await seed(c.env.DB);
  const status = Number(c.req.query("status") ?? 200);
  if (c.req.query("keys") === "cold") {
    // Bench endpoints have consecutive ids, so id % MAX_ENDPOINTS gives each its own secret.
    const secrets = Array.from({ length: MAX_ENDPOINTS }, newSecret);
    await c.env.DB.prepare(
      `UPDATE webhook_endpoints SET secret = (SELECT value FROM json_each(?1) WHERE key = webhook_endpoints.id % ?2)
       WHERE url LIKE ?3`,
    )
      .bind(JSON.stringify(secrets), MAX_ENDPOINTS, `${URL_PREFIX}%`)
      .run();
  }
  const first = (next++ % POOL_BATCHES) * BATCH;
  const tally = { attempts: 0, acked: 0, retried: 0, queued: 0 };
  const now = new Date();
  const messages = Array.from({ length: BATCH }, (_, j) => ({
    id: `m${first + j}`,
    timestamp: now,
    attempts: 1,
    body: { event_id: `${EVENT_PREFIX}${first + j}` },
    ack: () => {
      tally.acked++;
    },
    retry: () => {
      tally.retried++;
    },
  }));
  const batch = {
    queue: "edge-store-events",
    messages,
    ackAll: () => {
      tally.acked += BATCH;
    },
    retryAll: () => {
      tally.retried += BATCH;
    },
  } as unknown as MessageBatch<unknown>;
  const producer = {
    send: async () => {
      tally.queued++;
    },
    sendBatch: async (msgs: unknown[]) => {
      tally.queued += msgs.length;
    },
  };
  const env = { ...c.env, DB: countedDb(c.env.DB), EVENTS: producer, RETRIES: producer } as unknown as Bindings;

  const real = globalThis.fetch;
  // The receiver stub still builds the Request a real fetch builds from the consumer's arguments
  // (URL parsing, headers, body); the runtime's own work of sending it is left out.
  globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    tally.attempts++;
    new Request(input, init);
    return new Response(status === 200 ? "ok" : "receiver error", { status });
  }) as typeof fetch;
  resetCounts();
  try {
    await deliverBatch(batch, env);
  } finally {
    globalThis.fetch = real;
  }
  const headers = countHeaders();
  const body = { budget: FETCH_BUDGET, ...tally, d1: headers["x-bench-d1"] };
  for (const [k, v] of Object.entries(headers)) c.header(k, v);
  const expected = { attempts: FETCH_BUDGET, acked: BATCH, retried: 0 };
  const off = Object.entries(expected).filter(([k, v]) => tally[k as keyof typeof tally] !== v);
  if (off.length) return c.json({ error: `not a full invocation: ${JSON.stringify(body)}`, ...body }, 500);
  return c.json(body);
});

/**
 * After a case: what its invocations left in D1 (deliveries by outcome, events marked
 * dispatched), then the bench's endpoints, events and deliveries are removed, so that no later
 * case records or delivers events for them, and the next consumer case seeds afresh.
 */
consume.post("/check", async (c) => {
  const db = c.env.DB;
  const like = `${EVENT_PREFIX}%`;
  const [deliveries, dispatched] = await db.batch<{ outcome: string; n: number }>([
    db
      .prepare("SELECT outcome, count(*) AS n FROM webhook_deliveries WHERE event_id LIKE ?1 GROUP BY outcome")
      .bind(like),
    db
      .prepare(
        "SELECT 'dispatched' AS outcome, count(*) AS n FROM events WHERE id LIKE ?1 AND dispatched_at IS NOT NULL",
      )
      .bind(like),
  ]);
  await db.batch([
    db.prepare("DELETE FROM webhook_deliveries WHERE event_id LIKE ?1").bind(like),
    db.prepare("DELETE FROM webhook_endpoints WHERE url LIKE ?1").bind(`${URL_PREFIX}%`),
    db.prepare("DELETE FROM events WHERE id LIKE ?1").bind(like),
  ]);
  seeded = false;
  return c.json({
    budget: FETCH_BUDGET,
    batch: BATCH,
    poolBatches: POOL_BATCHES,
    invocations: next,
    deliveries: Object.fromEntries(deliveries.results.map((r) => [r.outcome, r.n])),
    dispatched: dispatched.results[0]?.n ?? 0,
  });
});
