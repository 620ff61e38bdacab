import { env } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import type { Bindings } from "../src/env";
import { USER_AGENT } from "../src/webhooks/attempt";
import {
  type DeliverOptions,
  deliverBatch,
  FETCH_BUDGET,
  FIRST_ATTEMPT_TIMEOUT_MS,
  MAX_ATTEMPTS,
  RETRY_DELAYS,
} from "../src/webhooks/deliver";
import { REDISPATCH_AFTER_MS, sweepEvents } from "../src/webhooks/sweep";
import { wrapD1 } from "./d1-wrap";
import { get, post, uid } from "./helpers";

// The queue consumer driven directly: fake MessageBatch objects (cloudflare:test), fetch stubbed
// at the global, a stand-in EVENTS producer that records what the consumer queues. Event rows are
// inserted directly, standing in for the write paths that emit them (they test their own rows).

type Sent = { body: any; delaySeconds?: number };
let sent: Sent[];
let sendFails: boolean;
const producer = {
  sendBatch: async (msgs: Sent[]) => {
    if (sendFails) throw new Error("queue unavailable");
    sent.push(...msgs);
  },
  send: async (body: unknown, o?: { delaySeconds?: number }) => {
    sent.push({ body, delaySeconds: o?.delaySeconds });
  },
};
// Follow-ups go to the retries queue (RETRIES); the same stand-in records both.
const testEnv = (db: D1Database = env.DB) =>
  ({ ...env, DB: db, EVENTS: producer, RETRIES: producer }) as unknown as Bindings;

type Call = { url: string; init: RequestInit & { headers: Record<string, string> } };
let calls: Call[];
let answer: (url: string, init: RequestInit) => Promise<Response>;
let fetchSpy: MockInstance<typeof fetch>;
let logSpy: MockInstance<typeof console.log>;
let errSpy: MockInstance<typeof console.error>;

beforeEach(async () => {
  sent = [];
  sendFails = false;
  calls = [];
  answer = async () => new Response("ok");
  fetchSpy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = String(input);
    calls.push({ url, init: init as Call["init"] });
    return answer(url, init ?? {});
  });
  logSpy = vi.spyOn(console, "log").mockImplementation(() => {});
  errSpy = vi.spyOn(console, "error").mockImplementation(() => {});
  await env.DB.batch([
    env.DB.prepare("DELETE FROM webhook_deliveries"),
    env.DB.prepare("DELETE FROM webhook_endpoints"),
    env.DB.prepare("DELETE FROM events"),
  ]);
});
afterEach(() => {
  fetchSpy.mockRestore();
  logSpy.mockRestore();
  errSpy.mockRestore();
});
const logged = () => [...logSpy.mock.calls, ...errSpy.mock.calls].map((a) => a.map(String).join(" ")).join("\n");

async function endpoint(body: Record<string, unknown> = {}) {
  const r = await post("/v1/webhooks", {
    url: `https://${uid("rcv").toLowerCase()}.example.com/hook`,
    events: ["*"],
    ...body,
  });
  if (r.status !== 201) throw new Error(r.text);
  return r.json as { id: number; url: string; secret: string };
}

async function event(type: string, resource: { order_id?: number; product_id?: number }, createdAt = Date.now()) {
  const id = crypto.randomUUID();
  await env.DB.prepare("INSERT INTO events (id, type, order_id, product_id, created_at) VALUES (?, ?, ?, ?, ?)")
    .bind(id, type, resource.order_id ?? null, resource.product_id ?? null, createdAt)
    .run();
  return id;
}

let seq = 0;
type Msg = { body: unknown; attempts?: number; timestamp?: number };
/**
 * A fake MessageBatch that records acks and retries with their delays (cloudflare:test's
 * createMessageBatch records retries without their delaySeconds, which is what is under test).
 */
async function consume(messages: Msg[], opts: DeliverOptions = {}, db?: D1Database) {
  const result = { explicitAcks: [] as string[], retryMessages: [] as { msgId: string; delaySeconds?: number }[] };
  const batch = {
    queue: "edge-store-events",
    messages: messages.map((m) => {
      const id = `m${++seq}`;
      return {
        id,
        timestamp: new Date(m.timestamp ?? Date.now()),
        attempts: m.attempts ?? 1,
        body: m.body,
        ack: () => result.explicitAcks.push(id),
        retry: (o?: { delaySeconds?: number }) =>
          result.retryMessages.push({ msgId: id, delaySeconds: o?.delaySeconds }),
      };
    }),
    ackAll: () => {
      throw new Error("the consumer settles messages one by one");
    },
    retryAll: () => {
      throw new Error("the consumer settles messages one by one");
    },
  };
  await deliverBatch(batch as unknown as MessageBatch<unknown>, testEnv(db), opts);
  return { ids: batch.messages.map((m) => m.id), result };
}

async function deliveries(endpointId?: number) {
  const q = endpointId
    ? env.DB.prepare("SELECT * FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY id").bind(endpointId)
    : env.DB.prepare("SELECT * FROM webhook_deliveries ORDER BY id");
  return (await q.all<Record<string, any>>()).results;
}

const headersOf = (c: Call) => c.init.headers;

describe("standard format", () => {
  it("POSTs the payload, signed so that the standardwebhooks package verifies it", async () => {
    const ep = await endpoint({ events: ["order.new"] });
    const at = Date.now();
    const id = await event("order.new", { order_id: 1001 }, at);
    const { ids, result } = await consume([{ body: { event_id: id } }]);
    expect(calls).toHaveLength(1);
    const c = calls[0];
    expect(c.url).toBe(ep.url);
    expect(c.init.method).toBe("POST");
    expect(c.init.redirect).toBe("manual");
    expect(c.init.signal).toBeInstanceOf(AbortSignal);
    const h = headersOf(c);
    expect(h["content-type"]).toBe("application/json");
    expect(h["user-agent"]).toBe(USER_AGENT);
    expect(h["webhook-id"]).toBe(id);
    expect(Math.abs(Number(h["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(5);
    expect(h["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    const body = c.init.body as string;
    // The event's order is not in the database here: its id and deleted (webhooks.payload.test.ts
    // has the objects themselves).
    expect(JSON.parse(body)).toEqual({
      type: "order.new",
      timestamp: new Date(at).toISOString(),
      data: { order_id: 1001, deleted: true },
    });
    expect(new Webhook(ep.secret).verify(body, h)).toEqual(JSON.parse(body));
    // A wrong secret or a changed body does not verify.
    expect(() => new Webhook(`whsec_${btoa("x".repeat(32))}`).verify(body, h)).toThrow();
    expect(() => new Webhook(ep.secret).verify(body.replace("1001", "1002"), h)).toThrow();

    expect(result.explicitAcks).toEqual(ids);
    expect(result.retryMessages).toEqual([]);
    expect(sent).toEqual([]);
    const rows = await deliveries(ep.id);
    expect(rows).toEqual([
      expect.objectContaining({ event_id: id, event_type: "order.new", attempt: 1, status: 200, outcome: "delivered" }),
    ]);
    const ev = await env.DB.prepare("SELECT dispatched_at FROM events WHERE id = ?").bind(id).first<any>();
    expect(ev.dispatched_at).toBeGreaterThan(0);
    const listed = await get(`/v1/webhooks/${ep.id}/deliveries`);
    expect(listed.json.deliveries[0]).toMatchObject({ event_id: id, attempt: 1, status: 200, outcome: "delivered" });
  });

  it("names products by product_id", async () => {
    const ep = await endpoint();
    const id = await event("product.delete", { product_id: 77 });
    await consume([{ body: { event_id: id } }]);
    const body = JSON.parse(calls[0].init.body as string);
    expect(body).toMatchObject({ type: "product.delete", data: { product_id: 77, deleted: true } });
    expect(new Webhook(ep.secret).verify(calls[0].init.body as string, headersOf(calls[0]))).toBeTruthy();
  });
});

describe("quickbutik format", () => {
  it("GETs url?event_type&order_id with the same headers signing an empty body", async () => {
    const ep = await endpoint({ format: "quickbutik", url: "https://shop.example.com/hook?secret=s3" });
    const id = await event("order.done", { order_id: 1001 });
    await consume([{ body: { event_id: id } }]);
    expect(calls).toHaveLength(1);
    const c = calls[0];
    expect(c.init.method).toBe("GET");
    expect(c.init.body).toBeUndefined();
    expect(c.url).toBe("https://shop.example.com/hook?secret=s3&event_type=order.done&order_id=1001");
    const h = headersOf(c);
    expect(h["content-type"]).toBeUndefined();
    expect(h["user-agent"]).toBe(USER_AGENT);
    expect(h["webhook-id"]).toBe(id);
    expect(new Webhook(ep.secret).verify("", h)).toBeUndefined();
    expect(() => new Webhook(ep.secret).verify("x", h)).toThrow();
  });

  it("uses product_id for product events", async () => {
    await endpoint({ format: "quickbutik" });
    const id = await event("product.add", { product_id: 5 });
    await consume([{ body: { event_id: id } }]);
    const u = new URL(calls[0].url);
    expect(Object.fromEntries(u.searchParams)).toEqual({ event_type: "product.add", product_id: "5" });
  });
});

describe("fan-out", () => {
  it("delivers to every matching, enabled endpoint registered before the event, once", async () => {
    const all = await endpoint({ events: ["*"] });
    const orders = await endpoint({ events: ["order.new", "order.cancelled"], format: "quickbutik" });
    const products = await endpoint({ events: ["product.update"] });
    const disabled = await endpoint();
    await env.DB.prepare("UPDATE webhook_endpoints SET disabled_at = 1 WHERE id = ?").bind(disabled.id).run();
    const id = await event("order.cancelled", { order_id: 9 });
    const later = await endpoint();
    await env.DB.prepare("UPDATE webhook_endpoints SET created_at = ? WHERE id = ?")
      .bind(Date.now() + 1000, later.id)
      .run();
    await consume([{ body: { event_id: id } }]);
    const hit = calls.map((c) => new URL(c.url).host).sort();
    expect(hit).toEqual([new URL(all.url).host, new URL(orders.url).host].sort());
    expect(products.id).toBeGreaterThan(0);
  });

  it("retries per endpoint: one failing endpoint gets its own message, the others nothing more", async () => {
    const good = await endpoint();
    const bad = await endpoint();
    answer = async (url) => new Response("", { status: url.startsWith(bad.url) ? 500 : 204 });
    const id = await event("product.update", { product_id: 3 });
    const { ids, result } = await consume([{ body: { event_id: id } }]);
    expect(result.explicitAcks).toEqual(ids);
    expect(sent).toEqual([{ body: { event_id: id, endpoint_id: bad.id, attempt: 2 }, delaySeconds: 5 }]);
    expect(await deliveries(good.id)).toEqual([expect.objectContaining({ status: 204, outcome: "delivered" })]);
    expect(await deliveries(bad.id)).toEqual([
      expect.objectContaining({ attempt: 1, status: 500, outcome: "retrying", error: null }),
    ]);
    // The follow-up delivers to the failed endpoint only.
    calls = [];
    answer = async () => new Response("ok");
    const again = await consume([{ body: sent[0].body }]);
    expect(calls.map((c) => c.url)).toEqual([bad.url]);
    expect(again.result.explicitAcks).toEqual(again.ids);
    expect((await deliveries(bad.id)).map((d) => [d.attempt, d.outcome])).toEqual([
      [1, "retrying"],
      [2, "delivered"],
    ]);
  });

  it(`makes at most ${FETCH_BUDGET} attempts per invocation, six at a time, one per endpoint, and queues the rest`, async () => {
    const eps = await Promise.all(Array.from({ length: 8 }, () => endpoint()));
    const events = await Promise.all(Array.from({ length: 10 }, (_, i) => event("order.new", { order_id: i + 1 })));
    let open = 0;
    let most = 0;
    const openAt = new Map<string, number>();
    let mostAtOne = 0;
    answer = async (url) => {
      open++;
      most = Math.max(most, open);
      openAt.set(url, (openAt.get(url) ?? 0) + 1);
      mostAtOne = Math.max(mostAtOne, openAt.get(url) ?? 0);
      await new Promise((r) => setTimeout(r, 5));
      openAt.set(url, (openAt.get(url) ?? 0) - 1);
      open--;
      return new Response("ok");
    };
    const { ids, result } = await consume(events.map((event_id) => ({ body: { event_id } })));
    expect(calls).toHaveLength(FETCH_BUDGET);
    expect(most).toBeLessThanOrEqual(6);
    expect(most).toBeGreaterThan(1);
    expect(mostAtOne).toBe(1);
    expect(sent).toHaveLength(80 - FETCH_BUDGET);
    for (const s of sent) {
      expect(s.delaySeconds).toBe(0);
      expect(s.body.attempt).toBe(1);
      expect(eps.map((e) => e.id)).toContain(s.body.endpoint_id);
    }
    expect(result.explicitAcks.sort()).toEqual(ids.sort());
    // Every (event, endpoint) pair is attempted now or queued, none twice.
    const pairs = [
      ...(await deliveries()).map((d) => `${d.event_id}/${d.endpoint_id}`),
      ...sent.map((s) => `${s.body.event_id}/${s.body.endpoint_id}`),
    ];
    expect(new Set(pairs).size).toBe(80);
  });

  it("retries the event message whole when its follow-ups cannot be queued", async () => {
    await endpoint();
    answer = async () => new Response("", { status: 503 });
    sendFails = true;
    const id = await event("order.new", { order_id: 1 });
    const { ids, result } = await consume([{ body: { event_id: id } }]);
    expect(result.explicitAcks).toEqual([]);
    expect(result.retryMessages).toEqual([{ msgId: ids[0], delaySeconds: 5 }]);
  });

  it("acks messages it cannot read, and events that match no endpoint", async () => {
    const id = await event("order.new", { order_id: 1 });
    const { ids, result } = await consume([{ body: "garbage" }, { body: { nope: 1 } }, { body: { event_id: id } }]);
    expect(calls).toEqual([]);
    expect(result.explicitAcks.sort()).toEqual(ids.sort());
  });
});

describe("retry schedule", () => {
  it("waits about 5 s, 1 min, 5 min, 30 min, 2 h, 6 h, then 12 h, for about 3 days", () => {
    expect(RETRY_DELAYS.slice(0, 7)).toEqual([5, 60, 300, 1800, 7200, 21600, 43200]);
    expect(RETRY_DELAYS.every((d) => d <= 43200)).toBe(true);
    const total = RETRY_DELAYS.reduce((a, b) => a + b, 0);
    expect(total / 86400).toBeGreaterThan(2.5);
    expect(total / 86400).toBeLessThan(3.5);
    expect(MAX_ATTEMPTS).toBe(RETRY_DELAYS.length + 1);
  });

  it.each(RETRY_DELAYS.map((d, i) => [i + 1, d]))(
    "after failed attempt %i the message is retried in %i s",
    async (n, delay) => {
      const ep = await endpoint();
      answer = async () => new Response("", { status: 500 });
      const id = await event("order.new", { order_id: 1 });
      const { ids, result } = await consume([{ body: { event_id: id, endpoint_id: ep.id, attempt: n } }]);
      expect(result.retryMessages).toEqual([{ msgId: ids[0], delaySeconds: delay }]);
      expect(result.explicitAcks).toEqual([]);
      expect(await deliveries(ep.id)).toEqual([
        expect.objectContaining({ attempt: n, status: 500, outcome: "retrying" }),
      ]);
    },
  );

  it("counts the queue's redeliveries of a message as attempts", async () => {
    const ep = await endpoint();
    answer = async () => new Response("", { status: 500 });
    const id = await event("order.new", { order_id: 1 });
    const { ids, result } = await consume([{ body: { event_id: id, endpoint_id: ep.id, attempt: 2 }, attempts: 3 }]);
    expect(result.retryMessages).toEqual([{ msgId: ids[0], delaySeconds: 1800 }]);
    expect((await deliveries(ep.id))[0].attempt).toBe(4);
  });

  it("gives up after the last attempt: a delivery row with outcome failed, the message acked", async () => {
    const ep = await endpoint();
    answer = async () => new Response("", { status: 500 });
    const id = await event("order.new", { order_id: 1 });
    const { ids, result } = await consume([
      { body: { event_id: id, endpoint_id: ep.id, attempt: MAX_ATTEMPTS - 4 }, attempts: 5 },
    ]);
    expect(result.retryMessages).toEqual([]);
    expect(result.explicitAcks).toEqual(ids);
    expect(sent).toEqual([]);
    expect(await deliveries(ep.id)).toEqual([
      expect.objectContaining({ attempt: MAX_ATTEMPTS, status: 500, outcome: "failed" }),
    ]);
    const listed = await get(`/v1/webhooks/${ep.id}/deliveries`);
    expect(listed.json.deliveries[0]).toMatchObject({ attempt: MAX_ATTEMPTS, outcome: "failed" });
  });

  it("re-sends as a new message a retry that would outlive the free plan's 24 h retention", async () => {
    const ep = await endpoint();
    answer = async () => new Response("", { status: 502 });
    const id = await event("order.new", { order_id: 1 });
    const { ids, result } = await consume([
      { body: { event_id: id, endpoint_id: ep.id, attempt: 7 }, timestamp: Date.now() - 10 * 3600_000 },
    ]);
    expect(result.retryMessages).toEqual([]);
    expect(result.explicitAcks).toEqual(ids);
    expect(sent).toEqual([{ body: { event_id: id, endpoint_id: ep.id, attempt: 8 }, delaySeconds: 43200 }]);
  });
});

describe("failures", () => {
  it("a timeout is a failed attempt, retried", async () => {
    const ep = await endpoint();
    answer = (_url, init) =>
      new Promise((_resolve, reject) => {
        init.signal?.addEventListener("abort", () => reject(init.signal?.reason));
      });
    const id = await event("order.new", { order_id: 1 });
    const { ids, result } = await consume([{ body: { event_id: id, endpoint_id: ep.id, attempt: 1 } }], {
      timeoutMs: 50,
    });
    expect(result.retryMessages).toEqual([{ msgId: ids[0], delaySeconds: 5 }]);
    const [row] = await deliveries(ep.id);
    expect(row).toMatchObject({ status: null, outcome: "retrying" });
    expect(row.error).toMatch(/^timeout/);
    expect(row.duration_ms).toBeGreaterThanOrEqual(40);
  });

  it("gives one attempt 10 s by default", async () => {
    const ep = await endpoint();
    const id = await event("order.new", { order_id: 1 });
    let aborted: boolean | undefined;
    answer = async (_url, init) => {
      await new Promise((r) => setTimeout(r, 30));
      aborted = init.signal?.aborted;
      return new Response("ok");
    };
    await consume([{ body: { event_id: id, endpoint_id: ep.id, attempt: 1 } }]);
    expect(aborted).toBe(false);
  });

  it("does not follow a redirect: a 3xx is a failure", async () => {
    const ep = await endpoint();
    answer = async () => new Response(null, { status: 302, headers: { location: "https://169.254.169.254/" } });
    const id = await event("order.new", { order_id: 1 });
    const { ids, result } = await consume([{ body: { event_id: id, endpoint_id: ep.id, attempt: 1 } }]);
    expect(calls).toHaveLength(1);
    expect(calls[0].init.redirect).toBe("manual");
    expect(result.retryMessages).toEqual([{ msgId: ids[0], delaySeconds: 5 }]);
    expect(await deliveries(ep.id)).toEqual([expect.objectContaining({ status: 302, outcome: "retrying" })]);
  });

  it("a network error is a failure, and its text never holds the URL", async () => {
    const ep = await endpoint({ url: "https://down.example.com/hook?key=receiver-secret" });
    answer = async (url) => {
      throw new TypeError(`connect failed to ${url}`);
    };
    const id = await event("order.new", { order_id: 1 });
    await consume([{ body: { event_id: id, endpoint_id: ep.id, attempt: 1 } }]);
    const [row] = await deliveries(ep.id);
    expect(row.error).toBe("network error: connect failed to <url>");
    expect(row.outcome).toBe("retrying");
  });

  it("410 Gone disables the endpoint: no retry, no further delivery", async () => {
    const ep = await endpoint();
    const other = await endpoint();
    answer = async (url) => new Response("", { status: url.startsWith(ep.url) ? 410 : 200 });
    const id = await event("order.new", { order_id: 1 });
    const { ids, result } = await consume([{ body: { event_id: id } }]);
    expect(result.explicitAcks).toEqual(ids);
    expect(sent).toEqual([]);
    expect(await deliveries(ep.id)).toEqual([expect.objectContaining({ status: 410, outcome: "disabled" })]);
    const listed = (await get("/v1/webhooks")).json.webhooks.find((w: any) => w.id === ep.id);
    expect(listed).toMatchObject({ enabled: false, disabled_reason: "the receiver answered 410 Gone" });
    expect(listed.disabled_at).toMatch(/^\d{4}-/);
    // Neither new events nor a pending retry reach it.
    calls = [];
    const next = await event("order.done", { order_id: 1 });
    await consume([{ body: { event_id: next } }, { body: { event_id: id, endpoint_id: ep.id, attempt: 2 } }]);
    expect(calls.map((c) => c.url)).toEqual([other.url]);
  });

  it("a deleted endpoint's pending retries end without a request", async () => {
    const ep = await endpoint();
    const id = await event("order.new", { order_id: 1 });
    await env.DB.prepare("DELETE FROM webhook_endpoints WHERE id = ?").bind(ep.id).run();
    const { ids, result } = await consume([{ body: { event_id: id, endpoint_id: ep.id, attempt: 3 } }]);
    expect(calls).toEqual([]);
    expect(result.explicitAcks).toEqual(ids);
  });

  it("refuses at delivery a URL the rules no longer allow", async () => {
    const local = await post(
      "/v1/webhooks",
      { url: "http://127.0.0.1:9/hook", events: ["*"] },
      { env: { ALLOW_LOCAL_WEBHOOKS: "true" } },
    );
    // Two events: the URL is judged once per batch, and the verdict holds for each of its jobs.
    const first = await event("order.new", { order_id: 1 });
    const second = await event("order.done", { order_id: 1 });
    const { ids, result } = await consume([{ body: { event_id: first } }, { body: { event_id: second } }]);
    expect(calls).toEqual([]);
    expect(result.explicitAcks).toEqual(ids);
    const refused = expect.objectContaining({ outcome: "failed", error: "url refused: must use https" });
    expect(await deliveries(local.json.id)).toEqual([refused, refused]);
  });
});

describe("D1", () => {
  it.each([
    ["standard", 3],
    ["quickbutik", 2],
  ])(
    "takes a fixed number of round trips per invocation, whatever the number of messages and endpoints (%s: %i)",
    async (format, trips) => {
      await Promise.all(Array.from({ length: 4 }, () => endpoint({ format })));
      answer = async (url) => new Response("", { status: url.length % 2 ? 500 : 200 });
      const events = await Promise.all(Array.from({ length: 6 }, (_, i) => event("order.new", { order_id: i + 1 })));
      // The retry below is for an endpoint deleted since: read with the rest, ended without a request.
      // (A fixed id such as 1 would name one of the four when this test runs first in its file.)
      const gone = await endpoint();
      await env.DB.prepare("DELETE FROM webhook_endpoints WHERE id = ?").bind(gone.id).run();
      const { db, counts } = wrapD1();
      await consume(
        [
          ...events.map((event_id) => ({ body: { event_id } })),
          { body: { event_id: events[0], endpoint_id: gone.id, attempt: 2 } },
        ],
        {},
        db,
      );
      expect(calls).toHaveLength(24);
      // Load, then (for standard bodies) the objects they carry, then the record.
      expect(counts.calls).toBe(trips);
    },
  );

  it("attempts nothing and settles nothing when the load fails: Queues redelivers the batch", async () => {
    await endpoint();
    const id = await event("order.new", { order_id: 1 });
    const { db } = wrapD1({ failCall: 1 });
    await expect(consume([{ body: { event_id: id } }], {}, db)).rejects.toThrow(/injected fault/);
    expect(calls).toEqual([]);
    expect(
      (await env.DB.prepare("SELECT dispatched_at FROM events WHERE id = ?").bind(id).first<any>()).dispatched_at,
    ).toBeNull();
  });

  it("attempts nothing and settles nothing when the objects cannot be read: Queues redelivers the batch", async () => {
    const ep = await endpoint();
    const id = await event("order.new", { order_id: 1 });
    const { db } = wrapD1({ failCall: 2 });
    await expect(consume([{ body: { event_id: id } }], {}, db)).rejects.toThrow(/injected fault/);
    expect(calls).toEqual([]);
    expect(sent).toEqual([]);
    expect(await deliveries(ep.id)).toEqual([]);
    // Delivered again, the batch is attempted in full.
    await consume([{ body: { event_id: id } }]);
    expect(calls).toHaveLength(1);
    expect(await deliveries(ep.id)).toEqual([expect.objectContaining({ outcome: "delivered" })]);
  });

  it("still settles the messages when the attempts cannot be recorded", async () => {
    const ep = await endpoint();
    answer = async () => new Response("", { status: 500 });
    const id = await event("order.new", { order_id: 1 });
    const { db } = wrapD1({ failCall: 3 });
    const { ids, result } = await consume([{ body: { event_id: id } }], {}, db);
    expect(calls).toHaveLength(1);
    expect(result.explicitAcks).toEqual(ids);
    expect(sent).toEqual([{ body: { event_id: id, endpoint_id: ep.id, attempt: 2 }, delaySeconds: 5 }]);
    expect(await deliveries(ep.id)).toEqual([]);
    expect(logged()).toContain("webhook deliveries not recorded");
  });
});

describe("logs", () => {
  it("never hold a secret or a URL", async () => {
    const a = await endpoint({ url: "https://a.example.com/h?token=url-secret" });
    const b = await endpoint({ format: "quickbutik" });
    answer = async (url) => (url.startsWith(a.url) ? new Response("", { status: 500 }) : new Response("ok"));
    const id = await event("order.new", { order_id: 1 });
    sendFails = true;
    await consume([{ body: { event_id: id } }]);
    const out = logged();
    expect(out).toContain('"msg":"webhook deliveries"');
    for (const s of [a.secret, b.secret]) {
      expect(out).not.toContain(s.slice(6));
      expect(out).not.toContain(s.slice(6, 20));
    }
    expect(out).not.toContain("url-secret");
    expect(out).not.toContain("example.com");
  });
});

describe("a consumer that stops between dispatch and record", () => {
  it("leaves its events to the sweep, which sends them again; delivered again, they are left alone", async () => {
    const ep = await endpoint();
    const id = await event("order.new", { order_id: 7 });
    // The record batch (the consumer's third D1 call, after the load and the objects) never
    // happens: the isolate was killed after the attempts were made.
    const { db } = wrapD1({ failCall: 3 });
    await consume([{ body: { event_id: id } }], {}, db);
    expect(calls.length).toBe(1);
    const row = () =>
      env.DB.prepare("SELECT dispatched_at, fanned_out_at FROM events WHERE id = ?").bind(id).first<any>();
    expect((await row()).dispatched_at).not.toBeNull();
    expect((await row()).fanned_out_at).toBeNull();

    const later = Date.now() + REDISPATCH_AFTER_MS + 1000;
    sent = [];
    expect(await sweepEvents(testEnv(), later), logged()).toBe(1);
    expect(sent).toEqual([{ body: { event_id: id } }]);

    // The re-sent message is delivered again (at least once: the receiver dedupes on webhook-id).
    await consume([{ body: { event_id: id } }]);
    expect(calls.map((c) => c.init.headers["webhook-id"])).toEqual([id, id]);
    expect(calls[1].url).toBe(ep.url);
    expect((await row()).fanned_out_at).not.toBeNull();
    expect(await sweepEvents(testEnv(), later + REDISPATCH_AFTER_MS + 1000)).toBe(0);
  });

  it("marks an event fanned out when no endpoint takes it", async () => {
    const id = await event("product.delete", { product_id: 9 });
    await consume([{ body: { event_id: id } }]);
    expect(calls).toEqual([]);
    const r = await env.DB.prepare("SELECT fanned_out_at FROM events WHERE id = ?").bind(id).first<any>();
    expect(r.fanned_out_at).not.toBeNull();
  });
});

describe("a receiver that hangs", () => {
  const hang = (_url: string, init: RequestInit) =>
    new Promise<Response>((_resolve, reject) => {
      init.signal?.addEventListener("abort", () => reject(init.signal?.reason));
    });

  it("gives first attempts FIRST_ATTEMPT_TIMEOUT_MS and retries the full 10 s", async () => {
    const ep = await endpoint();
    const waits: number[] = [];
    answer = async (_url, init) => {
      const start = Date.now();
      await new Promise((r) => setTimeout(r, 20));
      waits.push(start);
      expect(init.signal?.aborted).toBe(false);
      return new Response("ok");
    };
    const id = await event("order.new", { order_id: 1 });
    await consume([{ body: { event_id: id } }]);
    await consume([{ body: { event_id: id, endpoint_id: ep.id, attempt: 2 } }]);
    expect(waits).toHaveLength(2);
    expect(FIRST_ATTEMPT_TIMEOUT_MS).toBeLessThanOrEqual(5_000);
  });

  it("holds one connection and delays no other endpoint: its other events become its own retries", async () => {
    const slow = await endpoint();
    const fast = await Promise.all([endpoint(), endpoint(), endpoint()]);
    const arrived: Record<string, number> = {};
    answer = async (url, init) => {
      if (url === slow.url) return hang(url, init);
      arrived[`${url} ${init.headers && (init.headers as Record<string, string>)["webhook-id"]}`] = Date.now();
      return new Response("ok");
    };
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await event("product.update", { product_id: i + 1 }));
    const start = Date.now();
    await consume(
      ids.map((event_id) => ({ body: { event_id } })),
      { firstTimeoutMs: 300 },
    );
    const took = Date.now() - start;
    // One attempt to the slow receiver, cut at the first-attempt timeout; every fast one got all.
    const slowCalls = calls.filter((c) => c.url === slow.url);
    expect(slowCalls).toHaveLength(1);
    expect(Object.keys(arrived)).toHaveLength(15);
    for (const f of fast) expect(Object.keys(arrived).filter((k) => k.startsWith(`${f.url} `))).toHaveLength(5);
    for (const t of Object.values(arrived)) expect(t - start).toBeLessThan(300);
    expect(took).toBeLessThan(1_500);
    // The slow receiver's five events: one attempt timed out, the four behind it count as failed
    // attempts without being made, so all five retry on the schedule, on the retries queue.
    expect(sent.map((m) => [m.body.endpoint_id, m.body.attempt, m.delaySeconds])).toEqual(
      Array.from({ length: 5 }, () => [slow.id, 2, RETRY_DELAYS[0]]),
    );
    const log = await deliveries(slow.id);
    expect(log).toHaveLength(5);
    expect(log.filter((d: any) => /^timeout/.test(d.error))).toHaveLength(1);
    expect(log.filter((d: any) => /^not attempted/.test(d.error))).toHaveLength(4);
    for (const d of log) expect(d).toMatchObject({ status: null, outcome: "retrying" });

    // The next invocation in this isolate does not wait on it again: its new events go straight
    // to the retries queue as first attempts, where the full 10 s applies.
    sent = [];
    calls = [];
    const more = [await event("product.update", { product_id: 9 })];
    const again = Date.now();
    await consume([{ body: { event_id: more[0] } }], { firstTimeoutMs: 300 });
    expect(Date.now() - again).toBeLessThan(300);
    expect(calls.filter((c) => c.url === slow.url)).toEqual([]);
    expect(calls).toHaveLength(3);
    expect(sent).toEqual([{ body: { event_id: more[0], endpoint_id: slow.id, attempt: 1 }, delaySeconds: 0 }]);
  });
});
