import { describe, expect, it } from "vitest";
import { call, createProduct, get, post, uid } from "./helpers";

// Publishable keys (docs/keys.md, "Publishable keys" and "CORS"): the public catalog, unpaid orders,
// an order read back by its token, from the origins the key allows, and nothing else.

const SHOP = "https://shop.example";
const EDGE = { colo: "ARN" };

async function publishable(extra: Record<string, unknown> = {}) {
  const r = await post("/v1/keys", {
    name: `storefront ${uid("pk")}`,
    type: "publishable",
    allowed_origins: [SHOP],
    ...extra,
  });
  expect(r.status).toBe(201);
  return r.json.key as string;
}
const as = (key: string, headers: Record<string, string> = {}) => ({
  headers: { authorization: "", "x-publishable-key": key, ...headers },
});

const PRIVATE = [
  "purchase_price",
  "supplier_name",
  "supplier_sku",
  "qty_location",
  "metadata",
  "datafield_1",
  "stock",
  "qty",
];

describe("a publishable key reading the catalog", () => {
  it("sees a visible product with public fields only, availability for stock", async () => {
    const key = await publishable();
    const sku = uid();
    const p = await createProduct({
      sku,
      stock: 3,
      purchase_price: 40,
      supplier_name: "Acme",
      datafield_1: "internal",
    });
    const r = await get(`/v1/products/${p.product_id}`, as(key));
    expect(r.status).toBe(200);
    for (const f of PRIVATE) expect(r.json).not.toHaveProperty(f);
    expect(r.json).toMatchObject({ sku, title: "Test product", price: 100, availability: "in_stock" });
  });

  it("sees exact stock and datafields when the key allows them", async () => {
    const key = await publishable({ scopes: ["stock", "datafields"] });
    const p = await createProduct({ sku: uid(), stock: 3, datafield_1: "public note" });
    const r = await get(`/v1/products/${p.product_id}`, as(key));
    expect(r.json).toMatchObject({ stock: 3, datafield_1: "public note" });
    expect(r.json).not.toHaveProperty("purchase_price");
  });

  it("gets 404 for a hidden product, and lists only visible ones", async () => {
    const key = await publishable();
    const hidden = await createProduct({ sku: uid(), visible: 0 });
    const shown = await createProduct({ sku: uid() });
    expect((await get(`/v1/products/${hidden.product_id}`, as(key))).status).toBe(404);
    const list = await get("/v1/products?limit=100&include_details=true", as(key));
    expect(list.status).toBe(200);
    const ids = list.json.map((p: any) => Number(p.id));
    expect(ids).toContain(shown.product_id);
    expect(ids).not.toContain(hidden.product_id);
    for (const p of list.json) for (const f of PRIVATE) expect(p).not.toHaveProperty(f);
  });

  it.each([
    ["GET", "/v1/orders"],
    ["PUT", "/v1/orders"],
    ["POST", "/v1/products"],
    ["GET", "/v1/products/count"],
    ["GET", "/v1/webhooks"],
    ["GET", "/v1/keys"],
  ])("may not call %s %s (403)", async (method, path) => {
    const key = await publishable();
    const r = await call(method, path, { ...as(key), body: method === "GET" ? undefined : [] });
    expect(r.status).toBe(403);
    expect(r.json.error).toBe("a publishable key may not call this route");
  });

  it("is not a secret key: Basic or Bearer with a pk_ key is 401", async () => {
    const key = await publishable();
    expect((await get("/v1/products", { headers: { authorization: `Bearer ${key}` } })).status).toBe(401);
  });
});

describe("a publishable key creating an order", () => {
  it("creates an unpaid order, answers its token, and reads it back only with that token", async () => {
    const key = await publishable();
    const sku = uid();
    await createProduct({ sku, stock: 5 });
    const r = await post("/v1/orders", [{ order_id: "create", status: "paid", products: [{ sku, qty: 1 }] }], as(key));
    expect(r.status).toBe(200);
    const res = r.json.results.create_1;
    expect(res.status).toBe("unpaid");
    expect(res.token).toMatch(/^[0-9a-f-]{36}$/);
    const mine = await get(`/v1/orders/${res.order_id}?token=${res.token}`, as(key));
    expect(mine.status).toBe(200);
    expect(mine.json.order_id).toBe(res.order_id);
    expect((await get(`/v1/orders/${res.order_id}`, as(key))).status).toBe(404);
    expect((await get(`/v1/orders/${res.order_id}?token=00000000-0000-0000-0000-000000000000`, as(key))).status).toBe(
      404,
    );
    // Secret-key answers carry no token.
    const secret = await post("/v1/orders", [{ order_id: "create", products: [{ sku, qty: 1 }] }]);
    expect(secret.json.results.create_1).not.toHaveProperty("token");
  });
});

describe("orders from storefronts", () => {
  it("are limited per client address (ORDER_CREATES: 10 a minute)", async () => {
    // CF-Connecting-IP counts only on requests that came through Cloudflare's edge (docs/operations.md, "Rate limits").
    const key = await publishable();
    const sku = uid();
    await createProduct({ sku, stock: 100 });
    const order = [{ order_id: "create", products: [{ sku, qty: 1 }] }];
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      statuses.push(
        (await post("/v1/orders", order, { ...as(key, { "cf-connecting-ip": "203.0.113.9" }), cf: EDGE })).status,
      );
    }
    expect(statuses).toEqual(Array(10).fill(200));
    const r = await post("/v1/orders", order, { ...as(key, { "cf-connecting-ip": "203.0.113.9" }), cf: EDGE });
    expect(r.status).toBe(429);
    expect(r.json.error).toBe("too many orders from this address, retry later");
    // Another address, and secret keys, are not held to it.
    expect(
      (await post("/v1/orders", order, { ...as(key, { "cf-connecting-ip": "203.0.113.10" }), cf: EDGE })).status,
    ).toBe(200);
    expect((await post("/v1/orders", order, { headers: { "cf-connecting-ip": "203.0.113.9" }, cf: EDGE })).status).toBe(
      200,
    );
  });
});

describe("CORS", () => {
  it("answers a preflight of a storefront route from an allowed origin", async () => {
    await publishable();
    const r = await call("OPTIONS", "/v1/products", {
      headers: { authorization: "", origin: SHOP, "access-control-request-method": "GET" },
    });
    expect(r.status).toBe(204);
    expect(r.headers.get("access-control-allow-origin")).toBe(SHOP);
    expect(r.headers.get("access-control-allow-headers")).toContain("X-Publishable-Key");
  });

  it.each([
    ["an origin no key allows", "https://evil.example", "/v1/products", "GET"],
    ["a secret-key route", SHOP, "/v1/webhooks", "GET"],
    ["a method the route does not take from storefronts", SHOP, "/v1/orders", "PUT"],
  ])("refuses a preflight from %s", async (_, origin, path, method) => {
    await publishable();
    const r = await call("OPTIONS", path, {
      headers: { authorization: "", origin, "access-control-request-method": method },
    });
    expect(r.status).toBe(403);
    expect(r.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("sets CORS headers on a storefront answer from its key's origin, and refuses another origin", async () => {
    const key = await publishable();
    const ok = await get("/v1/products", as(key, { origin: SHOP }));
    expect(ok.status).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe(SHOP);
    expect(ok.headers.get("vary")).toContain("Origin");
    const other = await get("/v1/products", as(key, { origin: "https://other.example" }));
    expect(other.status).toBe(403);
    expect(other.json.error).toBe("origin https://other.example is not allowed for this key");
  });

  it("sets no CORS headers on a secret-key answer", async () => {
    const r = await get("/v1/products", { headers: { origin: SHOP } });
    expect(r.status).toBe(200);
    expect(r.headers.get("access-control-allow-origin")).toBeNull();
  });
});
