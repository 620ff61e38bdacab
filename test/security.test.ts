import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ORDER_LIMIT_MAX } from "../src/orders/list";
import { PRODUCT_LIMIT_MAX } from "../src/products/list";
import { wrapD1 } from "./d1-wrap";
import { basic, call, get, KEY, post, put, uid } from "./helpers";

// Findings of the OWASP API Security Top 10 (2023) review, each pinned by a test.

const order = (sku: string, extra: Record<string, unknown> = {}) => ({
  order_id: "create",
  products: [{ sku, qty: 1 }],
  ...extra,
});

async function product(extra: Record<string, unknown> = {}) {
  const sku = uid("SEC");
  const r = await post("/v1/products", { title: "Sec", price: 10, sku, stock: 100, ...extra });
  expect(r.status, r.text).toBe(200);
  return { sku, p: r.json.products[0] };
}

describe("API2/API5: every /v1 operation needs the key", () => {
  it.each([
    ["POST", "/v1/orders"],
    ["GET", "/v1/orders"],
    ["GET", "/v1/orders/1001"],
    ["POST", "/v1/products"],
    ["PUT", "/v1/products"],
    ["GET", "/v1/products"],
    ["GET", "/v1/products/1"],
  ])("%s %s without credentials is 401", async (method, path) => {
    const headers = { authorization: "" };
    const r = await call(method, path, method === "GET" ? { headers } : { raw: "[]", headers });
    expect(r.status).toBe(401);
    expect(r.json).toEqual({ code: 401, error: "missing or invalid credentials" });
  });
});

describe("API3: mass assignment", () => {
  it("never stores status, order ids, totals or tax from an order body", async () => {
    const { sku } = await product();
    const forged = {
      status: "paid",
      id: 1,
      customer_id: 1,
      subtotal: 0.01,
      total: 0.01,
      tax: [{ rate: 0, amount: 0 }],
      discount: 999,
      created_at: 0,
      token: "forged",
    };
    const r = await post("/v1/orders", [
      order(sku, { ...forged, products: [{ sku, qty: 2, title: "Free", tax_rate: 0 }] }),
    ]);
    expect(r.status).toBe(200);
    const res = r.json.results.create_1;
    expect(res).toMatchObject({ success: true, status: "unpaid", subtotal: 20, total: 20, discount: 0 });
    expect(res.notices).toContain("ignored unknown field total");
    expect(res.notices).toContain("ignored unknown field products[0].title");
    const row = await env.DB.prepare("SELECT * FROM orders WHERE id = ?").bind(res.order_id).first<any>();
    expect(row).toMatchObject({ status: "unpaid", subtotal: 2000, total: 2000, discount: 0, customer_id: null });
    expect(row.token).not.toBe("forged");
    expect(row.id).not.toBe(1);
    const line = await env.DB.prepare("SELECT * FROM order_lines WHERE order_id = ?").bind(res.order_id).first<any>();
    expect(line).toMatchObject({ title: "Sec", tax_rate: 25 });
  });

  it("refuses any order_id other than create", async () => {
    const { sku } = await product();
    const r = await post("/v1/orders", [order(sku, { order_id: 1001 }), order(sku, { order_id: "1001" })]);
    expect(r.status).toBe(400);
    for (const x of Object.values(r.json.results) as any[]) {
      expect(x.errors).toEqual(['order_id: only "create" is supported here']);
    }
  });

  it("does not let POST /v1/products choose ids, tokens or timestamps", async () => {
    const r = await post("/v1/products", {
      title: "Mine",
      price: 1,
      product_id: 424242,
      id: 424243,
      token: "forged",
      created_at: 0,
      variants: { add: [{ variant_option1_name: "S", variant_option1_value: "1", variant_id: 424244, no_minus: 1 }] },
    });
    expect(r.status).toBe(200);
    const p = r.json.products[0];
    expect(p.product_id).not.toBe(424242);
    expect(p.product_id).not.toBe(424243);
    expect(p.variants[0].variant_id).not.toBe(424244);
    expect(new Date(p.created_at).getTime()).toBeGreaterThan(0);
    expect(r.json.notices).toEqual(
      expect.arrayContaining(["ignored unknown field product_id", "ignored unknown field token"]),
    );
    const row = await env.DB.prepare("SELECT token FROM products WHERE id = ?").bind(p.product_id).first<any>();
    expect(row.token).not.toBe("forged");
    expect(p).not.toHaveProperty("token");
  });

  it("does not let PUT move a product to another id or set its created_at", async () => {
    const { p } = await product();
    const r = await put("/v1/products", { product_id: p.product_id, id: 1, created_at: 0, title: "Renamed" });
    expect(r.status).toBe(200);
    expect(r.json.products[0]).toMatchObject({ product_id: p.product_id, title: "Renamed", created_at: p.created_at });
  });
});

describe("SQL injection: every value is a bound parameter", () => {
  it.each([
    "' OR '1'='1",
    "'); DROP TABLE orders; --",
    '" OR ""="',
    "x') UNION SELECT sku, product_id, variant_id FROM skus --",
    "$.sku",
    "%",
  ])("treats %j as data everywhere", async (text) => {
    const sku = `${text}-${uid()}`;
    const made = await post("/v1/products", { title: text, price: 1, sku, stock: 5, metadata: { [text]: text } });
    expect(made.status).toBe(200);
    expect((await get(`/v1/products?sku=${encodeURIComponent(text)}`)).status).toBe(404);
    const found = (await get(`/v1/products?sku=${encodeURIComponent(sku)}`)).json;
    expect(found.id).toBe(String(made.json.products[0].product_id));
    expect((await get(`/v1/products/${found.id}`)).json.metadata).toEqual({ [text]: text });
    const s = await get(`/v1/products?search=${encodeURIComponent(text)}`);
    expect(s.status, s.text).toBe(200);
    expect(s.json.map((p: any) => p.id)).toContain(found.id);
    const missing = await post("/v1/orders", [order(text)]);
    expect(missing.json.results.create_1.errors).toEqual([`products[0].sku: no product or variant has SKU ${text}`]);
    const ok = await post("/v1/orders", [order(sku, { customer: { note: text } })]);
    expect(ok.status).toBe(200);
    const tables = await env.DB.prepare(
      "SELECT count(*) AS n FROM sqlite_master WHERE name IN ('orders', 'skus')",
    ).first();
    expect(tables).toEqual({ n: 2 });
  });
});

describe("API8: no internal text in answers", () => {
  it("answers a database failure with 503 and no SQL, table or driver text", async () => {
    const { sku } = await product();
    const { db } = wrapD1({ failCall: 1 });
    const r = await post("/v1/orders", [order(sku)], { env: { DB: db } });
    expect(r.status).toBe(503);
    expect(r.text).not.toMatch(/D1_|SQL|INSERT|orders|injected|stack/i);
  });

  it("answers an unexpected exception with 500 'internal error' and no stack or message", async () => {
    const broken = {
      prepare() {
        throw new TypeError("secret internal detail");
      },
      batch() {
        throw new TypeError("secret internal detail");
      },
    } as unknown as D1Database;
    const spy = vi.spyOn(console, "error").mockImplementation(() => {});
    const r = await post("/v1/orders", [order("X")], { env: { DB: broken } });
    spy.mockRestore();
    expect(r.status).toBe(500);
    expect(r.json).toEqual({ code: 500, error: "internal error" });
    expect(r.text).not.toContain("secret internal detail");
  });
});

describe("prototype pollution: __proto__ and constructor are plain data", () => {
  const hostile = '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"a":1}';

  afterEach(() => {
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty("polluted");
  });

  it("stores them in order metadata as given", async () => {
    const { sku } = await product();
    const r = await call("POST", "/v1/orders", {
      raw: `[{"order_id":"create","products":[{"sku":${JSON.stringify(sku)},"qty":1}],"metadata":${hostile}}]`,
    });
    expect(r.status).toBe(200);
    const g = await get(`/v1/orders/${r.json.results.create_1.order_id}`);
    expect(JSON.stringify(g.json.metadata)).toBe(hostile);
    expect(Object.hasOwn(g.json.metadata, "__proto__")).toBe(true);
  });

  it("stores them in product metadata, and PUT replaces metadata rather than merging", async () => {
    const made = await call("POST", "/v1/products", { raw: `{"title":"P","price":1,"metadata":${hostile}}` });
    expect(made.status).toBe(200);
    const id = made.json.products[0].product_id;
    expect(JSON.stringify((await get(`/v1/products/${id}`)).json.metadata)).toBe(hostile);
    const r = await call("PUT", "/v1/products", { raw: `{"product_id":${id},"metadata":{"__proto__":{"b":2}}}` });
    expect(r.status).toBe(200);
    expect(JSON.stringify((await get(`/v1/products/${id}`)).json.metadata)).toBe('{"__proto__":{"b":2}}');
  });

  it("treats a top-level __proto__ key as an unknown field", async () => {
    const { sku } = await product();
    const r = await call("POST", "/v1/orders", {
      raw: `[{"order_id":"create","__proto__":{"status":"paid"},"products":[{"sku":${JSON.stringify(sku)},"qty":1}]}]`,
    });
    expect(r.status).toBe(200);
    expect(r.json.results.create_1.status).toBe("unpaid");
    expect(r.json.results.create_1.notices).toContain("ignored unknown field __proto__");
  });
});

describe("text the store cannot keep is refused, not changed", () => {
  it.each([
    ["an unpaired surrogate", "a\ud800b", "must be valid Unicode text (no unpaired surrogates)"],
    ["a C1 control character", "a\u0085b", "must not contain control characters"],
    ["a carriage return", "a\rb", "must not contain control characters"],
  ])("refuses %s with the field's path", async (_, text, error) => {
    const p = await post("/v1/products", { title: text, price: 1 });
    expect(p.status).toBe(400);
    expect(p.json.errors).toEqual([`title: ${error}`]);
    const o = await post("/v1/orders", [order("X", { customer: { note: text } })]);
    expect(o.json.results.create_1.errors).toContain(`customer.note: ${error}`);
  });

  it("keeps pairs, emoji, tabs and newlines as sent", async () => {
    const title = "Tröja 👕\tline\nnext 𝄞";
    const p = await post("/v1/products", { title, price: 1 });
    expect(p.status).toBe(200);
    expect((await get(`/v1/products/${p.json.products[0].product_id}`)).json.title).toBe(title);
  });
});

describe("secrets and body content never reach the logs", () => {
  it("logs neither the key nor body content when a request fails inside", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    const secret = uid("card-4111111111111111");
    const { db } = wrapD1({ failCall: 1 });
    const r = await post("/v1/orders", [order(secret, { payment: { transaction_id: secret } })], {
      env: { DB: db },
      headers: { authorization: basic(KEY) },
    });
    const lines = [...log.mock.calls, ...error.mock.calls].map((a) => a.map(String).join(" ")).join("\n");
    log.mockRestore();
    error.mockRestore();
    expect(r.status).toBe(503);
    expect(lines).toContain("injected fault");
    expect(lines).not.toContain(secret);
    expect(lines).not.toContain(KEY);
    expect(lines).not.toContain(basic(KEY).slice(6));
  });
});

describe("API4: list sizes are bounded", () => {
  it.each([
    [`/v1/orders?limit=${ORDER_LIMIT_MAX + 1}`, `limit: must be a whole number from 1 to ${ORDER_LIMIT_MAX}`],
    [`/v1/products?limit=${PRODUCT_LIMIT_MAX + 1}`, `limit: must be a whole number from 1 to ${PRODUCT_LIMIT_MAX}`],
    ["/v1/orders?limit=-1", `limit: must be a whole number from 1 to ${ORDER_LIMIT_MAX}`],
  ])("%s is 400", async (path, error) => {
    const r = await get(path);
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual([error]);
  });
});
