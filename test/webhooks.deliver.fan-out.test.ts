import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { FETCH_BUDGET } from "../src/webhooks/deliver";
import {
  calls,
  consume,
  deliveries,
  endpoint,
  event,
  fakes,
  sent,
  useDeliveryFakes,
} from "./fixtures/webhooks-deliver";

// One event to many endpoints: which endpoints it reaches, the follow-up messages of the ones that
// failed or did not fit the invocation, and the messages the consumer cannot use.
// test/fixtures/webhooks-deliver.ts drives the consumer with fake batches, a stubbed fetch and a
// stand-in queue.

useDeliveryFakes();

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
    fakes.answer = async (url) => new Response("", { status: url.startsWith(bad.url) ? 500 : 204 });
    const id = await event("product.update", { product_id: 3 });
    const { ids, result } = await consume([{ body: { event_id: id } }]);
    expect(result.explicitAcks).toEqual(ids);
    expect(sent).toEqual([{ body: { event_id: id, endpoint_id: bad.id, attempt: 2 }, delaySeconds: 5 }]);
    expect(await deliveries(good.id)).toEqual([expect.objectContaining({ status: 204, outcome: "delivered" })]);
    expect(await deliveries(bad.id)).toEqual([
      expect.objectContaining({ attempt: 1, status: 500, outcome: "retrying", error: null }),
    ]);
    // The follow-up delivers to the failed endpoint only.
    calls.length = 0;
    fakes.answer = async () => new Response("ok");
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
    fakes.answer = async (url) => {
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
    fakes.answer = async () => new Response("", { status: 503 });
    fakes.sendFails = true;
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
