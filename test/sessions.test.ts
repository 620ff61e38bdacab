import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { sha256 } from "../src/platform/hash";
import { sessionListed, sessionOut } from "../src/sessions/openapi";
import { purgeSessions, SESSION_TTL_MS } from "../src/sessions/store";
import { call, get, KEY, post, uid } from "./helpers";

// POST /v1/sessions and DELETE /v1/sessions/current: the admin's sign-in and sign-out, and how a
// session cookie authenticates /v1 (docs/admin.md, "Sessions").

const NO_KEY = { authorization: "" };

/** Signs in with `key`; answers the cookie header to send back, the CSRF token and the raw answer. */
async function signIn(key: string) {
  const r = await post("/v1/sessions", { key }, { headers: NO_KEY });
  expect(r.status, r.text).toBe(201);
  const setCookie = r.headers.get("set-cookie") ?? "";
  const value = /^__Host-session=([0-9a-f]{64});/.exec(setCookie)?.[1] ?? "";
  return { cookie: `__Host-session=${value}`, value, csrf: r.json.csrf_token as string, r, setCookie };
}

const withCookie = (cookie: string, extra: Record<string, string> = {}) => ({ ...NO_KEY, cookie, ...extra });

async function storedKey(scopes: string[]) {
  const r = await post("/v1/keys", { name: `admin ${uid("k")}`, type: "secret", scopes });
  expect(r.status).toBe(201);
  return r.json as { id: number; key: string; name: string };
}

describe("POST /v1/sessions", () => {
  it("signs in with the environment key: an HttpOnly, Secure, SameSite=Strict __Host- cookie", async () => {
    const { setCookie, r, value } = await signIn(KEY);
    expect(setCookie).toMatch(
      /^__Host-session=[0-9a-f]{64}; Max-Age=43200; Path=\/; HttpOnly; Secure; SameSite=Strict$/,
    );
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(r.json).toEqual({
      csrf_token: expect.stringMatching(/^[0-9a-f]{64}$/),
      expires_at: expect.any(String),
      idle_expires_at: expect.any(String),
      key: { id: null, name: "API_KEY", scopes: expect.arrayContaining(["orders:write", "keys"]) },
      currency: "SEK",
      timezone: "UTC",
    });
    const left = Date.parse(r.json.expires_at) - Date.now();
    expect(left).toBeGreaterThan(SESSION_TTL_MS - 60_000);
    expect(left).toBeLessThanOrEqual(SESSION_TTL_MS);
    // Only hashes are stored.
    const row = await env.DB.prepare("SELECT * FROM sessions WHERE id = ?")
      .bind(await sha256(value))
      .first<any>();
    expect(row).toMatchObject({ key_id: null, key_hash: await sha256(KEY), revoked_at: null });
    expect(row.csrf).toBe(await sha256(r.json.csrf_token));
    expect(JSON.stringify(row)).not.toContain(value);
    expect(JSON.stringify(row)).not.toContain(r.json.csrf_token);
  });

  it("signs in with a stored secret key, whose scopes the session carries", async () => {
    const k = await storedKey(["orders:read"]);
    const { cookie, r } = await signIn(k.key);
    expect(r.json.key).toEqual({ id: k.id, name: k.name, scopes: ["orders:read"] });
    expect((await get("/v1/orders", { headers: withCookie(cookie) })).status).toBe(200);
    const refused = await get("/v1/products", { headers: withCookie(cookie) });
    expect(refused.status).toBe(403);
    expect(refused.json.error).toBe("this key lacks the scope products:read");
  });

  it.each([
    ["a wrong key", { key: "not-a-key" }],
    ["a made-up sk_ key", { key: `sk_${"0".repeat(48)}` }],
  ])("refuses %s with 401 and sets no cookie", async (_, body) => {
    const r = await post("/v1/sessions", body, { headers: NO_KEY });
    expect(r.status).toBe(401);
    expect(r.json.error).toBe("missing or invalid credentials");
    expect(r.headers.get("set-cookie")).toBeNull();
    expect(r.headers.get("www-authenticate")).toBeNull();
  });

  it("refuses a publishable key: a session is for secret keys", async () => {
    const pk = await post("/v1/keys", { name: "shop", type: "publishable", allowed_origins: ["https://s.example"] });
    const r = await post("/v1/sessions", { key: pk.json.key }, { headers: NO_KEY });
    expect(r.status).toBe(401);
  });

  it.each([
    [{}, "key: must be a secret key"],
    [{ key: 42 }, "key: must be a secret key"],
    [{ key: "   " }, "key: must be a secret key"],
    [{ key: "x".repeat(201) }, "key: must be a secret key"],
  ])("refuses %j with 400 naming the field", async (body, error) => {
    const r = await post("/v1/sessions", body, { headers: NO_KEY });
    expect(r.status).toBe(400);
    expect(r.json.errors.join("\n")).toContain(error);
  });

  it("refuses a sign-in from another site's page", async () => {
    const r = await post("/v1/sessions", { key: KEY }, { headers: { ...NO_KEY, origin: "https://evil.example" } });
    expect(r.status).toBe(403);
    expect(r.headers.get("set-cookie")).toBeNull();
    const same = await post("/v1/sessions", { key: KEY }, { headers: { ...NO_KEY, origin: "http://localhost" } });
    expect(same.status).toBe(201);
  });

  it("refuses a body that is not an object", async () => {
    const r = await post("/v1/sessions", [KEY], { headers: NO_KEY });
    expect(r.status).toBe(400);
    expect(r.json.error).toBe("body must be an object with the key");
  });
});

describe("a session cookie on /v1", () => {
  it("reads without a CSRF token, and answers no CORS even with an Origin", async () => {
    const { cookie } = await signIn(KEY);
    const r = await get("/v1/orders", { headers: withCookie(cookie, { origin: "https://evil.example" }) });
    expect(r.status).toBe(200);
    expect(r.headers.get("access-control-allow-origin")).toBeNull();
  });

  it.each([
    ["no X-CSRF-Token", {}, "a write with a session needs its X-CSRF-Token header"],
    ["a wrong X-CSRF-Token", { "x-csrf-token": "f".repeat(64) }, "X-CSRF-Token does not match the session"],
  ])("refuses a write with %s: 403", async (_, extra, error) => {
    const { cookie } = await signIn(KEY);
    const r = await post("/v1/products", { title: "x", price: 1 }, { headers: withCookie(cookie, extra) });
    expect(r.status).toBe(403);
    expect(r.json.error).toBe(error);
  });

  it("refuses a write from another origin even with the right token", async () => {
    const { cookie, csrf } = await signIn(KEY);
    const headers = withCookie(cookie, { "x-csrf-token": csrf, origin: "https://evil.example" });
    const r = await post("/v1/products", { title: "x", price: 1 }, { headers });
    expect(r.status).toBe(403);
    expect(r.json.error).toBe("a session may not write from origin https://evil.example");
  });

  it("writes with the session's token from its own origin", async () => {
    const { cookie, csrf } = await signIn(KEY);
    const headers = withCookie(cookie, { "x-csrf-token": csrf, origin: "http://localhost" });
    const r = await post("/v1/products", { title: "Admin mug", price: 10, sku: uid() }, { headers });
    expect(r.status, r.text).toBe(200);
  });

  it("does not accept another session's token", async () => {
    const a = await signIn(KEY);
    const b = await signIn(KEY);
    const r = await post(
      "/v1/products",
      { title: "x", price: 1 },
      { headers: withCookie(a.cookie, { "x-csrf-token": b.csrf }) },
    );
    expect(r.status).toBe(403);
  });

  it.each([["__Host-session=abc"], [`__Host-session=${"0".repeat(64)}`]])(
    "refuses an unknown cookie %s: 401",
    async (cookie) => {
      expect((await get("/v1/orders", { headers: withCookie(cookie) })).status).toBe(401);
    },
  );

  it("a 401 with a cookie, or to a script that says so (X-Requested-With), has no Basic challenge", async () => {
    const cookie = await get("/v1/orders", { headers: withCookie(`__Host-session=${"0".repeat(64)}`) });
    expect(cookie.status).toBe(401);
    expect(cookie.headers.get("www-authenticate")).toBeNull();
    const script = await get("/v1/orders", { headers: { ...NO_KEY, "x-requested-with": "XMLHttpRequest" } });
    expect(script.headers.get("www-authenticate")).toBeNull();
    // Anything else is challenged, as every client is promised: a browser's fetch included.
    for (const mode of ["cors", "navigate", "same-origin"]) {
      const other = await get("/v1/orders", { headers: { ...NO_KEY, "sec-fetch-mode": mode } });
      expect(other.headers.get("www-authenticate"), mode).toBe('Basic realm="store"');
    }
  });

  it("a key header wins over the cookie", async () => {
    const k = await storedKey(["orders:read"]);
    const { cookie } = await signIn(KEY);
    const r = await get("/v1/products", { headers: { authorization: `Bearer ${k.key}`, cookie } });
    expect(r.status).toBe(403);
  });
});

describe("the end of a session", () => {
  it("DELETE /v1/sessions/current signs out at once and clears the cookie", async () => {
    const { cookie, csrf, value } = await signIn(KEY);
    const refused = await call("DELETE", "/v1/sessions/current", { headers: withCookie(cookie) });
    expect(refused.status).toBe(403);
    const r = await call("DELETE", "/v1/sessions/current", { headers: withCookie(cookie, { "x-csrf-token": csrf }) });
    expect(r.status).toBe(204);
    expect(r.headers.get("set-cookie")).toBe("__Host-session=; Max-Age=0; Path=/; HttpOnly; Secure; SameSite=Strict");
    expect((await get("/v1/orders", { headers: withCookie(cookie) })).status).toBe(401);
    const row = await env.DB.prepare("SELECT revoked_at FROM sessions WHERE id = ?")
      .bind(await sha256(value))
      .first<any>();
    expect(row.revoked_at).toEqual(expect.any(Number));
  });

  it("DELETE /v1/sessions/current with a key header instead is 400", async () => {
    const r = await call("DELETE", "/v1/sessions/current");
    expect(r.status).toBe(400);
    expect(r.json.error).toContain("no session cookie");
  });

  it("revoking a stored key ends its sessions at once", async () => {
    const k = await storedKey(["orders:read", "keys"]);
    const { cookie } = await signIn(k.key);
    expect((await get("/v1/orders", { headers: withCookie(cookie) })).status).toBe(200);
    expect((await call("DELETE", `/v1/keys/${k.id}`)).status).toBe(204);
    expect((await get("/v1/orders", { headers: withCookie(cookie) })).status).toBe(401);
  });

  it("an expired session is refused", async () => {
    const { cookie, value } = await signIn(KEY);
    await env.DB.prepare("UPDATE sessions SET expires_at = ? WHERE id = ?")
      .bind(Date.now() - 1, await sha256(value))
      .run();
    expect((await get("/v1/orders", { headers: withCookie(cookie) })).status).toBe(401);
  });

  it("a stored key's expiry ends its session, which says so when signing in", async () => {
    const expires = new Date(Date.now() + 60 * 60 * 1000).toISOString();
    const k = await post("/v1/keys", { name: "short", type: "secret", scopes: ["orders:read"], expires_at: expires });
    const { r, cookie } = await signIn(k.json.key);
    expect(Date.parse(r.json.expires_at)).toBe(Date.parse(expires));
    await env.DB.prepare("UPDATE api_keys SET expires_at = ? WHERE id = ?")
      .bind(Date.now() - 1, k.json.id)
      .run();
    expect((await get("/v1/orders", { headers: withCookie(cookie) })).status).toBe(401);
  });

  it("rotating the environment key out ends its sessions", async () => {
    const { cookie } = await signIn("second-key");
    expect((await get("/v1/orders", { headers: withCookie(cookie) })).status).toBe(200);
    const r = await get("/v1/orders", { headers: withCookie(cookie), env: { API_KEY: "test-key" } });
    expect(r.status).toBe(401);
  });

  it("the cron forgets sessions that ended over a day ago", async () => {
    const { value } = await signIn(KEY);
    const id = await sha256(value);
    await purgeSessions(env.DB, Date.now());
    expect(await env.DB.prepare("SELECT id FROM sessions WHERE id = ?").bind(id).first()).not.toBeNull();
    await purgeSessions(env.DB, Date.now() + SESSION_TTL_MS + 86_400_001);
    expect(await env.DB.prepare("SELECT id FROM sessions WHERE id = ?").bind(id).first()).toBeNull();
  });
});

describe("OpenAPI: sessions", () => {
  it("documents the answers the routes really give, and no field beyond them", async () => {
    const { cookie, r } = await signIn(KEY);
    expect(sessionOut.strict().parse(r.json)).toEqual(r.json);
    const current = (await get("/v1/sessions/current", { headers: withCookie(cookie) })).json;
    expect(sessionOut.strict().parse(current)).toEqual(current);
    const list = (await get("/v1/sessions")).json;
    expect(list.sessions.length).toBeGreaterThan(0);
    expect(z.strictObject({ sessions: z.array(sessionListed.strict()) }).parse(list)).toEqual(list);
  });
});
