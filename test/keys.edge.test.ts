import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { forgetCatalogVersion } from "../src/products/version";
import { wrapD1 } from "./d1-wrap";
import { createProduct, get, post, put, uid } from "./helpers";

// Catalog reads at the edge (docs/keys.md, "Edge cache"): ETag and 304, and a publishable key's
// reads from the Cache API under the catalog version.

const version = async () =>
  (await env.DB.prepare("SELECT version FROM catalog_version WHERE id = 1").first<{ version: number }>())?.version;

async function storefront() {
  const r = await post("/v1/keys", { name: `edge ${uid("pk")}`, type: "publishable" });
  return { headers: { authorization: "", "x-publishable-key": r.json.key as string } };
}

describe("catalog ETag", () => {
  it.each(["/v1/products", "/v1/products?include_details=true"])(
    "%s answers an ETag and 304 to If-None-Match",
    async (path) => {
      await createProduct({ sku: uid() });
      const first = await get(path);
      const tag = first.headers.get("etag");
      expect(tag).toMatch(/^"[0-9a-f]+"$/);
      const again = await get(path, { headers: { "if-none-match": tag as string } });
      expect(again.status).toBe(304);
      expect(again.text).toBe("");
    },
  );

  it("a list's ETag moves with any change to the catalog and differs by what the caller may see", async () => {
    const sku = uid();
    await createProduct({ sku, stock: 2 });
    const path = `/v1/products?sku=${sku}&include_details=true`;
    const before = (await get(path)).headers.get("etag") as string;
    expect((await get(path)).headers.get("etag")).toBe(before);
    expect((await put("/v1/products", { sku, stock: 3 })).status).toBe(200);
    const after = await get(path, { headers: { "if-none-match": before } });
    expect(after.status).toBe(200);
    expect(after.json.stock).toBe(3);
    expect(after.headers.get("etag")).not.toBe(before);
    const pk = await storefront();
    expect((await get(path, pk)).headers.get("etag")).not.toBe(after.headers.get("etag"));
    expect((await get(path, { headers: { "if-none-match": `W/${after.headers.get("etag")}` } })).status).toBe(304);
  });

  it("a single product answers an ETag and 304; the ETag moves with a change, and a storefront's is its own", async () => {
    const sku = uid();
    const p = await createProduct({ sku, stock: 1 });
    const path = `/v1/products/${p.product_id}`;
    const tag = (await get(path)).headers.get("etag") as string;
    expect(tag).toMatch(/^"[0-9a-f]+"$/);
    const again = await get(path, { headers: { "if-none-match": tag } });
    expect(again.status).toBe(304);
    expect(again.text).toBe("");
    expect((await put("/v1/products", { sku, stock: 4 })).status).toBe(200);
    const after = await get(path, { headers: { "if-none-match": tag } });
    expect(after.status).toBe(200);
    expect(after.json.stock).toBe(4);
    const pk = await storefront();
    const theirs = await get(path, pk);
    expect(theirs.headers.get("etag")).toMatch(/^"/);
    expect(theirs.headers.get("etag")).not.toBe(after.headers.get("etag"));
    const mine = { headers: { ...pk.headers, "if-none-match": theirs.headers.get("etag") as string } };
    expect((await get(path, mine)).status).toBe(304);
  });
});

describe("the catalog version", () => {
  it("moves in the batch of every product change", async () => {
    const before = await version();
    const p = await createProduct({ sku: uid() });
    const afterCreate = await version();
    expect(afterCreate).toBeGreaterThan(before as number);
    await post("/v1/orders", [{ order_id: "create", products: [{ sku: p.sku, qty: 1 }] }]);
    expect(await version()).toBeGreaterThan(afterCreate as number);
  });
});

describe("a publishable key's catalog read", () => {
  it("is served from the cache with no D1 query, and a change is visible on the next read", async () => {
    const pk = await storefront();
    const a = await createProduct({ sku: uid(), title: "Before" });
    const path = `/v1/products/${a.product_id}`;
    expect((await get(path, pk)).headers.get("x-catalog-cache")).toBe("miss");
    const w = wrapD1();
    const hit = await get(path, { ...pk, env: { DB: w.db } });
    expect(hit.status).toBe(200);
    expect(hit.headers.get("x-catalog-cache")).toBe("hit");
    expect(hit.json.title).toBe("Before");
    expect(w.counts.calls).toBe(0);
    const tag = hit.headers.get("etag") as string;
    expect((await get(path, { ...pk, headers: { ...pk.headers, "if-none-match": tag } })).status).toBe(304);

    expect((await put("/v1/products", [{ product_id: a.product_id, title: "After" }])).status).toBe(200);
    const next = await get(path, pk);
    expect(next.headers.get("x-catalog-cache")).toBe("miss");
    expect(next.json.title).toBe("After");
  });

  it("sees a change made in another colo once the colo's version entry expires", async () => {
    const pk = await storefront();
    const a = await createProduct({ sku: uid(), title: "Old" });
    const path = `/v1/products/${a.product_id}`;
    await get(path, pk);
    // Written past this colo: nothing here removes the version entry, so the old answer stands...
    // As every write's batch does, it moves the catalogue's version (src/products/version.ts).
    await env.DB.batch([
      env.DB.prepare("UPDATE products SET title = 'New' WHERE id = ?").bind(a.product_id),
      env.DB.prepare("UPDATE catalog_version SET version = version + 1 WHERE id = 1"),
    ]);
    expect((await get(path, pk)).json.title).toBe("Old");
    await forgetCatalogVersion(); // ...until the entry expires (CATALOG_VERSION_TTL_S)
    expect((await get(path, pk)).json.title).toBe("New");
  });

  it("reads a streamed page from D1 each time: the cache keeps only pages of one chunk", async () => {
    const pk = await storefront();
    const tag = uid("EDGE");
    // Three visible products of 800 KB of description each: past a chunk with details.
    await env.DB.prepare(
      `INSERT INTO products (title, price, visible, description, created_at, updated_at)
       SELECT ?2 || ' ' || value, 100, 1, hex(zeroblob(400000)), 0, 0 FROM json_each('[0,1,2]')`,
    )
      .bind(null, tag)
      .run();
    const big = `/v1/products?search=${tag}&include_details=true`;
    const small = `/v1/products?search=${tag}`;
    for (const path of [big, small]) expect((await get(path, pk)).headers.get("x-catalog-cache"), path).toBe("miss");
    const again = await get(big, pk);
    expect(again.headers.get("x-catalog-cache")).toBe("miss");
    expect(again.json.map((p: any) => p.description.length)).toEqual([800000, 800000, 800000]);
    expect((await get(small, pk)).headers.get("x-catalog-cache")).toBe("hit");
  });

  it.each([
    ["a product update", (sku: string) => put("/v1/products", { sku, stock: 4 })],
    ["an order", (sku: string) => post("/v1/orders", [{ order_id: "create", products: [{ sku, qty: 1 }] }])],
  ])(
    "%s removes the colo's shared version entry before it answers, so every isolate there reads anew",
    async (_, write) => {
      const pk = await storefront();
      const sku = uid();
      const a = await createProduct({ sku, stock: 9 });
      await get(`/v1/products/${a.product_id}`, pk);
      // The entry every isolate of the colo reads the version from, instead of D1.
      expect(await caches.default.match("https://catalog.internal/version")).toBeDefined();
      expect((await write(sku)).status).toBe(200);
      expect(await caches.default.match("https://catalog.internal/version")).toBeUndefined();
      const w = wrapD1();
      const next = await get(`/v1/products/${a.product_id}`, { ...pk, env: { DB: w.db } });
      expect(next.headers.get("x-catalog-cache")).toBe("miss");
      expect(w.counts.calls).toBeGreaterThan(0);
    },
  );

  it.each([
    ["a product update that changes nothing", (sku: string) => put("/v1/products", { sku, stock: 9 }), 200],
    ["a stock push of the counts as stored", (sku: string) => put("/v1/products", [{ sku, stock: 9 }]), 200],
    ["a refused product update", (sku: string) => put("/v1/products", { sku, stock: "many" }), 400],
    [
      "a refused order",
      (sku: string) => post("/v1/orders", [{ order_id: "create", products: [{ sku, qty: 10 }] }]),
      400,
    ],
  ])("%s leaves the colo's version entry: nothing a catalog read shows moved", async (_, write, status) => {
    const pk = await storefront();
    const sku = uid();
    const a = await createProduct({ sku, stock: 9, disable_minusqty: 1 });
    const before = await version();
    await get(`/v1/products/${a.product_id}`, pk);
    expect(await caches.default.match("https://catalog.internal/version")).toBeDefined();
    expect((await write(sku)).status).toBe(status);
    expect(await version()).toBe(before);
    expect(await caches.default.match("https://catalog.internal/version")).toBeDefined();
  });

  it("a webhook write leaves the catalog's entry alone", async () => {
    const pk = await storefront();
    const a = await createProduct({ sku: uid() });
    await get(`/v1/products/${a.product_id}`, pk);
    expect((await post("/v1/webhooks", { url: "https://hooks.example/edge", events: ["order.new"] })).status).toBe(201);
    expect(await caches.default.match("https://catalog.internal/version")).toBeDefined();
  });
});
