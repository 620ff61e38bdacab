import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import { basic, get, KEY, post, uid } from "./helpers";

let spy: MockInstance<typeof console.log>;
beforeEach(() => {
  spy = vi.spyOn(console, "log").mockImplementation(() => {});
});
afterEach(() => spy.mockRestore());

/** Everything logged since the spy was set, as text, one entry per console.log call. */
const logged = () => spy.mock.calls.map((args) => args.map(String).join(" "));

describe("request log (one JSON line per request)", () => {
  it("logs id, method, route pattern, status and duration, and nothing of the credentials", async () => {
    const p = (await post("/v1/products", { title: "Log", price: 10, sku: uid("LOG") })).json.products[0];
    spy.mockClear();
    const r = await get(`/v1/products/${p.product_id}`, { headers: { "x-request-id": "req-log-1" } });
    expect(r.status).toBe(200);
    const lines = logged();
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]);
    expect(line).toEqual({
      level: "info",
      msg: "request",
      requestId: "req-log-1",
      method: "GET",
      route: "/v1/products/:product_id",
      status: 200,
      durationMs: expect.any(Number),
    });
    expect(lines[0]).not.toContain(KEY);
    expect(lines[0]).not.toContain(basic(KEY).slice(6));
  });

  it("counts the products and variants a write touched", async () => {
    const sku = uid("LOGV");
    const r = await post("/v1/products", {
      title: "Shirt",
      price: 100,
      sku,
      variants: {
        add: [
          { variant_option1_name: "Size", variant_option1_value: "S", sku: `${sku}-S` },
          { variant_option1_name: "Size", variant_option1_value: "M", sku: `${sku}-M` },
        ],
      },
      metadata: { secret: "body-content-never-logged" },
    });
    expect(r.status).toBe(200);
    const lines = logged();
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({
      method: "POST",
      route: "/v1/products",
      status: 200,
      counts: { products: 1, variants: 2 },
    });
    expect(lines[0]).not.toContain("body-content-never-logged");
    expect(lines[0]).not.toContain(sku);
  });

  it("logs refused requests too, with their status and no Authorization value", async () => {
    const authorization = basic("wrong-key-value");
    const r = await get("/v1/products", { headers: { authorization } });
    expect(r.status).toBe(401);
    const lines = logged();
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({ method: "GET", route: "/v1/products", status: 401 });
    expect(lines[0]).not.toContain("wrong-key-value");
    expect(lines[0]).not.toContain(authorization.slice(6));
  });

  it("logs the route that answered where two patterns match the path", async () => {
    const r = await get("/v1/products/count");
    expect(r.status).toBe(200);
    expect(JSON.parse(logged()[0])).toMatchObject({ method: "GET", route: "/v1/products/count", status: 200 });
  });

  it("logs unknown routes with a null route and the 404", async () => {
    const r = await get("/v1/nothing/here/42");
    expect(r.status).toBe(404);
    const lines = logged();
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({ route: null, status: 404 });
    expect(lines[0]).not.toContain("nothing/here");
  });
});
