import { describe, expect, it } from "vitest";
import { UNATTRIBUTED } from "../src/platform/client";
import { basic, get, KEY } from "./helpers";

// Miniflare simulates the [[ratelimits]] bindings of wrangler.toml (AUTH_FAILURES: 100 per 60 s,
// KEY_REQUESTS: 600 per 60 s) with windows aligned to the clock. Each test uses its own client IP.
let n = 0;
const ip = () => `203.0.113.${++n}`;
// A request that came through Cloudflare's edge carries request.cf; CF-Connecting-IP is trusted
// only then (docs/operations.md, "Rate limits").
const EDGE = { colo: "ARN", country: "SE" };

/** Wrong credentials from one IP until the first 429; 250 tries cover a window boundary. */
async function guessUntilRefused(from: string) {
  for (let i = 1; i <= 250; i++) {
    const r = await get("/v1/products", {
      headers: { authorization: basic(`guess-${i}`), "cf-connecting-ip": from },
      cf: EDGE,
    });
    if (r.status === 429) return { tries: i, r };
    expect(r.status).toBe(401);
  }
  throw new Error("never refused");
}

describe("failed authentications per client IP (AUTH_FAILURES)", () => {
  it("turns 401 into 429 with Retry-After and the envelope past 100 failures a minute", async () => {
    const from = ip();
    const { tries, r } = await guessUntilRefused(from);
    expect(tries).toBeGreaterThan(100);
    expect(r.json).toEqual({ code: 429, error: "too many failed authentications, retry later" });
    expect(r.headers.get("retry-after")).toBe("60");
    expect(r.headers.get("x-request-id")).toBeTruthy();
    // Still refused on the next wrong key from there.
    const again = await get("/v1/products", {
      headers: { authorization: basic("nope"), "cf-connecting-ip": from },
      cf: EDGE,
    });
    expect(again.status).toBe(429);
  });

  it("never locks out a valid key: not from another IP, not even from the guessing IP", async () => {
    const from = ip();
    await guessUntilRefused(from);
    const other = await get("/v1/products?limit=1", { headers: { "cf-connecting-ip": ip() } });
    expect(other.status).toBe(200);
    const same = await get("/v1/products?limit=1", { headers: { "cf-connecting-ip": from } });
    expect(same.status).toBe(200);
  });

  it("does not count successful requests", async () => {
    const from = ip();
    for (let i = 0; i < 120; i++) {
      const r = await get("/v1/products?limit=1", { headers: { "cf-connecting-ip": from } });
      expect(r.status).toBe(200);
    }
    const wrong = await get("/v1/products", {
      headers: { authorization: basic("nope"), "cf-connecting-ip": from },
      cf: EDGE,
    });
    expect(wrong.status).toBe(401);
  });
});

describe("which address a failed authentication counts against", () => {
  /** AUTH_FAILURES that records the keys it is asked about (the limit itself is tested above). */
  function recording() {
    const keys: string[] = [];
    const limiter = {
      limit: async ({ key }: { key: string }) => {
        keys.push(key);
        return { success: true };
      },
    } as unknown as RateLimit;
    return { keys, limiter };
  }

  it.each([
    ["through Cloudflare's edge", EDGE, {}, "203.0.113.77"],
    ["without request.cf (not through Cloudflare)", undefined, {}, UNATTRIBUTED],
    ["under local development (LOCAL_DEV=true)", EDGE, { LOCAL_DEV: "true" }, UNATTRIBUTED],
  ])("%s", async (_, cf, vars, expected) => {
    const { keys, limiter } = recording();
    const r = await get("/v1/products", {
      headers: { authorization: basic("nope"), "cf-connecting-ip": "203.0.113.77" },
      cf,
      env: { ...vars, AUTH_FAILURES: limiter },
    });
    expect(r.status).toBe(401);
    expect(keys).toEqual([expected]);
  });

  it("a new CF-Connecting-IP per request does not escape the limit where the header is not Cloudflare's", async () => {
    const { keys, limiter } = recording();
    for (let i = 0; i < 20; i++) {
      await get("/v1/products", {
        headers: { authorization: basic("nope"), "cf-connecting-ip": ip(), "x-forwarded-for": ip() },
        cf: EDGE,
        env: { LOCAL_DEV: "true", AUTH_FAILURES: limiter },
      });
    }
    expect(new Set(keys)).toEqual(new Set([UNATTRIBUTED]));
    expect(keys.length).toBe(20);
  });
});

describe("requests per API key (KEY_REQUESTS, RATE_LIMIT_PER_KEY)", () => {
  it('with RATE_LIMIT_PER_KEY="true", a key over 600 a minute gets 429 with Retry-After; off by default', async () => {
    const on = { RATE_LIMIT_PER_KEY: "true", API_KEY: KEY };
    let refused: Awaited<ReturnType<typeof get>> | undefined;
    // 1,300 tries cover a window boundary.
    for (let i = 0; i < 1300 && !refused; i++) {
      const r = await get("/v1/products?limit=1", { env: on });
      if (r.status === 429) refused = r;
      else if (r.status !== 200) throw new Error(`request ${i}: ${r.status}`);
    }
    expect(refused?.json).toEqual({ code: 429, error: "too many requests for this key, retry later" });
    expect(refused?.headers.get("retry-after")).toBe("60");
    // The same key, over its limit, without the var: not limited at all.
    expect((await get("/v1/products?limit=1", { env: { API_KEY: KEY } })).status).toBe(200);
    expect((await get("/v1/products?limit=1", { env: on })).status).toBe(429);
  }, 60_000);
});
