import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  calls,
  consume,
  deliveries,
  endpoint,
  event,
  fakes,
  logged,
  sent,
  useDeliveryFakes,
} from "./fixtures/webhooks-deliver";
import { get, post } from "./helpers";

// What counts as a failed attempt (timeouts, redirects, network errors), the receivers that end
// delivery (410 Gone, a deleted endpoint, a URL no longer allowed), and what the logs of failures
// hold. test/fixtures/webhooks-deliver.ts drives the consumer with fake batches, a stubbed fetch
// and a stand-in queue.

useDeliveryFakes();

describe("failures", () => {
  it("a timeout is a failed attempt, retried", async () => {
    const ep = await endpoint();
    fakes.answer = (_url, init) =>
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
    fakes.answer = async (_url, init) => {
      await new Promise((r) => setTimeout(r, 30));
      aborted = init.signal?.aborted;
      return new Response("ok");
    };
    await consume([{ body: { event_id: id, endpoint_id: ep.id, attempt: 1 } }]);
    expect(aborted).toBe(false);
  });

  it("does not follow a redirect: a 3xx is a failure", async () => {
    const ep = await endpoint();
    fakes.answer = async () => new Response(null, { status: 302, headers: { location: "https://169.254.169.254/" } });
    const id = await event("order.new", { order_id: 1 });
    const { ids, result } = await consume([{ body: { event_id: id, endpoint_id: ep.id, attempt: 1 } }]);
    expect(calls).toHaveLength(1);
    expect(calls[0].init.redirect).toBe("manual");
    expect(result.retryMessages).toEqual([{ msgId: ids[0], delaySeconds: 5 }]);
    expect(await deliveries(ep.id)).toEqual([expect.objectContaining({ status: 302, outcome: "retrying" })]);
  });

  it("a network error is a failure, and its text never holds the URL", async () => {
    const ep = await endpoint({ url: "https://down.example.com/hook?key=receiver-secret" });
    fakes.answer = async (url) => {
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
    fakes.answer = async (url) => new Response("", { status: url.startsWith(ep.url) ? 410 : 200 });
    const id = await event("order.new", { order_id: 1 });
    const { ids, result } = await consume([{ body: { event_id: id } }]);
    expect(result.explicitAcks).toEqual(ids);
    expect(sent).toEqual([]);
    expect(await deliveries(ep.id)).toEqual([expect.objectContaining({ status: 410, outcome: "disabled" })]);
    const listed = (await get("/v1/webhooks")).json.webhooks.find((w: any) => w.id === ep.id);
    expect(listed).toMatchObject({ enabled: false, disabled_reason: "the receiver answered 410 Gone" });
    expect(listed.disabled_at).toMatch(/^\d{4}-/);
    // Neither new events nor a pending retry reach it.
    calls.length = 0;
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

describe("logs", () => {
  it("never hold a secret or a URL", async () => {
    const a = await endpoint({ url: "https://a.example.com/h?token=url-secret" });
    const b = await endpoint({ format: "quickbutik" });
    fakes.answer = async (url) => (url.startsWith(a.url) ? new Response("", { status: 500 }) : new Response("ok"));
    const id = await event("order.new", { order_id: 1 });
    fakes.sendFails = true;
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
