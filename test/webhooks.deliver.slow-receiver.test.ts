import { describe, expect, it } from "vitest";
import { FIRST_ATTEMPT_TIMEOUT_MS, RETRY_DELAYS } from "../src/webhooks/deliver";
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

// A receiver that hangs: the first attempts' shorter timeout, and the other endpoints it must not
// delay. test/fixtures/webhooks-deliver.ts drives the consumer with fake batches, a stubbed fetch
// and a stand-in queue.

useDeliveryFakes();

describe("a receiver that hangs", () => {
  const hang = (_url: string, init: RequestInit) =>
    new Promise<Response>((_resolve, reject) => {
      init.signal?.addEventListener("abort", () => reject(init.signal?.reason));
    });

  it("gives first attempts FIRST_ATTEMPT_TIMEOUT_MS and retries the full 10 s", async () => {
    const ep = await endpoint();
    const waits: number[] = [];
    fakes.answer = async (_url, init) => {
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
    fakes.answer = async (url, init) => {
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
    sent.length = 0;
    calls.length = 0;
    const more = [await event("product.update", { product_id: 9 })];
    const again = Date.now();
    await consume([{ body: { event_id: more[0] } }], { firstTimeoutMs: 300 });
    expect(Date.now() - again).toBeLessThan(300);
    expect(calls.filter((c) => c.url === slow.url)).toEqual([]);
    expect(calls).toHaveLength(3);
    expect(sent).toEqual([{ body: { event_id: more[0], endpoint_id: slow.id, attempt: 1 }, delaySeconds: 0 }]);
  });
});
