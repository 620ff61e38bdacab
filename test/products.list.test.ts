import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { PRODUCT_LIMIT_MAX } from "../src/products/list";
import { createProduct, followLinks, get, refusedQueries, uid } from "./helpers";

// GET /v1/products and GET /v1/products/count in the modelled dialect (docs/modelled-reads.md, "Modelled reads").
// Storage is per file: the first test sees an empty store.

const follow = followLinks;

const ids = (list: any[]) => list.map((p) => Number(p.id));

describe("GET /v1/products: an empty store", () => {
  it("answers a bare [] and count 0", async () => {
    const r = await get("/v1/products");
    expect(r.status).toBe(200);
    expect(r.json).toEqual([]);
    expect(r.headers.get("link")).toBeNull();
    expect((await get("/v1/products/count")).json).toEqual({ count: "0" });
  });
});

describe("GET /v1/products", () => {
  it("lists by id ascending in {product: [...]}, base fields only without include_details", async () => {
    const a = await createProduct({ sku: uid("LA"), title: "List A", price: 12.5, stock: 3 });
    const b = await createProduct({
      sku: uid("LB"),
      title: "List B",
      price: 10,
      variants: { add: [{ variant_option1_name: "Size", variant_option1_value: "S", sku: uid("LBS"), qty: 4 }] },
    });
    const r = await get("/v1/products");
    expect(r.status).toBe(200);
    const list = r.json;
    expect(ids(list)).toEqual([...ids(list)].sort((x, y) => x - y));
    const pa = list.find((p: any) => p.id === String(a.product_id));
    expect(pa).toMatchObject({ id: String(a.product_id), hasVariants: "0", qty: "3", stock: 3, price: "12.50" });
    expect(pa).not.toHaveProperty("variants");
    expect(pa).not.toHaveProperty("description");
    const pb = list.find((p: any) => p.id === String(b.product_id));
    expect(pb).toMatchObject({ hasVariants: "1", qty: "4", stock: 4, price: "10" });
  });

  it("with include_details=true adds variants, images and texts; false is the base answer", async () => {
    const sku = uid("DET");
    const p = await createProduct({
      sku,
      title: "Detailed",
      description: "<p>x</p>",
      images: [{ url: "https://img.example/1.jpg", alttext: "front" }, { url: "https://img.example/2.jpg" }],
      variants: {
        add: [
          {
            variant_option1_name: "Colour",
            variant_option1_value: "Green",
            sku: `${sku}-G`,
            qty: 2,
            price: 200,
          },
          { variant_option1_value: "Red", sku: `${sku}-R`, qty: 0, visible: 0 },
        ],
      },
    });
    const r = await get(`/v1/products?product_id=${p.product_id}&include_details=true`);
    expect(r.status).toBe(200);
    const out = r.json;
    expect(out.description).toBe("<p>x</p>");
    expect(out.images).toEqual({
      "1": { image: "https://img.example/1.jpg", alttext: "front" },
      "2": { image: "https://img.example/2.jpg", alttext: "" },
    });
    expect(out.variants).toHaveLength(2);
    expect(out.variants[0]).toMatchObject({
      product_id: String(p.product_id),
      sku: `${sku}-G`,
      price: "200.00",
      qty: "2",
      hidden: "0",
      disable_minusqty: false,
      values: [{ name: "Colour", val: "Green" }],
    });
    expect(out.variants[1]).toMatchObject({ hidden: "1", values: [{ name: "Colour", val: "Red" }] });
    const plain = await get(`/v1/products?product_id=${p.product_id}&include_details=false`);
    expect(plain.json).not.toHaveProperty("variants");
    expect(plain.json.id).toBe(String(p.product_id));
  });

  it("finds one product by product_id or by product or variant sku; 404 when none", async () => {
    const sku = uid("ONE");
    const p = await createProduct({
      sku: `${sku}-P`,
      variants: { add: [{ variant_option1_name: "Size", variant_option1_value: "M", sku: `${sku}-V` }] },
    });
    for (const q of [`product_id=${p.product_id}`, `sku=${sku}-P`, `sku=${sku}-V`, `sku=%20${sku}-P%20`]) {
      const r = await get(`/v1/products?${q}`);
      expect(r.status, q).toBe(200);
      expect(r.json.id, q).toBe(String(p.product_id));
    }
    // The C# SDK's read: limit=1 does not hide the product.
    expect((await get(`/v1/products?product_id=${p.product_id}&include_details=true&limit=1`)).json.id).toBe(
      String(p.product_id),
    );
    const none = await get("/v1/products?product_id=99999999");
    expect(none.status).toBe(404);
    expect(none.json).toEqual({ code: 404, error: "product 99999999 not found" });
    const noSku = await get(`/v1/products?sku=${uid("NONE")}`);
    expect(noSku.status).toBe(404);
    expect(noSku.json.code).toBe(404);
  });

  it("search answers a bare array matching title, sku and variant sku, wildcards literal", async () => {
    const tag = uid("srch").toLowerCase();
    const t = await createProduct({ title: `Lamp ${tag} shade`, sku: uid("S1") });
    const s = await createProduct({ title: "Other", sku: `${tag}-SKU`.toUpperCase() });
    const v = await createProduct({
      title: "Variant one",
      variants: { add: [{ variant_option1_name: "Size", variant_option1_value: "L", sku: `V-${tag}` }] },
    });
    await createProduct({ title: "Unrelated 100% wool", sku: uid("S4") });
    const r = await get(`/v1/products?search=${encodeURIComponent(tag.toUpperCase())}`);
    expect(r.status).toBe(200);
    expect(Array.isArray(r.json)).toBe(true);
    expect(ids(r.json)).toEqual([t.product_id, s.product_id, v.product_id]);
    // % and _ match themselves, not anything.
    expect((await get("/v1/products?search=%25%25%25")).json).toEqual([]);
    expect(ids((await get("/v1/products?search=100%25")).json)).toHaveLength(1);
    expect((await get(`/v1/products?search=${tag}&include_details=true`)).json[2].variants).toHaveLength(1);
  });

  it("search takes long text (D1 refuses LIKE patterns over 50 bytes; this is no LIKE)", async () => {
    const long = `${uid("long")} ${"very long product title words ".repeat(6)}`;
    const p = await createProduct({ title: long });
    const r = await get(`/v1/products?search=${encodeURIComponent(long.slice(3))}`);
    expect(r.status).toBe(200);
    expect(ids(r.json)).toEqual([p.product_id]);
  });

  it("pages by limit and offset to an empty page, with a Link to the next offset", async () => {
    for (let i = 0; i < 5; i++) await createProduct({ title: `Page ${i}` });
    const total = Number((await get("/v1/products/count")).json.count);
    const seen: number[] = [];
    for (let offset = 0; ; offset += 3) {
      const r = await get(`/v1/products?limit=3&offset=${offset}&include_details=true`);
      expect(r.status).toBe(200);
      if (!r.json.length) {
        expect(r.headers.get("link")).toBeNull();
        break;
      }
      const link = r.headers.get("link");
      if (offset + 3 < total) {
        expect(link).toMatch(/^<http[^>]+>; rel="next"$/);
        const next = new URL(/<([^>]+)>/.exec(link as string)?.[1] as string);
        expect(Object.fromEntries(next.searchParams)).toEqual({
          limit: "3",
          offset: String(offset + 3),
          include_details: "true",
        });
      } else expect(link).toBeNull();
      seen.push(...ids(r.json));
      expect(offset).toBeLessThan(total + 3);
    }
    expect(seen).toHaveLength(total);
    expect(new Set(seen).size).toBe(total);
  });

  it("pages by cursor through Link headers, without repeats or gaps", async () => {
    const total = Number((await get("/v1/products/count")).json.count);
    const pages = await follow("/v1/products?limit=4");
    const seen = pages.flatMap((p) => ids(p));
    expect(seen).toHaveLength(total);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    expect(pages.slice(0, -1).every((p) => p.length === 4)).toBe(true);
  });

  it("search pages through Link too, keeping the bare array", async () => {
    const tag = uid("pg").toLowerCase();
    for (let i = 0; i < 3; i++) await createProduct({ title: `${tag} ${i}` });
    const pages = await follow(`/v1/products?search=${tag}&limit=2`);
    expect(pages.map((p) => p.length)).toEqual([2, 1]);
  });

  it("accepts apps_load and ignores it", async () => {
    const r = await get("/v1/products?apps_load=true&limit=1");
    expect(r.status).toBe(200);
    expect(r.json).toHaveLength(1);
  });

  it("defaults to 100 per page", async () => {
    await env.DB.prepare(
      `INSERT INTO products (title, price, created_at, updated_at)
       SELECT 'bulk ' || value, 100, 0, 0 FROM json_each(?1)`,
    )
      .bind(JSON.stringify(Array.from({ length: 110 }, (_, i) => i)))
      .run();
    const r = await get("/v1/products");
    expect(r.json).toHaveLength(100);
    expect(r.headers.get("link")).toContain("cursor=");
    expect((await get(`/v1/products?limit=${PRODUCT_LIMIT_MAX}`)).json.length).toBeGreaterThan(110);
  });
});

describe("GET /v1/products: refused queries", () => {
  refusedQueries(
    "/v1/products",
    [
      ["productid=7", "unknown query parameter: productid"],
      ["include_detail=true", "unknown query parameter: include_detail"],
      ["status=1", "unknown query parameter: status"],
      ["limit=1&limit=2", "query parameter given more than once: limit"],
    ],
    [
      ["product_id=abc", "product_id: must be a positive whole number (an id)"],
      ["product_id=0", "product_id: must be a positive whole number (an id)"],
      ["product_id=", "product_id: must not be empty"],
      ["sku=", "sku: must not be empty"],
      ["sku=%20%20", "sku: must not be empty"],
      ["search=", "search: must not be empty"],
      ["limit=0", `limit: must be a whole number from 1 to ${PRODUCT_LIMIT_MAX}`],
      [`limit=${PRODUCT_LIMIT_MAX + 1}`, `limit: must be a whole number from 1 to ${PRODUCT_LIMIT_MAX}`],
      ["limit=1.5", `limit: must be a whole number from 1 to ${PRODUCT_LIMIT_MAX}`],
      ["limit=", "limit: must not be empty"],
      ["offset=-1", "offset: must be a whole number from 0 to 100000000"],
      ["offset=x", "offset: must be a whole number from 0 to 100000000"],
      ["include_details=yes", "include_details: must be true or false"],
      ["cursor=garbage", "cursor: is not a cursor this service gave out"],
      ["product_id=1&sku=A", "sku: give product_id or sku, not both"],
      ["sku=A&search=b", "search: cannot be combined with product_id or sku"],
      ["offset=0&cursor=aWQ6MQ", "cursor: cannot be combined with offset, product_id or sku"],
    ],
  );

  it("count takes no parameters", async () => {
    const r = await get("/v1/products/count?limit=1");
    expect(r.status).toBe(400);
    expect(r.json.error).toBe("unknown query parameter: limit");
  });

  it("needs credentials", async () => {
    expect((await get("/v1/products", { headers: { authorization: "" } })).status).toBe(401);
    expect((await get("/v1/products/count", { headers: { authorization: "" } })).status).toBe(401);
  });
});

describe("GET /v1/products/count", () => {
  it("counts every product, as a string", async () => {
    const before = Number((await get("/v1/products/count")).json.count);
    await createProduct({ title: "Counted" });
    const r = await get("/v1/products/count");
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ count: String(before + 1) });
    const { n } = (await env.DB.prepare("SELECT count(*) AS n FROM products").first<{ n: number }>()) ?? { n: -1 };
    expect(r.json.count).toBe(String(n));
  });
});
