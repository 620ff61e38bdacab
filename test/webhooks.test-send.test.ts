import { env } from "cloudflare:workers";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import { bodyText, call, get, post } from "./helpers";

// POST /v1/webhooks/{id}/test: one signed webhook.test attempt, answered and logged
// (docs/webhooks.md, "Webhooks"). fetch is stubbed: no request leaves the test.

let fetchSpy: MockInstance<typeof fetch>;
let answer: () => Promise<Response>;
beforeEach(() => {
  answer = async () => new Response(null, { status: 204 });
  fetchSpy = vi.spyOn(globalThis, "fetch").mockImplementation(() => answer());
});
afterEach(() => fetchSpy.mockRestore());

async function endpoint(format = "standard", url = "https://receiver.example/hooks?shared=1") {
  const r = await post("/v1/webhooks", { url, events: ["*"], format });
  expect(r.status).toBe(201);
  return r.json as { id: number; secret: string };
}

describe("POST /v1/webhooks/{id}/test", () => {
  it("sends a signed webhook.test in the standard format, answers and logs it", async () => {
    const e = await endpoint();
    const r = await post(`/v1/webhooks/${e.id}/test`, undefined);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({
      event_id: expect.stringMatching(/^test_/),
      event_type: "webhook.test",
      status: 204,
      error: null,
      duration_ms: expect.any(Number),
      outcome: "delivered",
    });
    const [url, init] = fetchSpy.mock.calls[0] as [string, RequestInit];
    expect(url).toBe("https://receiver.example/hooks?shared=1");
    const headers = init.headers as Record<string, string>;
    expect(headers["webhook-id"]).toBe(r.json.event_id);
    expect(headers["webhook-signature"]).toMatch(/^v1,/);
    expect(JSON.parse(bodyText(init.body))).toMatchObject({ type: "webhook.test", data: {} });
    const log = await get(`/v1/webhooks/${e.id}/deliveries`);
    expect(log.json.deliveries[0]).toMatchObject({ event_id: r.json.event_id, status: 204, outcome: "delivered" });
  });

  it("in the quickbutik format: GET with event_type in the query, the receiver's own query kept", async () => {
    const e = await endpoint("quickbutik");
    await post(`/v1/webhooks/${e.id}/test`, undefined);
    const [url, init] = fetchSpy.mock.calls[0] as [string, RequestInit];
    expect(init.method).toBe("GET");
    expect(url).toBe("https://receiver.example/hooks?shared=1&event_type=webhook.test");
    // Signed like a delivery of that format: over its query, which verifies with no other.
    const headers = init.headers as Record<string, string>;
    const wh = new Webhook(e.secret);
    const raw = { jsonParse: false };
    expect(wh.verify("shared=1&event_type=webhook.test", headers, raw)).toBeUndefined();
    expect(() => wh.verify("shared=1&event_type=order.new", headers, raw)).toThrow(WebhookVerificationError);
    expect(() => wh.verify("", headers, raw)).toThrow(WebhookVerificationError);
  });

  it("a refusing receiver: outcome failed with its status", async () => {
    answer = async () => new Response("no", { status: 500 });
    const e = await endpoint();
    const r = await post(`/v1/webhooks/${e.id}/test`, undefined);
    expect(r.json).toMatchObject({ status: 500, outcome: "failed" });
  });

  it("a URL the rules refuse now is not called", async () => {
    const row = await env.DB.prepare(
      `INSERT INTO webhook_endpoints (url, events, format, secret, created_at)
       VALUES ('https://127.0.0.1/hooks', '["*"]', 'standard', 'whsec_dGVzdA==', 0) RETURNING id`,
    ).first<{ id: number }>();
    const r = await post(`/v1/webhooks/${row?.id}/test`, undefined);
    expect(r.json).toMatchObject({ status: null, outcome: "failed", error: expect.stringMatching(/^url: /) });
    expect(fetchSpy).not.toHaveBeenCalled();
  });

  it.each([
    ["999999", 404],
    ["abc", 400],
  ])("/v1/webhooks/%s/test is %i", async (id, status) => {
    expect((await call("POST", `/v1/webhooks/${id}/test`)).status).toBe(status);
  });
});
