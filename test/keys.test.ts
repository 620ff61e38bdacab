import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { VERIFY_TTL_MS } from "../src/keys/auth";
import { keyCreated, keyOut } from "../src/keys/openapi";
import { wrapD1 } from "./d1-wrap";
import { basic, call, get, post } from "./helpers";

// POST/GET/DELETE /v1/keys and how a stored key authenticates (docs/keys.md).

const secret = (scopes: string[], extra: Record<string, unknown> = {}) =>
  post("/v1/keys", { name: `key ${scopes.join(",")}`, type: "secret", scopes, ...extra });
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

afterEach(() => vi.restoreAllMocks());

describe("POST /v1/keys", () => {
  it("answers a secret key once, with its recognisable prefix, and stores only its hash", async () => {
    const r = await secret(["products:read"]);
    expect(r.status).toBe(201);
    expect(r.json.key).toMatch(/^sk_[0-9a-f]{48}$/);
    expect(r.json).toMatchObject({ type: "secret", scopes: ["products:read"], revoked: false, last_used_at: null });
    expect(r.json.prefix).toBe(r.json.key.slice(0, 11));
    const row = await env.DB.prepare("SELECT * FROM api_keys WHERE id = ?").bind(r.json.id).first<any>();
    expect(JSON.stringify(row)).not.toContain(r.json.key);
    expect(row.hash).toMatch(/^[0-9a-f]{64}$/);
    const listed = await get("/v1/keys");
    const mine = listed.json.keys.find((k: any) => k.id === r.json.id);
    expect(mine).not.toHaveProperty("key");
    expect(JSON.stringify(listed.json)).not.toContain(r.json.key);
  });

  it("answers a publishable key with pk_", async () => {
    const r = await post("/v1/keys", { name: "shop", type: "publishable", allowed_origins: ["https://shop.example"] });
    expect(r.status).toBe(201);
    expect(r.json.key).toMatch(/^pk_[0-9a-f]{48}$/);
    expect(r.json.allowed_origins).toEqual(["https://shop.example"]);
  });

  it.each([
    [{ type: "secret", scopes: ["orders:read"] }, "name: is required"],
    [{ name: "x", type: "other", scopes: [] }, "type: must be secret or publishable"],
    [{ name: "x", type: "secret", scopes: ["everything"] }, 'scopes: "everything" is not a secret scope'],
    [
      { name: "x", type: "secret", scopes: [] },
      "scopes: a secret key needs at least one of products:read, products:write, orders:read, orders:write, webhooks, keys",
    ],
    [{ name: "x", type: "secret", scopes: ["keys", "keys"] }, "scopes: must not repeat a scope"],
    [{ name: "x", type: "publishable", scopes: ["orders:write"] }, 'scopes: "orders:write" is not a publishable scope'],
    [{ name: "x", type: "publishable", allowed_origins: ["*"] }, "allowed_origins[0]: must be an exact origin"],
    [{ name: "x", type: "publishable", allowed_origins: ["https://a.example/shop"] }, "allowed_origins[0]: must be"],
    [{ name: "x", type: "secret", scopes: ["keys"], allowed_origins: ["https://a.example"] }, "allowed_origins: only"],
    [
      { name: "x", type: "secret", scopes: ["keys"], expires_at: "2001-01-01T00:00:00Z" },
      "expires_at: must be in the future",
    ],
    [{ name: "x", type: "secret", scopes: ["keys"], expires_at: "tomorrow" }, "expires_at: must be an ISO 8601"],
  ])("refuses %j with 400 naming the field", async (body, error) => {
    const r = await post("/v1/keys", body);
    expect(r.status).toBe(400);
    expect(r.json.error).toBe("invalid body");
    expect(r.json.errors.join("\n")).toContain(error);
  });

  it("refuses a key that would grant scopes the creating key lacks", async () => {
    const manager = (await secret(["keys", "orders:read"])).json.key;
    const r = await post(
      "/v1/keys",
      { name: "wider", type: "secret", scopes: ["orders:write"] },
      { headers: bearer(manager) },
    );
    expect(r.status).toBe(403);
    expect(r.json.error).toBe("this key cannot grant scopes it lacks: orders:write");
    expect(
      (
        await post(
          "/v1/keys",
          { name: "narrow", type: "secret", scopes: ["orders:read"] },
          { headers: bearer(manager) },
        )
      ).status,
    ).toBe(201);
  });
});

describe("a stored secret key", () => {
  it("works through Basic (key as user and password) and Bearer", async () => {
    const key = (await secret(["products:read"])).json.key;
    expect((await get("/v1/products", { headers: { authorization: basic(key) } })).status).toBe(200);
    expect((await get("/v1/products", { headers: bearer(key) })).status).toBe(200);
  });

  it("is 403 naming the missing scope", async () => {
    const key = (await secret(["products:read"])).json.key;
    const r = await get("/v1/orders", { headers: bearer(key) });
    expect(r.status).toBe(403);
    expect(r.json).toEqual({ code: 403, error: "this key lacks the scope orders:read" });
  });

  it("is 401 once expired", async () => {
    const r = await secret(["products:read"], { expires_at: new Date(Date.now() + 60_000).toISOString() });
    expect((await get("/v1/products", { headers: bearer(r.json.key) })).status).toBe(200);
    vi.spyOn(Date, "now").mockReturnValue(Date.now() + 61_000);
    expect((await get("/v1/products", { headers: bearer(r.json.key) })).status).toBe(401);
  });

  it("records its last use, to the minute", async () => {
    const r = await secret(["products:read"]);
    await get("/v1/products", { headers: bearer(r.json.key) });
    const mine = (await get("/v1/keys")).json.keys.find((k: any) => k.id === r.json.id);
    expect(mine.last_used_at).toMatch(/:00\.000Z$/);
  });

  it("costs no D1 query of its own once verified in this isolate", async () => {
    const key = (await secret(["products:read"])).json.key;
    await get("/v1/products/999999", { headers: bearer(key) });
    const w = wrapD1();
    const r = await get("/v1/products/999999", { headers: bearer(key), env: { DB: w.db } });
    expect(r.status).toBe(404);
    // The product read itself, nothing for the key.
    expect(w.counts.calls).toBe(1);
  });
});

describe("DELETE /v1/keys/{id}", () => {
  it("revokes at once in this isolate", async () => {
    const r = await secret(["products:read"]);
    expect((await get("/v1/products", { headers: bearer(r.json.key) })).status).toBe(200);
    expect((await call("DELETE", `/v1/keys/${r.json.id}`)).status).toBe(204);
    expect((await get("/v1/products", { headers: bearer(r.json.key) })).status).toBe(401);
    const mine = (await get("/v1/keys")).json.keys.find((k: any) => k.id === r.json.id);
    expect(mine.revoked).toBe(true);
  });

  it(`revokes in every other isolate within ${VERIFY_TTL_MS / 1000} s`, async () => {
    const r = await secret(["products:read"]);
    expect((await get("/v1/products", { headers: bearer(r.json.key) })).status).toBe(200);
    // Revoked by another isolate: straight in D1, this isolate's cache untouched.
    await env.DB.prepare("UPDATE api_keys SET revoked_at = 1 WHERE id = ?").bind(r.json.id).run();
    const now = Date.now();
    vi.spyOn(Date, "now").mockReturnValue(now + VERIFY_TTL_MS - 1_000);
    expect((await get("/v1/products", { headers: bearer(r.json.key) })).status).toBe(200);
    vi.spyOn(Date, "now").mockReturnValue(now + VERIFY_TTL_MS + 1);
    expect((await get("/v1/products", { headers: bearer(r.json.key) })).status).toBe(401);
  });

  it("is 404 for an unknown key", async () => {
    const r = await call("DELETE", "/v1/keys/999999");
    expect(r.status).toBe(404);
    expect(r.json.error).toBe("key 999999 not found");
  });

  it("needs the scope keys", async () => {
    const key = (await secret(["products:read"])).json.key;
    const r = await call("DELETE", "/v1/keys/1", { headers: bearer(key) });
    expect(r.status).toBe(403);
    expect(r.json.error).toBe("this key lacks the scope keys");
  });
});

describe("OpenAPI: keys", () => {
  it("documents the answers the routes really give, and no field beyond them", async () => {
    const created = await post("/v1/keys", {
      name: "documented",
      type: "publishable",
      allowed_origins: ["https://shop.example"],
    });
    expect(created.status).toBe(201);
    expect(keyCreated.strict().parse(created.json)).toEqual(created.json);
    const list = (await get("/v1/keys")).json;
    expect(z.strictObject({ keys: z.array(keyOut.strict()) }).parse(list)).toEqual(list);
  });
});
