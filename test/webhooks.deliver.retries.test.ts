import { describe, expect, it } from "vitest";
import { MAX_ATTEMPTS, RETRY_DELAYS } from "../src/webhooks/deliver";
import { consume, deliveries, endpoint, event, fakes, sent, useDeliveryFakes } from "./fixtures/webhooks-deliver";
import { get } from "./helpers";

// The retry schedule of a failed delivery: the delay after each attempt, the last attempt, and the
// queue's own redeliveries and retention. test/fixtures/webhooks-deliver.ts drives the consumer
// with fake batches, a stubbed fetch and a stand-in queue.

useDeliveryFakes();

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
      fakes.answer = async () => new Response("", { status: 500 });
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
    fakes.answer = async () => new Response("", { status: 500 });
    const id = await event("order.new", { order_id: 1 });
    const { ids, result } = await consume([{ body: { event_id: id, endpoint_id: ep.id, attempt: 2 }, attempts: 3 }]);
    expect(result.retryMessages).toEqual([{ msgId: ids[0], delaySeconds: 1800 }]);
    expect((await deliveries(ep.id))[0].attempt).toBe(4);
  });

  it("gives up after the last attempt: a delivery row with outcome failed, the message acked", async () => {
    const ep = await endpoint();
    fakes.answer = async () => new Response("", { status: 500 });
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
    fakes.answer = async () => new Response("", { status: 502 });
    const id = await event("order.new", { order_id: 1 });
    const { ids, result } = await consume([
      { body: { event_id: id, endpoint_id: ep.id, attempt: 7 }, timestamp: Date.now() - 10 * 3600_000 },
    ]);
    expect(result.retryMessages).toEqual([]);
    expect(result.explicitAcks).toEqual(ids);
    expect(sent).toEqual([{ body: { event_id: id, endpoint_id: ep.id, attempt: 8 }, delaySeconds: 43200 }]);
  });
});
