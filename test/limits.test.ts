import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { app } from "../src/app";
import { MAX_DRAIN_BYTES } from "../src/platform/body";
import { MAX_VARIANTS } from "../src/products/schema";
import { basic, call, KEY, post } from "./helpers";

// The limits of docs/security.md, "Guarantees" (and the string limits of docs/orders.md, "Orders"), each with its status and a message
// that names the limit, on every route the limit applies to. Storage is per file: the catalog
// below is made once, with SKUs no other file sees.

const SKU = "LIM-ITEM";
const VSKU = "LIM-VARIANTS";
const OTHER = "LIM-OTHER";
const MiB = 1024 * 1024;

beforeAll(async () => {
  const r = await post("/v1/products", [
    { title: "Limit item", price: 1, sku: SKU, stock: 1_000_000 },
    { title: "Limit other", price: 1, sku: OTHER, stock: 1_000_000 },
    {
      title: "Limit variants",
      price: 1,
      sku: VSKU,
      variants: {
        add: ["A", "B"].map((v) => ({ variant_option1_name: "Size", variant_option1_value: v })),
      },
    },
  ]);
  expect(r.status).toBe(200);
});

const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
const order = (extra: Record<string, unknown> = {}) => ({
  order_id: "create",
  products: [{ sku: SKU, qty: 1 }],
  ...extra,
});
/** n lines of one product kept apart by their unit prices (10.00, 10.01, ...), none at the catalog's 1.00. */
const lines = (n: number) => Array.from({ length: n }, (_, i) => ({ sku: SKU, qty: 1, price: (1000 + i) / 100 }));
const variantEntries = (n: number, prefix = "v") =>
  Array.from({ length: n }, (_, i) => ({ variant_option1_name: "Size", variant_option1_value: `${prefix}${i}` }));
/** A metadata object whose JSON text is exactly `bytes` UTF-8 bytes long, using `char` as filler. */
const metadataOf = (bytes: number, char = "x") => {
  const width = new TextEncoder().encode(char).length;
  const room = bytes - '{"a":""}'.length;
  return { a: char.repeat(Math.floor(room / width)) + "x".repeat(room % width) };
};

type Where = "envelope" | "order" | "products" | "ok";
type Row = [
  name: string,
  method: "POST" | "PUT",
  path: string,
  body: unknown,
  status: number,
  where: Where,
  msg: RegExp,
];

const raw = (text: string) => ({ raw: text });

const rows: Row[] = [
  // request body: 1 MiB
  ["orders body over 1 MiB", "POST", "/v1/orders", raw(" ".repeat(MiB + 1)), 413, "envelope", /larger than 1 MiB/],
  ["products body over 1 MiB", "POST", "/v1/products", raw(" ".repeat(MiB + 1)), 413, "envelope", /larger than 1 MiB/],
  ["PUT body over 1 MiB", "PUT", "/v1/products", raw(" ".repeat(MiB + 1)), 413, "envelope", /larger than 1 MiB/],
  // items per request: 100
  ["101 orders", "POST", "/v1/orders", Array(101).fill(order()), 413, "envelope", /at most 100 orders/],
  [
    "101 products (POST)",
    "POST",
    "/v1/products",
    Array(101).fill({ title: "t", price: 1 }),
    413,
    "envelope",
    /at most 100 products/,
  ],
  [
    "101 products (PUT)",
    "PUT",
    "/v1/products",
    Array(101).fill({ sku: SKU, title: "t" }),
    413,
    "envelope",
    /at most 100 products/,
  ],
  // JSON nesting: 32
  ["orders nested 33 deep", "POST", "/v1/orders", raw(nested(33)), 400, "envelope", /nested deeper than 32 levels/],
  ["products nested 33 deep", "POST", "/v1/products", raw(nested(33)), 400, "envelope", /nested deeper than 32 levels/],
  ["PUT nested 33 deep", "PUT", "/v1/products", raw(nested(33)), 400, "envelope", /nested deeper than 32 levels/],
  // order metadata at depth 32 (array, object, metadata, 29 more): accepted
  [
    "order metadata reaching depth 32",
    "POST",
    "/v1/orders",
    [order({ metadata: { a: JSON.parse(nested(29)) } })],
    200,
    "ok",
    /./,
  ],
  // lines per order: 500, counted after products_add and products_remove
  [
    "501 lines after products_add",
    "POST",
    "/v1/orders",
    [order({ products: lines(500), products_add: [{ sku: SKU }] })],
    400,
    "order",
    /^products: at most 500 lines per order/,
  ],
  [
    "501 product entries",
    "POST",
    "/v1/orders",
    [order({ products: lines(501) })],
    400,
    "order",
    /^products: must have at most 500 entries/,
  ],
  [
    "500 lines + 1 added - 1 removed",
    "POST",
    "/v1/orders",
    [
      order({
        products: [...lines(499), { sku: OTHER, qty: 1 }],
        products_add: [{ sku: SKU }],
        products_remove: [{ sku: OTHER }],
      }),
    ],
    200,
    "ok",
    /./,
  ],
  // variants per product: 2,048 (docs/products.md, "Limits")
  [
    "2,049 variants on create",
    "POST",
    "/v1/products",
    { title: "t", price: 1, variants: { add: variantEntries(MAX_VARIANTS + 1) } },
    400,
    "products",
    /^variants\.add: must have at most 2048 entries/,
  ],
  [
    "2,049 variants in a PUT sync",
    "PUT",
    "/v1/products",
    { sku: VSKU, variants: { sync: variantEntries(MAX_VARIANTS + 1) } },
    400,
    "products",
    /^variants\.sync: must have at most 2048 entries/,
  ],
  [
    "2 variants + 2,047 added by PUT",
    "PUT",
    "/v1/products",
    { sku: VSKU, variants: { add: variantEntries(MAX_VARIANTS - 1, "n") } },
    400,
    "products",
    /^variants: a product has at most 2048 variants/,
  ],
  // metadata: 16 KiB serialised, counted in UTF-8 bytes
  ["order metadata of 16 KiB", "POST", "/v1/orders", [order({ metadata: metadataOf(16_384) })], 200, "ok", /./],
  [
    "order metadata over 16 KiB",
    "POST",
    "/v1/orders",
    [order({ metadata: metadataOf(16_385) })],
    400,
    "order",
    /^metadata: must be at most 16 KiB/,
  ],
  [
    "order metadata over 16 KiB in bytes, not characters",
    "POST",
    "/v1/orders",
    [order({ metadata: metadataOf(16_386, "é") })],
    400,
    "order",
    /^metadata: must be at most 16 KiB/,
  ],
  [
    "product metadata over 16 KiB",
    "POST",
    "/v1/products",
    { title: "t", price: 1, metadata: metadataOf(16_385) },
    400,
    "products",
    /^metadata: must be at most 16 KiB/,
  ],
  [
    "product metadata over 16 KiB in bytes",
    "POST",
    "/v1/products",
    { title: "t", price: 1, metadata: metadataOf(16_386, "€") },
    400,
    "products",
    /^metadata: must be at most 16 KiB/,
  ],
  [
    "PUT metadata over 16 KiB",
    "PUT",
    "/v1/products",
    { sku: SKU, metadata: metadataOf(16_385) },
    400,
    "products",
    /^metadata: must be at most 16 KiB/,
  ],
  // strings: 255; note and log 10,000; description 100,000
  [
    "an order line sku of 256",
    "POST",
    "/v1/orders",
    [order({ products: [{ sku: "x".repeat(256), qty: 1 }] })],
    400,
    "order",
    /^products\[0\]\.sku: must be at most 255 characters/,
  ],
  [
    "a city of 256",
    "POST",
    "/v1/orders",
    [order({ customer: { billing_details: { city: "x".repeat(256) } } })],
    400,
    "order",
    /^customer\.billing_details\.city: must be at most 255 characters/,
  ],
  [
    "a shipping name of 256",
    "POST",
    "/v1/orders",
    [order({ shipping: { name: "x".repeat(256) } })],
    400,
    "order",
    /^shipping\.name: must be at most 255 characters/,
  ],
  ["a note of 10,000", "POST", "/v1/orders", [order({ customer: { note: "x".repeat(10_000) } })], 200, "ok", /./],
  [
    "a note of 10,001",
    "POST",
    "/v1/orders",
    [order({ customer: { note: "x".repeat(10_001) } })],
    400,
    "order",
    /^customer\.note: must be at most 10000 characters/,
  ],
  ["a payment log of 10,000", "POST", "/v1/orders", [order({ payment: { log: "x".repeat(10_000) } })], 200, "ok", /./],
  [
    "a payment log of 10,001",
    "POST",
    "/v1/orders",
    [order({ payment: { log: "x".repeat(10_001) } })],
    400,
    "order",
    /^payment\.log: must be at most 10000 characters/,
  ],
  ["a title of 255", "POST", "/v1/products", { title: "x".repeat(255), price: 1 }, 200, "ok", /./],
  [
    "a title of 256",
    "POST",
    "/v1/products",
    { title: "x".repeat(256), price: 1 },
    400,
    "products",
    /^title: must be at most 255 characters/,
  ],
  [
    "a PUT seo_title of 256",
    "PUT",
    "/v1/products",
    { sku: SKU, seo_title: "x".repeat(256) },
    400,
    "products",
    /^seo_title: must be at most 255 characters/,
  ],
  [
    "a description of 100,000",
    "POST",
    "/v1/products",
    { title: "t", price: 1, description: "x".repeat(100_000) },
    200,
    "ok",
    /./,
  ],
  [
    "a description of 100,001",
    "POST",
    "/v1/products",
    { title: "t", price: 1, description: "x".repeat(100_001) },
    400,
    "products",
    /^description: must be at most 100000 characters/,
  ],
  [
    "a PUT description of 100,001",
    "PUT",
    "/v1/products",
    { sku: SKU, description: "x".repeat(100_001) },
    400,
    "products",
    /^description: must be at most 100000 characters/,
  ],
];

describe("limits of docs/security.md, Guarantees", () => {
  it.each(rows)("%s: %s %s answers %i", async (_, method, path, body, status, where, msg) => {
    const init = body && typeof body === "object" && "raw" in body ? (body as { raw: string }) : { body };
    const r = await call(method, path, init);
    expect(r.json, r.text.slice(0, 300)).toBeTypeOf("object");
    expect(r.status, r.text.slice(0, 300)).toBe(status);
    if (where === "envelope") {
      expect(r.json.code).toBe(status);
      expect(r.json.error).toMatch(msg);
    } else if (where === "order") {
      expect(r.json.results.create_1.success).toBe(false);
      expect(
        r.json.results.create_1.errors.some((e: string) => msg.test(e)),
        r.text.slice(0, 300),
      ).toBe(true);
    } else if (where === "products") {
      expect(r.json.success).toBe(0);
      expect(
        r.json.errors.some((e: string) => msg.test(e)),
        r.text.slice(0, 300),
      ).toBe(true);
    }
  });

  it("stops reading a body without Content-Length once it passes the drain bound", async () => {
    // An endless stream: a reader that buffered the whole body first would never answer. Past
    // 1 MiB the rest is read and dropped up to MAX_DRAIN_BYTES (docs/api.md, Conventions), then cancelled.
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        pulled++;
        c.enqueue(new Uint8Array(64 * 1024).fill(32));
      },
    });
    const res = await app.request(
      "/v1/orders",
      { method: "POST", headers: { authorization: basic(KEY) }, body, duplex: "half" } as RequestInit,
      env,
    );
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ code: 413, error: "request body is larger than 1 MiB" });
    expect(pulled).toBeLessThanOrEqual(MAX_DRAIN_BYTES / (64 * 1024) + 2);
  });
});
