import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { buildRequest } from "../src/webhooks/attempt";
import { newSecret, signature, signingKey } from "../src/webhooks/sign";

// The signature bytes, checked two independent ways: the Standard Webhooks specification's
// published test vector, and the `standardwebhooks` reference package signing the same input.

describe("webhook-signature", () => {
  it("matches the Standard Webhooks test vector", async () => {
    const key = await signingKey("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    const sig = await signature(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, '{"test": 2432232314}');
    expect(sig).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  });

  it.each([
    ["a JSON body", '{"type":"order.new","timestamp":"2026-01-01T00:00:00.000Z","data":{"order_id":1001}}'],
    ["an empty body", ""],
    ["a query string (quickbutik format)", "token=a%20b&event_type=order.new&order_id=1001"],
    ["non-ASCII text", '{"title":"Tröja – blå"}'],
  ])("equals the reference package's signature for %s, with fresh secrets", async (_name, body) => {
    for (let i = 0; i < 20; i++) {
      const secret = newSecret();
      const id = crypto.randomUUID();
      const ts = 1_700_000_000 + i * 7919;
      const ours = await signature(await signingKey(secret), id, ts, body);
      expect(ours).toBe(new Webhook(secret).sign(id, new Date(ts * 1000), body));
    }
  });

  it("makes secrets of 32 random bytes behind whsec_", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const s = newSecret();
      expect(s).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(atob(s.slice(6))).toHaveLength(32);
      seen.add(s);
    }
    expect(seen.size).toBe(50);
  });

  it("signs each attempt with its own timestamp and the event id as webhook-id", async () => {
    const secret = newSecret();
    const key = await signingKey(secret);
    const target = {
      eventId: "ev-123",
      type: "order.new",
      orderId: 1001,
      productId: null,
      eventAt: Date.UTC(2026, 0, 2, 3, 4, 5),
      endpointId: 1,
      url: "https://h.example.com/in",
      format: "standard",
    };
    const first = await buildRequest(target, key, 1_800_000_000_000);
    const retry = await buildRequest(target, key, 1_800_000_060_000);
    expect(first.headers["webhook-id"]).toBe("ev-123");
    expect(retry.headers["webhook-id"]).toBe("ev-123");
    expect(first.headers["webhook-timestamp"]).toBe("1800000000");
    expect(retry.headers["webhook-timestamp"]).toBe("1800000060");
    const text = new TextDecoder().decode(first.body);
    expect(new TextDecoder().decode(retry.body)).toBe(text);
    expect(text).toBe('{"type":"order.new","timestamp":"2026-01-02T03:04:05.000Z","data":{"order_id":1001}}');
    expect(first.headers["webhook-signature"]).not.toBe(retry.headers["webhook-signature"]);
    const ref = new Webhook(secret);
    expect(first.headers["webhook-signature"]).toBe(ref.sign("ev-123", new Date(1_800_000_000_000), text));
  });

  it("signs a quickbutik GET's query string as sent, without its ?, the receiver's own parameters included", async () => {
    const secret = newSecret();
    const target = {
      eventId: "ev-456",
      type: "order.new",
      orderId: 1001,
      productId: null,
      eventAt: 0,
      endpointId: 1,
      url: "https://h.example.com/in?token=a b",
      format: "quickbutik",
    };
    const req = await buildRequest(target, await signingKey(secret), 1_800_000_000_000);
    expect(req.method).toBe("GET");
    // As the URL is serialised, and so sent: the space of the receiver's own token encoded.
    expect(req.url).toBe("https://h.example.com/in?token=a+b&event_type=order.new&order_id=1001");
    const query = "token=a+b&event_type=order.new&order_id=1001";
    expect(req.headers["webhook-signature"]).toBe(
      new Webhook(secret).sign("ev-456", new Date(1_800_000_000_000), query),
    );
  });
});
