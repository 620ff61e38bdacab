import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { REDISPATCH_AFTER_MS, sweepEvents } from "../src/webhooks/sweep";
import { wrapD1 } from "./d1-wrap";
import {
  calls,
  consume,
  deliveries,
  endpoint,
  event,
  fakes,
  logged,
  sent,
  testEnv,
  useDeliveryFakes,
} from "./fixtures/webhooks-deliver";

// The consumer's D1 calls: a fixed number per invocation, and what it does when one of them fails
// or the isolate stops between the attempts and their record (the sweep sends the events again).
// test/fixtures/webhooks-deliver.ts drives the consumer with fake batches, a stubbed fetch and a
// stand-in queue.

useDeliveryFakes();

describe("D1", () => {
  it.each([
    ["standard", 3],
    ["quickbutik", 2],
  ])(
    "takes a fixed number of round trips per invocation, whatever the number of messages and endpoints (%s: %i)",
    async (format, trips) => {
      await Promise.all(Array.from({ length: 4 }, () => endpoint({ format })));
      fakes.answer = async (url) => new Response("", { status: url.length % 2 ? 500 : 200 });
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
    fakes.answer = async () => new Response("", { status: 500 });
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
    sent.length = 0;
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
