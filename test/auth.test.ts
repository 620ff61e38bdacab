import { describe, expect, it } from "vitest";
import { basic, call, get, KEY } from "./helpers";

describe("authentication (docs/api.md, Authentication)", () => {
  it.each([
    ["no header", ""],
    ["wrong key", basic("nope")],
    ["user and password differing", basic(KEY, "second-key")],
    ["malformed base64", "Basic !!!not-base64!!!"],
    ["a key that is only a prefix of a real one", basic("test")],
    ["bearer scheme", `Bearer ${KEY}`],
  ])("refuses %s with 401, WWW-Authenticate and the envelope", async (_, authorization) => {
    const r = await get("/v1/products", { headers: { authorization } });
    expect(r.status).toBe(401);
    expect(r.headers.get("www-authenticate")).toBe('Basic realm="store"');
    expect(r.json).toEqual({ code: 401, error: "missing or invalid credentials" });
  });

  it("accepts the key as user name and password", async () => {
    expect((await get("/v1/products")).status).toBe(200);
  });

  it("accepts a lowercase scheme (RFC 7617: the scheme is case-insensitive)", async () => {
    const r = await get("/v1/products", { headers: { authorization: `basic ${btoa(`${KEY}:${KEY}`)}` } });
    expect(r.status).toBe(200);
  });

  it("accepts the second of two configured keys (rotation)", async () => {
    expect((await get("/v1/products", { headers: { authorization: basic("second-key") } })).status).toBe(200);
  });

  it.each([undefined, "", " , "])("fails closed with 500 when no key is configured (API_KEY=%j)", async (API_KEY) => {
    const r = await get("/v1/products", { env: { API_KEY } });
    expect(r.status).toBe(500);
    expect(r.json).toEqual({ code: 500, error: "no API key is configured" });
  });

  it.each(["/", "/health"])("leaves %s open", async (path) => {
    const r = await call("GET", path, { headers: { authorization: "" } });
    expect(r.status).toBe(200);
  });

  it("never writes credentials to the log", async () => {
    const lines: string[] = [];
    const orig = { log: console.log, error: console.error, warn: console.warn };
    for (const k of ["log", "error", "warn"] as const) console[k] = (...a: unknown[]) => lines.push(a.join(" "));
    try {
      await get("/v1/products", { headers: { authorization: basic("a-wrong-secret") } });
      await get("/v1/products");
      await get("/v1/products", { env: { API_KEY: "" } });
    } finally {
      Object.assign(console, orig);
    }
    const all = lines.join("\n");
    expect(all).not.toContain("a-wrong-secret");
    expect(all).not.toContain(KEY);
    expect(all).not.toContain(btoa(`${KEY}:${KEY}`));
  });
});
