import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { catalog, type Json, read, SDK_PRODUCT, SDK_VARIANT, sdkProductPages } from "./fixtures/clients-replay";
import { garmentVariants, SIZES } from "./fixtures/garments.mjs";
import { get, post, uid } from "./helpers";
import { modelledProductDetails, type Row } from "./modelled-reference";

// The modelled API's clients that page through the catalogue (a paging client, a product spider),
// replayed against this service with each answer read the way they read it
// (test/fixtures/clients-replay.ts; docs/modelled-reads.md, "Modelled reads"), at real sizes: a
// catalogue with a 2,048-variant product, and one with two of them in a window of 100.

describe("a paging client: limit=100&offset=N&include_details=true until an empty page", () => {
  it("reads every product once and stops", async () => {
    await catalog();
    await env.DB.prepare(
      `INSERT INTO products (title, price, stock, created_at, updated_at)
       SELECT 'paged ' || value, 1000, value, 0, 0 FROM json_each(?1)`,
    )
      .bind(JSON.stringify(Array.from({ length: 230 }, (_, i) => i)))
      .run();
    const total = Number((await get("/v1/products/count")).json.count);
    const seen = new Set<string>();
    let requests = 0;
    for (let offset = 0; ; offset += 100) {
      const r = await get(`/v1/products?limit=100&offset=${offset}&include_details=true`);
      requests++;
      expect(r.status).toBe(200);
      const page: Json[] = r.json;
      if (!page.length) break;
      for (const p of page) {
        read(p, { id: "numeric-string", title: "string", price: "numeric-string", images: "object" }, "product");
        seen.add(p.id);
      }
      expect(requests).toBeLessThan(20);
    }
    expect(seen.size).toBe(total);
    // Full pages, then the empty page that stops it.
    expect(requests).toBe(Math.ceil(total / 100) + 1);
  });
});

/** A product of 2,048 variants over five options (8 x 4 x 4 x 4 x 4), written straight to D1. */
async function bigProduct(tag: string) {
  const seq = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => i));
  const [made] = await env.DB.batch<{ id: number }>([
    env.DB.prepare(
      `INSERT INTO products (title, sku, price, option_names, created_at, updated_at)
       VALUES (?1, ?1, 19900, '["Size","Colour","Fit","Cut","Sleeve"]', 0, 0) RETURNING id`,
    ).bind(tag),
  ]);
  const id = made.results[0].id;
  await env.DB.prepare(
    `INSERT INTO variants (product_id, sku, option1_value, option2_value, option3_value, option4_value,
       option5_value, price, qty, position, created_at, updated_at)
     SELECT ?1, ?2 || '-' || j.value, 'S' || (j.value % 8), 'C' || (j.value / 8 % 4), 'F' || (j.value / 32 % 4),
       'K' || (j.value / 128 % 4), 'L' || (j.value / 512), 19900, 1, j.value, 0, 0 FROM json_each(?3) AS j`,
  )
    .bind(id, tag, seq(2048))
    .run();
  return id;
}

describe("a product spider: limit=100&offset=N&include_details=true until a short page, with a 2,048-variant product", () => {
  it("collects every product and every variant, in full pages", async () => {
    const tag = uid("SPIDER");
    const big = await bigProduct(tag);
    await env.DB.prepare(
      `INSERT INTO products (title, price, stock, created_at, updated_at)
       SELECT ?2 || ' ' || value, 1000, value, 0, 0 FROM json_each(?1)`,
    )
      .bind(JSON.stringify(Array.from({ length: 150 }, (_, i) => i)), tag)
      .run();
    const total = Number((await get("/v1/products/count")).json.count);
    const variants = (await env.DB.prepare("SELECT count(*) AS n FROM variants").first<{ n: number }>())?.n;
    const seen = new Map<string, number>();
    const pages = await sdkProductPages();
    const sizes = pages.map(({ page }) => page.length);
    for (const { page } of pages) {
      for (const p of page) {
        read(p, SDK_PRODUCT, "product");
        seen.set(p.id, p.variants.length);
      }
    }
    expect(seen.size).toBe(total);
    expect(seen.get(String(big))).toBe(2048);
    expect([...seen.values()].reduce((a, b) => a + b, 0)).toBe(variants);
    // Every page full but the last: a short page is the end for this client.
    expect(sizes.slice(0, -1).every((n) => n === 100)).toBe(true);
  });

  it("reads the 2,048-variant product alone as the SDK does, every variant with its five values", async () => {
    const tag = uid("BIG");
    const id = await bigProduct(tag);
    const r = await get(`/v1/products?product_id=${id}&include_details=true&limit=1`);
    expect(r.status).toBe(200);
    read(r.json, SDK_PRODUCT, "product");
    expect(r.json.variants).toHaveLength(2048);
    expect(r.json.qty).toBe("2048");
    for (const v of [r.json.variants[0], r.json.variants[2047]]) read(v, SDK_VARIANT, "variant");
    expect(r.json.variants[2047].values.map((x: Json) => x.val)).toEqual(["S7", "C3", "F3", "K3", "L3"]);
    expect(new Set(r.json.variants.map((v: Json) => v.sku)).size).toBe(2048);
  });
});

// Two garments of 2,048 variants as a shop writes them (test/fixtures/garments.mjs, shared with the
// bench), the window the spider was refused (400) before.
function garment(kind: string, title: string, price: number) {
  return {
    title,
    sku: kind,
    price,
    description: `${title}: garment-dyed, reinforced "shoulder" seams; wash at 30 °C.`,
    images: [{ url: `https://cdn.shop.example/${kind.toLowerCase()}-1.jpg`, alttext: title }],
    categories: [["Clothes", kind === "TSHIRT" ? "T-shirts" : "Hoodies"]],
    variants: { add: garmentVariants(kind, price) },
  };
}

const socks = (tag: string, from: number, n: number) =>
  Array.from({ length: n }, (_, i) => ({
    title: `Everyday socks ${tag} ${from + i}`,
    sku: `${tag}-SOCK-${from + i}`,
    price: 99,
    variants: {
      add: SIZES.slice(0, 1 + (i % 6)).map((size) => ({
        sku: `${tag}-SOCK-${from + i}-${size}`,
        variant_option1_name: "Size",
        variant_option1_value: size,
        qty: 10,
      })),
    },
  }));

/** Every product as D1 holds it, presented by the reference (test/modelled-reference.ts). */
async function storedProducts() {
  const [ps, vs] = await env.DB.batch<Row>([
    env.DB.prepare(
      `SELECT p.*, (SELECT count(*) FROM variants AS v WHERE v.product_id = p.id) AS variant_count,
         (SELECT total(v.qty) FROM variants AS v WHERE v.product_id = p.id) AS variant_qty FROM products AS p`,
    ),
    env.DB.prepare("SELECT * FROM variants ORDER BY product_id, position, id"),
  ]);
  const byProduct = new Map<unknown, Row[]>();
  for (const v of vs.results) byProduct.set(v.product_id, [...(byProduct.get(v.product_id) ?? []), v]);
  return new Map(ps.results.map((p) => [String(p.id), modelledProductDetails(p, byProduct.get(p.id) ?? [])]));
}

describe("a product spider with two 2,048-variant products in one window of 100", () => {
  it("collects every product exactly once with its fields, in full pages, the large window streamed", async () => {
    const tag = uid("WIN");
    // Fill to a whole window, so that the next 100 products are one page of limit=100.
    const count = Number((await get("/v1/products/count")).json.count);
    await env.DB.prepare(
      `INSERT INTO products (title, price, created_at, updated_at) SELECT ?2 || ' fill ' || value, 500, 0, 0
       FROM json_each(?1)`,
    )
      .bind(JSON.stringify(Array.from({ length: (100 - (count % 100)) % 100 }, (_, i) => i)), tag)
      .run();
    const window = Number((await get("/v1/products/count")).json.count);
    expect(window % 100).toBe(0);
    for (const body of [
      socks(tag, 0, 10),
      garment("TSHIRT", `Organic T-shirt Classic ${tag}`, 299),
      socks(tag, 10, 40),
      garment("HOODIE", `Heavyweight Hoodie ${tag}`, 799),
      socks(tag, 50, 48),
    ]) {
      const r = await post("/v1/products", body);
      expect(r.status, r.text.slice(0, 300)).toBe(200);
    }
    const want = await storedProducts();
    const seen = new Map<string, Json>();
    const pages = await sdkProductPages();
    const sizes = pages.map(({ page }) => page.length);
    for (const { offset, r, page } of pages) {
      if (offset === window) {
        // The window once refused with 400: whole, and streamed (no Content-Length).
        expect(page.filter((p) => p.variants.length === 2048)).toHaveLength(2);
        expect(new TextEncoder().encode(r.text).length).toBeGreaterThan(2 * 1024 * 1024);
        expect(r.headers.get("content-length")).toBeNull();
      }
      for (const p of page) {
        expect(seen.has(p.id), `product ${p.id} twice`).toBe(false);
        seen.set(p.id, p);
        read(p, SDK_PRODUCT, `product ${p.id}`);
        expect(p, `product ${p.id}`).toEqual(want.get(p.id));
      }
    }
    expect(seen.size).toBe(want.size);
    expect(sizes.slice(0, -1).every((n) => n === 100)).toBe(true);
    const shirt = [...seen.values()].find((p) => p.title === `Organic T-shirt Classic ${tag}`) as Json;
    expect(shirt.variants).toHaveLength(2048);
    expect(new Set(shirt.variants.map((v: Json) => v.sku)).size).toBe(2048);
    expect(shirt.variants[27]).toMatchObject({
      sku: "TSHIRT-ORG-FORGRN-L-REG",
      values: [
        { name: "Size", val: "L" },
        { name: "Colour", val: "Forest green" },
        { name: "Material", val: "Organic cotton" },
        { name: "Fit", val: "Regular" },
      ],
    });
    for (const v of [shirt.variants[0], shirt.variants[2047]]) read(v, SDK_VARIANT, "variant");
  }, 180_000); // two creates of 2,048 variants and six pages, on a loaded 2-core machine
});
