import { describe, expect, it } from "vitest";
import { call, get, post, uid } from "./helpers";

// D1 Sessions API (docs/operations.md, "Read replicas"); miniflare runs the sessions against one local
// database, so what is checked here is the protocol: the header on every /v1 answer, a bookmark
// sent back is honoured and moves forward, and a malformed one is refused.
const BOOKMARK = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;

describe("x-d1-bookmark", () => {
  it("is on every /v1 answer, reads and writes", async () => {
    const created = await post("/v1/products", { title: "Bookmarked", price: 10, sku: uid("BM") });
    expect(created.status).toBe(200);
    expect(created.headers.get("x-d1-bookmark")).toMatch(BOOKMARK);
    const id = created.json.products[0].product_id;
    for (const path of [`/v1/products/${id}`, "/v1/products?limit=1", "/v1/orders?limit=1"]) {
      const r = await get(path);
      expect(r.status, path).toBe(200);
      expect(r.headers.get("x-d1-bookmark"), path).toMatch(BOOKMARK);
    }
    const missing = await get("/v1/products/999999999");
    expect(missing.status).toBe(404);
    expect(missing.headers.get("x-d1-bookmark")).toMatch(BOOKMARK);
  });

  it("sent back after a write, lets the next read see that write (read-after-write)", async () => {
    const sku = uid("BM");
    const created = await post("/v1/products", { title: "Fresh", price: 10, sku, stock: 3 });
    const bookmark = created.headers.get("x-d1-bookmark") as string;
    const read = await get(`/v1/products?sku=${sku}`, { headers: { "x-d1-bookmark": bookmark } });
    expect(read.status).toBe(200);
    expect(read.json.qty).toBe("3");
    // The answer's bookmark is at least as new as the one sent.
    const next = read.headers.get("x-d1-bookmark") as string;
    expect(next >= bookmark).toBe(true);
  });

  it("a write's bookmark is newer than the one of the read before it", async () => {
    const before = (await get("/v1/products?limit=1")).headers.get("x-d1-bookmark") as string;
    const created = await post("/v1/products", { title: "Later", price: 10, sku: uid("BM") });
    expect((created.headers.get("x-d1-bookmark") as string) > before).toBe(true);
  });

  it.each([
    ["garbage", "not-a-bookmark"],
    ["too short", "00000000-00000001-00000000-0000"],
    ["upper-case hex", "0000000A-00000001-00000000-00000000000000000000000000000000"],
    ["SQL", "'; DROP TABLE products; --"],
  ])("malformed (%s) is 400 naming the header, nothing read or written", async (_name, value) => {
    const sku = uid("BM");
    const r = await call("POST", "/v1/products", {
      body: { title: "Never", price: 1, sku },
      headers: { "x-d1-bookmark": value },
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual({
      code: 400,
      error: "invalid x-d1-bookmark header: send back one this service answered with",
    });
    expect(r.headers.get("x-request-id")).toBeTruthy();
    expect((await get(`/v1/products?sku=${sku}`)).status).toBe(404);
  });

  it("is not sent on routes outside /v1", async () => {
    expect((await get("/health")).headers.get("x-d1-bookmark")).toBeNull();
  });
});

describe("X-Request-Id on every answer", () => {
  it.each([
    ["401 without credentials", () => get("/v1/products", { headers: { authorization: "" } }), 401],
    ["401 with a wrong key", () => get("/v1/products", { headers: { authorization: `Basic ${btoa("x:x")}` } }), 401],
    ["500 without a configured key", () => get("/v1/products", { env: { API_KEY: "" } }), 500],
    ["404 unknown route", () => get("/nope"), 404],
    ["200 health", () => get("/health"), 200],
  ])("%s", async (_name, send, status) => {
    const r = await send();
    expect(r.status).toBe(status);
    expect(r.headers.get("x-request-id")).toMatch(/^[\w-]{8,}$/);
  });

  it("401 keeps WWW-Authenticate and the envelope, and echoes a well-formed incoming id", async () => {
    const r = await get("/v1/products", { headers: { authorization: "", "x-request-id": "client-abc-123" } });
    expect(r.status).toBe(401);
    expect(r.headers.get("www-authenticate")).toBe('Basic realm="store"');
    expect(r.headers.get("x-request-id")).toBe("client-abc-123");
    expect(r.json).toEqual({ code: 401, error: "missing or invalid credentials" });
  });
});
