import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { get, post, uid } from "./helpers";

// Keys never outgrow their maker (docs/keys.md, "Creating, listing and revoking keys"): a key
// creates only keys with scopes it holds and an expiry no later than its own, and only a key that
// reads the catalogue and creates orders creates a publishable key. Every refusal writes nothing.

const HOUR = 60 * 60 * 1000;
const bearer = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });

async function made(scopes: string[], extra: Record<string, unknown> = {}) {
  const r = await post("/v1/keys", { name: uid("maker"), type: "secret", scopes, ...extra });
  expect(r.status, r.text).toBe(201);
  return r.json as { id: number; key: string; expires_at: string | null };
}

/** Every key's id and name, as the bootstrap key lists them: what a refusal must leave as it was. */
const allKeys = async () =>
  ((await get("/v1/keys")).json.keys as { id: number; name: string }[]).map((k) => `${k.id} ${k.name}`);

const bodyOf = (type: "secret" | "publishable", expires_at: string | undefined) => ({
  name: uid("child"),
  type,
  scopes: type === "secret" ? ["products:read"] : [],
  ...(expires_at === undefined ? {} : { expires_at }),
});

async function signIn(key: string) {
  const r = await post("/v1/sessions", { key }, { headers: { authorization: "" } });
  expect(r.status, r.text).toBe(201);
  const cookie = /^(__Host-session=[0-9a-f]{64});/.exec(r.headers.get("set-cookie") ?? "")?.[1] ?? "";
  return { headers: { authorization: "", cookie, "x-csrf-token": r.json.csrf_token as string } };
}

describe("a temporary key trying to make itself permanent", () => {
  const MAKER_SCOPES = ["keys", "products:read", "orders:write"];
  const later = (own: string, ms: number) => new Date(Date.parse(own) + ms).toISOString();

  it.each([
    ["a secret key without expires_at", "secret", () => undefined, "required"],
    ["a secret key expiring in 2099", "secret", () => "2099-01-01T00:00:00Z", "later"],
    ["a secret key expiring a second after its maker", "secret", (own: string) => later(own, 1000), "later"],
    ["a publishable key without expires_at", "publishable", () => undefined, "required"],
    ["a publishable key expiring in 2099", "publishable", () => "2099-01-01T00:00:00Z", "later"],
    ["a publishable key expiring a second after", "publishable", (own: string) => later(own, 1000), "later"],
  ] as const)("%s: 400 naming expires_at, nothing written", async (_, type, expiry, kind) => {
    const maker = await made(MAKER_SCOPES, { expires_at: new Date(Date.now() + HOUR).toISOString() });
    const own = maker.expires_at as string;
    const before = await allKeys();
    const r = await post("/v1/keys", bodyOf(type, expiry(own)), bearer(maker.key));
    expect(r.status, r.text).toBe(400);
    expect(r.json).toEqual({
      code: 400,
      error: "invalid body",
      errors: [
        kind === "required"
          ? `expires_at: required, and no later than this key's own expiry (${own})`
          : `expires_at: must be no later than this key's own expiry (${own})`,
      ],
    });
    expect(await allKeys()).toEqual(before);
  });

  it.each(["secret", "publishable"] as const)("may make a %s key that ends with it or sooner", async (type) => {
    const maker = await made(MAKER_SCOPES, { expires_at: new Date(Date.now() + HOUR).toISOString() });
    const own = maker.expires_at as string;
    const same = await post("/v1/keys", bodyOf(type, own), bearer(maker.key));
    expect(same.status, same.text).toBe(201);
    expect(same.json.expires_at).toBe(own);
    const sooner = await post("/v1/keys", bodyOf(type, later(own, -HOUR / 2)), bearer(maker.key));
    expect(sooner.status, sooner.text).toBe(201);
  });

  it("its admin session is held to the key's expiry too", async () => {
    const maker = await made(MAKER_SCOPES, { expires_at: new Date(Date.now() + HOUR).toISOString() });
    const session = await signIn(maker.key);
    const before = await allKeys();
    const r = await post("/v1/keys", bodyOf("secret", undefined), session);
    expect(r.status, r.text).toBe(400);
    expect(r.json.errors).toEqual([
      `expires_at: required, and no later than this key's own expiry (${maker.expires_at})`,
    ]);
    expect(await allKeys()).toEqual(before);
  });

  it("a key that never expires (API_KEY, a stored one) may make one that never expires", async () => {
    expect((await post("/v1/keys", bodyOf("secret", undefined))).status).toBe(201);
    const maker = await made(MAKER_SCOPES);
    expect((await post("/v1/keys", bodyOf("publishable", "2099-01-01T00:00:00Z"), bearer(maker.key))).status).toBe(201);
  });

  it("any expiry: accepted exactly when in the future and no later than the maker's", async () => {
    const maker = await made(MAKER_SCOPES, { expires_at: new Date(Date.now() + HOUR).toISOString() });
    const own = Date.parse(maker.expires_at as string);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("secret" as const, "publishable" as const),
        fc.integer({ min: -2 * HOUR, max: 2 * HOUR }),
        async (type, offset) => {
          const at = own + offset;
          const r = await post("/v1/keys", bodyOf(type, new Date(at).toISOString()), bearer(maker.key));
          // A margin of a minute around now: the request's own clock moves while it runs.
          if (Math.abs(at - Date.now()) < 60_000) return;
          expect(r.status, r.text).toBe(at > Date.now() && offset <= 0 ? 201 : 400);
          if (r.status === 400) expect(r.json.errors[0]).toMatch(/^expires_at: /);
        },
      ),
      { numRuns: 25 },
    );
  });
});

describe("a key minting a publishable key", () => {
  it.each([
    ["keys only", ["keys"], "products:read, orders:write"],
    ["keys and products:read", ["keys", "products:read"], "orders:write"],
    ["keys and orders:write", ["keys", "orders:write"], "products:read"],
  ])("with %s: 403 naming type, nothing written", async (_, scopes, lacks) => {
    const maker = await made(scopes);
    const before = await allKeys();
    const r = await post("/v1/keys", bodyOf("publishable", undefined), bearer(maker.key));
    expect(r.status, r.text).toBe(403);
    expect(r.json).toEqual({
      code: 403,
      error: "this key cannot create publishable keys",
      errors: [
        `type: a publishable key reads the catalogue and creates orders; creating one needs products:read and orders:write, and this key lacks ${lacks}`,
      ],
    });
    expect(await allKeys()).toEqual(before);
  });

  it("with products:read and orders:write it may; it still grants only the permissions it holds", async () => {
    const maker = await made(["keys", "products:read", "orders:write"]);
    expect((await post("/v1/keys", bodyOf("publishable", undefined), bearer(maker.key))).status).toBe(201);
    const before = await allKeys();
    const broad = await post("/v1/keys", { ...bodyOf("publishable", undefined), scopes: ["stock"] }, bearer(maker.key));
    expect(broad.status).toBe(403);
    expect(broad.json).toEqual({
      code: 403,
      error: "this key cannot grant scopes it lacks: stock",
      errors: ["scopes: this key lacks stock"],
    });
    expect(await allKeys()).toEqual(before);
  });

  it("a keys-only key's secret keys are held to its own scopes", async () => {
    const maker = await made(["keys"]);
    const r = await post(
      "/v1/keys",
      { name: uid("wider"), type: "secret", scopes: ["orders:read"] },
      bearer(maker.key),
    );
    expect(r.status).toBe(403);
    expect(r.json.errors).toEqual(["scopes: this key lacks orders:read"]);
  });
});
