import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call, post, uid } from "./helpers";
import { rowsD1 } from "./rows";

// The rows the product reads make D1 read (docs/design.md, "Answers from D1"), against the plain
// reads of the same answers (bench/worker/plain.ts): the product and each variant once for a
// product; for a page, the rows its OFFSET skips, each product, and each variant twice (its stock
// sum and its list). A read reads at most 1.25 times its plain read; each here also has its own
// tighter bound, one pass over the variants and a few rows a product.

const N = 2048;
const SMALL = 499;
const NAMES = ["Size", "Colour", "Material", "Fit", "Edition"];

function entry(prefix: string, i: number) {
  const digits = [i % 8, (i >> 3) % 8, (i >> 6) % 8, (i >> 9) % 4, i >> 11];
  const e: Record<string, unknown> = { sku: `${prefix}-${i}`, price: 100 + (i % 7), qty: i % 5 };
  NAMES.forEach((name, k) => {
    e[`variant_option${k + 1}_name`] = name;
    e[`variant_option${k + 1}_value`] = `${name[0]}${digits[k]}`;
  });
  // Every tenth variant hidden: a storefront reads them and shows none.
  if (i % 10 === 0) e.visible = 0;
  return e;
}

async function rowsOf(path: string, headers: Record<string, string> = {}) {
  const { db, rows } = rowsD1();
  const r = await call("GET", path, { headers, env: { DB: db } });
  expect(r.status, r.text.slice(0, 200)).toBe(200);
  expect(rows.unmetered).toBe(0);
  return { ...rows, json: r.json };
}

let big: number;
let bigSku: string;
let offset: number;
let pk: string;

beforeAll(async () => {
  // Products before the page, which its OFFSET skips.
  const before = JSON.stringify(Array.from({ length: 40 }, (_, i) => i));
  await env.DB.prepare(
    `INSERT INTO products (title, price, created_at, updated_at) SELECT 'before ' || value, 100, 0, 0 FROM json_each(?1)`,
  )
    .bind(before)
    .run();
  offset = 40;
  const prefix = uid("BIG");
  bigSku = `${prefix}-7`;
  const created = await post("/v1/products", {
    title: "Big",
    price: 100,
    variants: { add: Array.from({ length: N }, (_, i) => entry(prefix, i)) },
  });
  expect(created.status).toBe(200);
  big = created.json.products[0].product_id;
  await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO products (title, price, option_names, created_at, updated_at)
       SELECT 'small ' || value, 100, '["Size"]', 0, 0 FROM json_each(?1)`,
    ).bind(JSON.stringify(Array.from({ length: SMALL + 10 }, (_, i) => i))),
    env.DB.prepare(
      `INSERT INTO variants (product_id, option1_value, price, qty, position, created_at, updated_at)
       SELECT p.id, 'S' || j.value, 100, 1, j.value, 0, 0 FROM products AS p, json_each('[0,1,2]') AS j
       WHERE p.title LIKE 'small %'`,
    ),
  ]);
  const key = await post("/v1/keys", { name: uid("storefront"), type: "publishable", scopes: ["stock"] });
  expect(key.status).toBe(201);
  pk = key.json.key;
});

const storefront = () => ({ authorization: "", "x-publishable-key": pk });
/** The plain read of a page: the skipped rows, each product, each variant twice. */
const plainPage = (products: number, variants: number) => offset + products + 2 * variants;

describe("rows read by the product reads", () => {
  it.each([
    ["secret key", () => ({})],
    ["publishable key", storefront],
  ])("GET /v1/products/{id} of 2,048 variants reads each once (%s)", async (_, headers) => {
    // A query the route ignores: a storefront's read misses the colo's cache (src/products/version.ts).
    const r = await rowsOf(`/v1/products/${big}?miss=${uid()}`, headers());
    expect(r.json.variants.length).toBeGreaterThan(N * 0.8);
    expect(r.read).toBeLessThanOrEqual(N + 12);
    expect(r.read).toBeLessThanOrEqual(1.25 * (N + 1));
  });

  it.each([
    ["product_id", () => `product_id=${big}`],
    ["sku", () => `sku=${bigSku}`],
  ])("GET /v1/products?%s=...&include_details=true reads each variant once", async (_, query) => {
    const r = await rowsOf(`/v1/products?${query()}&include_details=true`);
    expect(r.json.variants).toHaveLength(N);
    expect(r.read).toBeLessThanOrEqual(N + 16);
  });

  it.each([
    ["with details", "&include_details=true", () => ({})],
    ["without details", "", () => ({})],
    ["with details, publishable key", "&include_details=true", storefront],
  ])("GET /v1/products?limit=500 (%s) reads each variant once and a few rows a product", async (_, q, headers) => {
    const r = await rowsOf(`/v1/products?limit=500&offset=${offset}${q}`, headers());
    expect(r.json).toHaveLength(500);
    const variants = N + 3 * SMALL;
    expect(r.read).toBeLessThanOrEqual(1.25 * plainPage(500, variants));
    expect(r.read).toBeLessThanOrEqual(offset + 6 * 500 + variants + 16);
  });
});
