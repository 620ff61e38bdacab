import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sha256 } from "../src/platform/hash";
import { call, get, KEY, post, uid } from "./helpers";

// One sign-in per browser (docs/admin.md, "Sessions"): any tab reads the session and its CSRF
// token, a second sign-in replaces the browser's session, sign-out here or everywhere, the keys
// page's list of live sessions, the idle timeout, and `Cache-Control: no-store` on every answer
// to a secret key or a session.

const NO_KEY = { authorization: "" };

async function signIn(key: string, extra: Record<string, string> = {}) {
  const r = await post("/v1/sessions", { key }, { headers: { ...NO_KEY, ...extra } });
  expect(r.status, r.text).toBe(201);
  const value = /^__Host-session=([0-9a-f]{64});/.exec(r.headers.get("set-cookie") ?? "")?.[1] ?? "";
  return { cookie: `__Host-session=${value}`, value, csrf: r.json.csrf_token as string, r };
}

const withCookie = (cookie: string, extra: Record<string, string> = {}) => ({ ...NO_KEY, cookie, ...extra });

async function storedKey(scopes: string[]) {
  const r = await post("/v1/keys", { name: `tabs ${uid("k")}`, type: "secret", scopes });
  expect(r.status).toBe(201);
  return r.json as { id: number; key: string; name: string };
}

describe("GET /v1/sessions/current", () => {
  it("answers any tab the session's CSRF token, its ends and its key", async () => {
    const { cookie, csrf, r: signedIn } = await signIn(KEY);
    const r = await get("/v1/sessions/current", { headers: withCookie(cookie) });
    expect(r.status).toBe(200);
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(r.json).toEqual({
      csrf_token: csrf,
      expires_at: signedIn.json.expires_at,
      idle_expires_at: expect.any(String),
      key: signedIn.json.key,
      currency: "SEK",
      timezone: "UTC",
    });
    const idleLeft = Date.parse(r.json.idle_expires_at) - Date.now();
    expect(idleLeft).toBeGreaterThan(29 * 60_000);
    expect(idleLeft).toBeLessThanOrEqual(30 * 60_000);
    // The token it answers writes.
    const write = await post(
      "/v1/products",
      { title: "Tab mug", price: 1, sku: uid() },
      { headers: withCookie(cookie, { "x-csrf-token": r.json.csrf_token }) },
    );
    expect(write.status, write.text).toBe(200);
  });

  it("is 400 to a key header, 401 without a live session", async () => {
    expect((await get("/v1/sessions/current")).status).toBe(400);
    expect(
      (await get("/v1/sessions/current", { headers: withCookie(`__Host-session=${"1".repeat(64)}`) })).status,
    ).toBe(401);
  });

  it("a key with none of the admin's read scopes reads its own session", async () => {
    const k = await storedKey(["webhooks"]);
    const { cookie } = await signIn(k.key);
    const r = await get("/v1/sessions/current", { headers: withCookie(cookie) });
    expect(r.status).toBe(200);
    expect(r.json.key.scopes).toEqual(["webhooks"]);
  });
});

describe("a second sign-in in the same browser", () => {
  it("replaces the browser's session: the old cookie ends, the new token comes from a session read", async () => {
    const first = await signIn(KEY);
    const second = await signIn(KEY, { cookie: first.cookie });
    expect((await get("/v1/orders", { headers: withCookie(first.cookie) })).status).toBe(401);
    const current = await get("/v1/sessions/current", { headers: withCookie(second.cookie) });
    expect(current.json.csrf_token).toBe(second.csrf);
    // A tab still holding the first token is refused, and recovers by reading the session again.
    const stale = await post(
      "/v1/products",
      { title: "x", price: 1 },
      { headers: withCookie(second.cookie, { "x-csrf-token": first.csrf }) },
    );
    expect(stale.status).toBe(403);
    const retried = await post(
      "/v1/products",
      { title: "Second tab mug", price: 1, sku: uid() },
      { headers: withCookie(second.cookie, { "x-csrf-token": current.json.csrf_token }) },
    );
    expect(retried.status, retried.text).toBe(200);
  });
});

describe("sign-out everywhere: DELETE /v1/sessions", () => {
  it("ends every session of the signed-in key, and no other key's", async () => {
    const k = await storedKey(["orders:read"]);
    const other = await storedKey(["orders:read"]);
    const a = await signIn(k.key);
    const b = await signIn(k.key);
    const c = await signIn(other.key);
    const refused = await call("DELETE", "/v1/sessions", { headers: withCookie(a.cookie) });
    expect(refused.status).toBe(403);
    const r = await call("DELETE", "/v1/sessions", { headers: withCookie(a.cookie, { "x-csrf-token": a.csrf }) });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ ended: 2 });
    expect(r.headers.get("set-cookie")).toContain("Max-Age=0");
    for (const s of [a, b]) expect((await get("/v1/orders", { headers: withCookie(s.cookie) })).status).toBe(401);
    expect((await get("/v1/orders", { headers: withCookie(c.cookie) })).status).toBe(200);
  });

  it("for API_KEY ends the sessions of that entry of API_KEY only", async () => {
    const a = await signIn(KEY);
    const b = await signIn("second-key");
    const r = await call("DELETE", "/v1/sessions", { headers: withCookie(a.cookie, { "x-csrf-token": a.csrf }) });
    expect(r.status).toBe(200);
    expect((await get("/v1/orders", { headers: withCookie(a.cookie) })).status).toBe(401);
    expect((await get("/v1/orders", { headers: withCookie(b.cookie) })).status).toBe(200);
  });

  it("is 400 with a key header", async () => {
    expect((await call("DELETE", "/v1/sessions")).status).toBe(400);
  });
});

describe("the keys page's sessions: GET /v1/sessions, DELETE /v1/sessions/{id}", () => {
  it("lists live sessions with their key, browser and ends; one ends by id", async () => {
    const k = await storedKey(["orders:read"]);
    const live = await signIn(k.key, { "user-agent": "Chromium test" });
    const ended = await signIn(k.key);
    await call("DELETE", "/v1/sessions/current", { headers: withCookie(ended.cookie, { "x-csrf-token": ended.csrf }) });
    const r = await get("/v1/sessions");
    expect(r.status).toBe(200);
    expect(r.headers.get("cache-control")).toBe("no-store");
    const mine = r.json.sessions.filter((s: any) => s.key.id === k.id);
    expect(mine).toEqual([
      {
        id: await sha256(live.value),
        key: { id: k.id, name: k.name },
        created_at: expect.any(String),
        last_seen_at: expect.any(String),
        expires_at: expect.any(String),
        user_agent: "Chromium test",
        current: false,
      },
    ]);
    expect((await call("DELETE", `/v1/sessions/${mine[0].id}`)).status).toBe(204);
    expect((await get("/v1/orders", { headers: withCookie(live.cookie) })).status).toBe(401);
    const again = await call("DELETE", `/v1/sessions/${mine[0].id}`);
    expect(again.status).toBe(404);
    expect((await call("DELETE", "/v1/sessions/nope")).status).toBe(400);
  });

  it("marks the caller's own session, and needs the scope keys", async () => {
    const withKeys = await storedKey(["keys"]);
    const s = await signIn(withKeys.key);
    const r = await get("/v1/sessions", { headers: withCookie(s.cookie) });
    expect(r.json.sessions.find((x: any) => x.current)?.id).toBe(await sha256(s.value));
    const without = await storedKey(["orders:read"]);
    const t = await signIn(without.key);
    expect((await get("/v1/sessions", { headers: withCookie(t.cookie) })).status).toBe(403);
  });
});

describe("the idle timeout", () => {
  const setSeen = async (value: string, at: number) =>
    env.DB.prepare("UPDATE sessions SET last_seen_at = ? WHERE id = ?")
      .bind(at, await sha256(value))
      .run();

  it("a session unused for 30 minutes has ended; one used within them goes on", async () => {
    const idle = await signIn(KEY);
    await setSeen(idle.value, Date.now() - 30 * 60_000 - 1000);
    expect((await get("/v1/orders", { headers: withCookie(idle.cookie) })).status).toBe(401);
    const busy = await signIn(KEY);
    await setSeen(busy.value, Date.now() - 29 * 60_000);
    expect((await get("/v1/orders", { headers: withCookie(busy.cookie) })).status).toBe(200);
    // That use counted: the session has 30 minutes again.
    const row = await env.DB.prepare("SELECT last_seen_at FROM sessions WHERE id = ?")
      .bind(await sha256(busy.value))
      .first<{ last_seen_at: number }>();
    expect(Date.now() - (row?.last_seen_at ?? 0)).toBeLessThan(60_000);
  });

  it("SESSION_IDLE_MINUTES sets it", async () => {
    const s = await signIn(KEY);
    await setSeen(s.value, Date.now() - 6 * 60_000);
    const headers = withCookie(s.cookie);
    expect((await get("/v1/orders", { headers, env: { SESSION_IDLE_MINUTES: "5" } })).status).toBe(401);
  });
});

describe("Cache-Control: no-store", () => {
  it.each([
    ["a secret key's read", () => get("/v1/orders")],
    ["a secret key's write", () => post("/v1/products", { title: "NS", price: 1, sku: uid() })],
    ["a refusal of a wrong key", () => get("/v1/orders", { headers: { authorization: "Bearer sk_nope" } })],
    ["a stored key's read", async () => get("/v1/keys")],
  ])("on %s", async (_, run) => {
    expect((await run()).headers.get("cache-control")).toBe("no-store");
  });

  it("on a session's reads, refusals included", async () => {
    const { cookie } = await signIn(KEY);
    expect(
      (await get("/v1/orders?include_details=true", { headers: withCookie(cookie) })).headers.get("cache-control"),
    ).toBe("no-store");
    const refused = await post("/v1/products", { title: "x", price: 1 }, { headers: withCookie(cookie) });
    expect(refused.headers.get("cache-control")).toBe("no-store");
  });

  it("not on the storefront catalogue, which keeps its own caching", async () => {
    const pk = await post("/v1/keys", { name: "shop", type: "publishable", allowed_origins: ["https://s.example"] });
    const r = await get("/v1/products", { headers: { ...NO_KEY, "x-publishable-key": pk.json.key } });
    expect(r.status).toBe(200);
    expect(r.headers.get("cache-control")).toBe("no-cache");
  });
});
