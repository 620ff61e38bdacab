import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { STOREFRONT_MAX_HELD_UNITS, STOREFRONT_MAX_LINE_QTY } from "../src/orders/hold";
import { scheduled } from "../src/scheduled";
import { call, createProduct, get, post, quietEnv, uid } from "./helpers";

// A storefront script trying to buy a product's whole stock with one publishable key from one
// address (docs/storefront.md, "Storefront orders"): big lines, many lines, an array of orders,
// many requests in a row and at once. Every refusal is a 4xx naming what it refuses, nothing of
// it is written, and the address never holds more than STOREFRONT_MAX_HELD_UNITS units.

const files = {
  ...import.meta.glob<string>("../README.md", { query: "?raw", import: "default", eager: true }),
  ...import.meta.glob<string>("../wrangler.toml", { query: "?raw", import: "default", eager: true }),
};

const MINUTE = 60_000;
const SHOP = "https://shop.example";
const STOCK = 1_500;
let address = 0;
/** A client address of its own (the per-address limits are per test). */
const newAddress = () => `198.51.100.${++address}`;

async function publishable() {
  const r = await post("/v1/keys", { name: uid("pk"), type: "publishable", allowed_origins: [SHOP] });
  expect(r.status, r.text).toBe(201);
  return r.json.key as string;
}

/** A POST /v1/orders with the key from `from`, as Cloudflare's edge passes it. */
const send = (key: string, from: string, body: unknown) =>
  post("/v1/orders", body, {
    headers: { authorization: "", "x-publishable-key": key, "cf-connecting-ip": from },
    cf: { colo: "ARN" },
  });
const one = (products: unknown[], extra: Record<string, unknown> = {}) => [{ order_id: "create", products, ...extra }];

async function product(stock = STOCK) {
  const sku = uid("HOARD");
  const p = await createProduct({ sku, stock, disable_minusqty: 1, price: 10 });
  return { sku, id: p.product_id as number };
}
const stockOf = async (id: number) => (await get(`/v1/products/${id}`)).json.stock as number;
const storefrontOrders = async () =>
  (await env.DB.prepare("SELECT count(*) AS n FROM orders WHERE storefront = 1").first<{ n: number }>())?.n;

describe("a storefront buying up the stock from one address", () => {
  it("ships with 50 units a line and 200 held per address, the figure the README states", () => {
    expect([STOREFRONT_MAX_LINE_QTY, STOREFRONT_MAX_HELD_UNITS]).toEqual([50, 200]);
    expect([env.STOREFRONT_MAX_LINE_QTY, env.STOREFRONT_MAX_HELD_UNITS]).toEqual(["50", "200"]);
    expect(files["../wrangler.toml"]).toMatch(/^STOREFRONT_MAX_HELD_UNITS = "200"$/m);
    const readme = files["../README.md"].replace(/\s+/g, " ");
    const figure = /one address can hold at most (\d+) units/.exec(readme)?.[1];
    expect(Number(figure)).toBe(STOREFRONT_MAX_HELD_UNITS);
  });

  it("is refused a line past the line limit, alone or merged with another of the same item", async () => {
    const key = await publishable();
    const { sku, id } = await product();
    const before = await storefrontOrders();
    const cases: [unknown, string][] = [
      [one([{ sku, qty: 100_000 }]), "products[0].qty: must be at most 50 for a storefront order"],
      [one([{ sku, qty: 51 }]), "products[0].qty: must be at most 50 for a storefront order"],
      [
        one([
          { sku, qty: 30 },
          { product_id: id, qty: 21 },
        ]),
        "products[1].qty: together with products[0] more than 50 of one item for a storefront order",
      ],
      [
        one([{ sku, qty: 50 }], { products_add: [{ sku }] }),
        "products_add[0].qty: together with products[0] more than 50 of one item for a storefront order",
      ],
      [
        one([{ sku, qty: 1 }], { products_add: [{ sku, qty: 60 }] }),
        "products_add[0].qty: must be at most 50 for a storefront order",
      ],
    ];
    for (const [body, error] of cases) {
      const r = await send(key, newAddress(), body);
      expect(r.status, r.text).toBe(400);
      expect(r.json.results.create_1.errors).toEqual([error]);
    }
    expect(await stockOf(id)).toBe(STOCK);
    expect(await storefrontOrders()).toBe(before);
    // Exactly the limit is an order.
    expect((await send(key, newAddress(), one([{ sku, qty: 50 }]))).status).toBe(200);
    expect(await stockOf(id)).toBe(STOCK - 50);
  });

  it("is refused an order of more units than one address may hold, however many items it spreads them over", async () => {
    const key = await publishable();
    const items = await Promise.all([1, 2, 3, 4, 5].map(() => product()));
    const r = await send(key, newAddress(), one(items.map(({ sku }) => ({ sku, qty: 50 }))));
    expect(r.status, r.text).toBe(400);
    expect(r.json.results.create_1.errors).toEqual([
      "products: 250 units is more than the 200 that unpaid storefront orders from one address may hold",
    ]);
    for (const { id } of items) expect(await stockOf(id)).toBe(STOCK);
  });

  it("is refused an array of orders, whatever they hold", async () => {
    const key = await publishable();
    const { sku, id } = await product();
    const before = await storefrontOrders();
    const r = await send(key, newAddress(), [...one([{ sku, qty: 1 }]), ...one([{ sku, qty: 1 }])]);
    expect(r.status, r.text).toBe(400);
    expect(r.json).toEqual({
      code: 400,
      error: "a publishable key creates one order per request",
      errors: ["body: holds 2 orders; send one"],
    });
    expect(await stockOf(id)).toBe(STOCK);
    expect(await storefrontOrders()).toBe(before);
    // One order as an array of one, or as the order itself, is fine; secret keys send arrays.
    expect((await send(key, newAddress(), one([{ sku, qty: 1 }]))).status).toBe(200);
    const secret = await post("/v1/orders", [...one([{ sku, qty: 1 }]), ...one([{ sku, qty: 1 }])]);
    expect(secret.status).toBe(200);
  });

  it("in a row: holds at most 200 units, then 429 with Retry-After until the hold releases some", async () => {
    const key = await publishable();
    const { sku, id } = await product();
    const from = newAddress();
    const made: number[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await send(key, from, one([{ sku, qty: 50 }]));
      expect(r.status, r.text).toBe(200);
      made.push(r.json.results.create_1.order_id);
    }
    const before = await storefrontOrders();
    // From the shop's page: the refusal is readable there (CORS), as every refusal is.
    const r = await post("/v1/orders", one([{ sku, qty: 1 }]), {
      headers: { authorization: "", "x-publishable-key": key, "cf-connecting-ip": from, origin: SHOP },
      cf: { colo: "ARN" },
    });
    expect(r.status, r.text).toBe(429);
    expect(r.headers.get("access-control-allow-origin")).toBe(SHOP);
    expect(r.json).toEqual({
      code: 429,
      error: "too many units held by unpaid orders from this address, retry later",
      errors: [
        "products: 1 more units would pass the 200 that unpaid storefront orders from one address may hold (200 held now)",
      ],
    });
    // The oldest order is released by the 60-minute hold: about an hour from now.
    const retry = Number(r.headers.get("retry-after"));
    expect(retry).toBeGreaterThan(59 * 60);
    expect(retry).toBeLessThanOrEqual(60 * 60);
    expect(await stockOf(id)).toBe(STOCK - 200);
    expect(await storefrontOrders()).toBe(before);
    // Another address is not held to this one's units.
    expect((await send(key, newAddress(), one([{ sku, qty: 50 }]))).status).toBe(200);

    // A paid order holds nothing any more: its units are free for the address again.
    expect((await call("PUT", "/v1/orders", { body: [{ order_id: made[0], status: "paid" }] })).status).toBe(200);
    expect((await send(key, from, one([{ sku, qty: 50 }]))).status).toBe(200);
    expect((await send(key, from, one([{ sku, qty: 1 }]))).status).toBe(429);
    // Cancelled by the hold, the oldest unpaid ones hold nothing either.
    await env.DB.prepare("UPDATE orders SET created_at = ?2 WHERE id IN (SELECT value FROM json_each(?1))")
      .bind(JSON.stringify(made.slice(1, 3)), Date.now() - 61 * MINUTE)
      .run();
    await scheduled(quietEnv);
    expect((await send(key, from, one([{ sku, qty: 50 }]))).status).toBe(200);
    expect(await stockOf(id)).toBe(STOCK - 50 - 50 * 3 - 50);
  });

  it("past the hold but not yet released, the units still count: Retry-After is the next sweep", async () => {
    const key = await publishable();
    const { sku } = await product();
    const from = newAddress();
    const made: number[] = [];
    for (let i = 0; i < 4; i++)
      made.push((await send(key, from, one([{ sku, qty: 50 }]))).json.results.create_1.order_id);
    await env.DB.prepare("UPDATE orders SET created_at = ?2 WHERE id IN (SELECT value FROM json_each(?1))")
      .bind(JSON.stringify(made), Date.now() - 61 * MINUTE)
      .run();
    const r = await send(key, from, one([{ sku, qty: 1 }]));
    expect(r.status, r.text).toBe(429);
    // The scheduled job runs every 5 minutes.
    expect(r.headers.get("retry-after")).toBe("300");
    await scheduled(quietEnv);
    expect((await send(key, from, one([{ sku, qty: 1 }]))).status).toBe(200);
  });

  it("at once: parallel requests from one address never hold more than 200 units together", async () => {
    const key = await publishable();
    const { sku, id } = await product();
    const from = newAddress();
    const answers = await Promise.all(Array.from({ length: 8 }, () => send(key, from, one([{ sku, qty: 50 }]))));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429, 429, 429]);
    for (const a of answers.filter((x) => x.status === 429)) {
      expect(a.json.code).toBe(429);
      expect(a.headers.get("retry-after")).toMatch(/^\d+$/);
    }
    expect(await stockOf(id)).toBe(STOCK - 200);
  });

  it("the limits follow STOREFRONT_MAX_LINE_QTY and STOREFRONT_MAX_HELD_UNITS", async () => {
    const key = await publishable();
    const { sku } = await product();
    const from = newAddress();
    const vars = { STOREFRONT_MAX_LINE_QTY: "3", STOREFRONT_MAX_HELD_UNITS: "5" };
    const at = (body: unknown) =>
      post("/v1/orders", body, {
        headers: { authorization: "", "x-publishable-key": key, "cf-connecting-ip": from },
        cf: { colo: "ARN" },
        env: vars,
      });
    expect((await at(one([{ sku, qty: 4 }]))).json.results.create_1.errors).toEqual([
      "products[0].qty: must be at most 3 for a storefront order",
    ]);
    expect((await at(one([{ sku, qty: 3 }]))).status).toBe(200);
    expect((await at(one([{ sku, qty: 3 }]))).status).toBe(429);
    expect((await at(one([{ sku, qty: 2 }]))).status).toBe(200);
  });
});
