import { describe, expect, it } from "vitest";
import { basic, get, KEY, post, uid } from "./helpers";

// Basic authentication through Hono's basicAuth (docs/api.md, "Authentication"): its refusals are
// answered as every failed authentication is (counted per address, our envelope, the challenge
// rules), and what it admits goes on to the scope checks.

const EDGE = { colo: "ARN" };
let n = 0;
const ip = () => `192.0.2.${++n}`;

/** AUTH_FAILURES that records what it is asked and answers `success`. */
function limiter(success = true) {
  const asked: string[] = [];
  const limit = async ({ key }: { key: string }) => {
    asked.push(key);
    return { success };
  };
  return { asked, AUTH_FAILURES: { limit } };
}

/** base64 of the UTF-8 bytes of `text` (btoa takes Latin-1 only). */
const utf8Basic = (key: string) => `Basic ${btoa(String.fromCharCode(...new TextEncoder().encode(`${key}:${key}`)))}`;

const REFUSED = [
  ["a wrong key", basic("nope")],
  ["user and password differing", basic(KEY, "second-key")],
  ["an empty user name and password", basic("")],
  ["a key only as user name", `Basic ${btoa(`${KEY}:`)}`],
  ["malformed base64", "Basic !!!not-base64!!!"],
  ["no colon", `Basic ${btoa(KEY)}`],
  ["another scheme", `Digest username="${KEY}"`],
  ["the scheme alone", "Basic"],
] as const;

describe("a Basic header basicAuth refuses", () => {
  it.each(REFUSED)(
    "%s: 401, the envelope, the challenge, no-store, a request id; counted once",
    async (_, authorization) => {
      const from = ip();
      const { asked, AUTH_FAILURES } = limiter();
      const r = await get("/v1/products", {
        headers: { authorization, "cf-connecting-ip": from },
        cf: EDGE,
        env: { AUTH_FAILURES } as never,
      });
      expect(r.status).toBe(401);
      expect(r.json).toEqual({ code: 401, error: "missing or invalid credentials" });
      expect(r.headers.get("www-authenticate")).toBe('Basic realm="store"');
      expect(r.headers.get("content-type")).toMatch(/^application\/json/);
      expect(r.headers.get("cache-control")).toBe("no-store");
      expect(r.headers.get("x-request-id")).toBeTruthy();
      expect(asked).toEqual([from]);
    },
  );

  it.each([
    ["X-Requested-With", { "x-requested-with": "XMLHttpRequest" }],
    ["the admin's session cookie", { cookie: `__Host-session=${"0".repeat(64)}` }],
  ])("with %s: the same 401 without the challenge", async (_, extra) => {
    const r = await get("/v1/products", { headers: { authorization: basic("nope"), ...extra } });
    expect(r.status).toBe(401);
    expect(r.json).toEqual({ code: 401, error: "missing or invalid credentials" });
    expect(r.headers.get("www-authenticate")).toBeNull();
  });

  it("past the failed-authentication limit: 429 with Retry-After instead of 401", async () => {
    const { AUTH_FAILURES } = limiter(false);
    const r = await get("/v1/products", { headers: { authorization: basic("nope") }, env: { AUTH_FAILURES } as never });
    expect(r.status).toBe(429);
    expect(r.json).toEqual({ code: 429, error: "too many failed authentications, retry later" });
    expect(r.headers.get("retry-after")).toBe("60");
    expect(r.headers.get("www-authenticate")).toBeNull();
  });
});

describe("a Basic header basicAuth admits", () => {
  it("the bootstrap key and a stored secret key, uncounted; the key's scopes still apply (403, not 401)", async () => {
    const made = await post("/v1/keys", { name: uid("reader"), type: "secret", scopes: ["orders:read"] });
    const { asked, AUTH_FAILURES } = limiter();
    const env = { AUTH_FAILURES } as never;
    expect((await get("/v1/products?limit=1", { env })).status).toBe(200);
    expect((await get("/v1/orders?limit=1", { headers: { authorization: basic(made.json.key) }, env })).status).toBe(
      200,
    );
    const refused = await get("/v1/products", { headers: { authorization: basic(made.json.key) }, env });
    expect(refused.status).toBe(403);
    expect(refused.json).toEqual({ code: 403, error: "this key lacks the scope products:read" });
    expect(refused.headers.get("www-authenticate")).toBeNull();
    expect(asked).toEqual([]);
  });

  it("a key with non-ASCII characters, read as UTF-8 (RFC 7617)", async () => {
    const key = "nyckel-åäö";
    const env = { API_KEY: `${KEY},${key}` };
    expect((await get("/v1/products?limit=1", { headers: { authorization: utf8Basic(key) }, env })).status).toBe(200);
    expect(
      (await get("/v1/products?limit=1", { headers: { authorization: utf8Basic("nyckel-aao") }, env })).status,
    ).toBe(401);
  });

  it("a publishable key is no Basic credential", async () => {
    const made = await post("/v1/keys", { name: uid("shop"), type: "publishable" });
    const r = await get("/v1/products", { headers: { authorization: basic(made.json.key) } });
    expect(r.status).toBe(401);
    expect(r.headers.get("www-authenticate")).toBe('Basic realm="store"');
  });
});
