import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import type { Bindings } from "../src/env";
import worker from "../src/index";
import { dispatch, newEvent } from "../src/webhooks/outbox";
import {
  PURGE_LIMIT,
  REDISPATCH_AFTER_MS,
  REDISPATCH_WINDOW_MS,
  RETENTION_MS,
  SWEEP_AFTER_MS,
  SWEEP_LIMIT,
  sweepEvents,
} from "../src/webhooks/sweep";

// The sweep re-sends events that a lost queue send left undispatched, and nothing else. Event
// rows are inserted directly, standing in for the write paths that emit them.

let sent: { body: any }[];
let sendFails: boolean;
const producer = {
  sendBatch: async (msgs: { body: any }[]) => {
    if (sendFails) throw new Error("queue unavailable");
    sent.push(...msgs);
  },
};
const testEnv = () => ({ ...env, EVENTS: producer }) as unknown as Bindings;

let errSpy: MockInstance<typeof console.error>;
let logSpy: MockInstance<typeof console.log>;
beforeEach(async () => {
  sent = [];
  sendFails = false;
  errSpy = vi.spyOn(console, "error").mockImplementation(() => {});
  logSpy = vi.spyOn(console, "log").mockImplementation(() => {});
  await env.DB.prepare("DELETE FROM events").run();
});
afterEach(() => {
  errSpy.mockRestore();
  logSpy.mockRestore();
});

/** An event row; a dispatched one was fanned out by its consumer unless `fannedOut` is null. */
async function event(createdAt: number, dispatchedAt: number | null = null, fannedOut = dispatchedAt) {
  const id = crypto.randomUUID();
  await env.DB.prepare(
    "INSERT INTO events (id, type, order_id, created_at, dispatched_at, fanned_out_at) VALUES (?, 'order.new', 1, ?, ?, ?)",
  )
    .bind(id, createdAt, dispatchedAt, fannedOut)
    .run();
  return id;
}
const dispatchedAt = async (id: string) =>
  (await env.DB.prepare("SELECT dispatched_at FROM events WHERE id = ?").bind(id).first<any>()).dispatched_at;

describe("sweepEvents", () => {
  it("re-sends events dispatched more than 10 minutes ago whose first attempts were never recorded", async () => {
    const now = Date.now();
    const stalled = await event(now - 20 * 60_000, now - REDISPATCH_AFTER_MS - 1000, null);
    const onItsWay = await event(now - 6 * 60_000, now - 5 * 60_000, null);
    const fannedOut = await event(now - 20 * 60_000, now - 15 * 60_000);
    const tooOld = await event(now - REDISPATCH_WINDOW_MS - 1000, now - REDISPATCH_WINDOW_MS + 1000, null);
    expect(await sweepEvents(testEnv(), now)).toBe(1);
    expect(sent.map((m) => m.body)).toEqual([{ event_id: stalled }]);
    // Sent again now: the next run waits another REDISPATCH_AFTER_MS for its consumer.
    expect(await dispatchedAt(stalled)).toBe(now);
    expect(await dispatchedAt(onItsWay)).toBe(now - 5 * 60_000);
    expect(await dispatchedAt(fannedOut)).toBe(now - 15 * 60_000);
    expect(await dispatchedAt(tooOld)).toBe(now - REDISPATCH_WINDOW_MS + 1000);
    sent = [];
    expect(await sweepEvents(testEnv(), now + 60_000)).toBe(0);
    // Both stalled ones now, oldest dispatch first.
    expect(await sweepEvents(testEnv(), now + REDISPATCH_AFTER_MS + 1)).toBe(2);
    expect(sent.map((m) => m.body)).toEqual([{ event_id: onItsWay }, { event_id: stalled }]);
  });

  it("re-sends events still undispatched minutes after creation, and marks them", async () => {
    const now = Date.now();
    const lost = await event(now - SWEEP_AFTER_MS - 1000);
    const older = await event(now - 3 * 3600_000);
    const recent = await event(now - 30_000);
    const done = await event(now - 3600_000, now - 3599_000);
    expect(await sweepEvents(testEnv(), now)).toBe(2);
    expect(sent.map((m) => m.body)).toEqual([{ event_id: older }, { event_id: lost }]);
    expect(await dispatchedAt(lost)).toBe(now);
    expect(await dispatchedAt(older)).toBe(now);
    expect(await dispatchedAt(recent)).toBeNull();
    expect(await dispatchedAt(done)).toBe(now - 3599_000);
    // A second run finds nothing left.
    sent = [];
    expect(await sweepEvents(testEnv(), now + 1000)).toBe(0);
    expect(sent).toEqual([]);
  });

  it(`sends at most ${SWEEP_LIMIT} per run, oldest first`, async () => {
    const now = Date.now();
    const rows = Array.from({ length: SWEEP_LIMIT + 5 }, (_, i) => [crypto.randomUUID(), now - 3600_000 + i] as const);
    await env.DB.prepare(
      "INSERT INTO events (id, type, product_id, created_at) SELECT value->>0, 'product.update', 1, value->>1 FROM json_each(?)",
    )
      .bind(JSON.stringify(rows))
      .run();
    expect(await sweepEvents(testEnv(), now)).toBe(SWEEP_LIMIT);
    expect(sent.map((m) => m.body.event_id)).toEqual(rows.slice(0, SWEEP_LIMIT).map((r) => r[0]));
    sent = [];
    expect(await sweepEvents(testEnv(), now)).toBe(5);
  });

  it("leaves events undispatched when the queue refuses them, for the next run", async () => {
    const now = Date.now();
    const id = await event(now - SWEEP_AFTER_MS - 1);
    sendFails = true;
    expect(await sweepEvents(testEnv(), now)).toBe(0);
    expect(await dispatchedAt(id)).toBeNull();
    expect(errSpy.mock.calls.map((c) => String(c[0])).join()).toContain("webhook sweep failed");
    sendFails = false;
    expect(await sweepEvents(testEnv(), now)).toBe(1);
  });

  it(`drops dispatched events and delivery log rows older than 30 days, at most ${PURGE_LIMIT} each per run`, async () => {
    const now = Date.now();
    const old = now - RETENTION_MS - 1000;
    const keptUndispatched = await event(old); // never dispatched: re-sent, never dropped unsent
    const young = await event(now - 86_400_000, now - 86_400_000);
    const rows = Array.from({ length: PURGE_LIMIT + 2 }, (_, i) => [crypto.randomUUID(), old - i] as const);
    await env.DB.prepare(
      "INSERT INTO events (id, type, order_id, created_at, dispatched_at) SELECT value->>0, 'order.new', 1, value->>1, value->>1 FROM json_each(?)",
    )
      .bind(JSON.stringify(rows))
      .run();
    const ep = await env.DB.prepare(
      "INSERT INTO webhook_endpoints (url, events, format, secret, created_at) VALUES ('https://p.example.com/', '[\"*\"]', 'standard', 'whsec_x', 1) RETURNING id",
    ).first<{ id: number }>();
    const log = env.DB.prepare(
      "INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, attempt, status, duration_ms, outcome, created_at) VALUES (?, 'e', 'order.new', 1, 200, 1, 'delivered', ?)",
    );
    await env.DB.batch([log.bind(ep?.id, old), log.bind(ep?.id, old + 1), log.bind(ep?.id, now - 1000)]);
    const count = async (sql: string) => (await env.DB.prepare(sql).first<{ n: number }>())?.n;

    await sweepEvents(testEnv(), now);
    expect(await count("SELECT count(*) AS n FROM events")).toBe(4); // 2 old left, young, the re-sent one
    expect(await dispatchedAt(young)).toBe(now - 86_400_000);
    expect(await dispatchedAt(keptUndispatched)).toBe(now);
    expect(await count("SELECT count(*) AS n FROM webhook_deliveries")).toBe(1);
    await sweepEvents(testEnv(), now);
    expect(await count("SELECT count(*) AS n FROM events")).toBe(2); // young, and the re-sent one
    await env.DB.prepare("DELETE FROM webhook_endpoints WHERE id = ?").bind(ep?.id).run();
  });

  it("runs from the cron", async () => {
    const now = Date.now();
    const id = await event(now - SWEEP_AFTER_MS - 1);
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ scheduledTime: now }), testEnv(), ctx);
    await waitOnExecutionContext(ctx);
    expect(sent.map((m) => m.body)).toEqual([{ event_id: id }]);
  });
});

describe("dispatch", () => {
  it("hands each committed event to the queue as {event_id}, after the response", async () => {
    const ctx = createExecutionContext();
    const events = [newEvent("order.new", { orderId: 1 }), newEvent("product.add", { productId: 2 })];
    dispatch(testEnv(), ctx, events);
    await waitOnExecutionContext(ctx);
    expect(sent.map((m) => m.body)).toEqual(events.map((e) => ({ event_id: e.id })));
  });
});
