import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { wrapD1 } from "./d1-wrap";
import { createProduct, get, post, put, subscribeAll, uid } from "./helpers";

// Events are recorded only while an endpoint subscribes (docs/webhooks.md, "Webhooks").
beforeAll(subscribeAll);

// Stock-tool batches (docs/products.md, "Updating products"): an array of items that each set only stock,
// price and/or qty_location of one SKU is ONE D1 round trip whatever the number of items, also
// over the variants of one product, and the answer holds each product once.

const productWith = (n: number, extra: Record<string, unknown> = {}) =>
  createProduct({
    sku: uid("P"),
    ...extra,
    variants: {
      add: Array.from({ length: n }, (_, i) => ({
        variant_option1_name: "Size",
        variant_option1_value: `s${i}`,
        sku: uid("V"),
        qty: 1,
      })),
    },
  });

const stockItems = (p: any, n: number) =>
  p.variants.slice(0, n).map((v: any, i: number) => ({ sku: v.sku, stock: 10 + i, price: "12.50" }));

describe("PUT /v1/products stock-tool batch", () => {
  it("applies 1 and 100 items over one product in one read and one write of the same statements", async () => {
    const seen: number[][] = [];
    for (const n of [1, 100]) {
      const p = await productWith(100);
      const { db, counts } = wrapD1();
      const r = await put("/v1/products", stockItems(p, n), { env: { DB: db } });
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ success: n, errors: [], notices: [] });
      expect(r.json.products).toHaveLength(1);
      const qty = r.json.products[0].variants.map((v: any) => v.qty);
      expect(qty).toEqual(Array.from({ length: 100 }, (_, i) => (i < n ? 10 + i : 1)));
      expect(counts.calls).toBe(2);
      seen.push(counts.statementsPerCall);
    }
    expect(seen[1]).toEqual(seen[0]);
  });

  it("answers linearly: 10 and 100 items over one product both answer the product once", async () => {
    const p = await productWith(100);
    const q = await productWith(100);
    const small = await put("/v1/products", stockItems(p, 10));
    const large = await put("/v1/products", stockItems(q, 100));
    expect(large.json.success).toBe(100);
    // Both answers are the product once: the size is that of one product, whatever the items.
    expect(large.text.length / small.text.length).toBeLessThan(1.2);
    expect(large.json.products).toHaveLength(1);
    expect(large.json.products[0]).toEqual((await get(`/v1/products/${q.product_id}`)).json);
  });

  it("answers linearly over distinct products: 100 items answer ten times what 10 do", async () => {
    const made = await post(
      "/v1/products",
      Array.from({ length: 100 }, (_, i) => ({ title: `Lin ${i}`, price: 1, sku: uid("LIN") })),
    );
    const skus = made.json.products.map((p: any) => p.sku as string);
    const small = await put(
      "/v1/products",
      skus.slice(0, 10).map((sku: string) => ({ sku, stock: 3 })),
    );
    const large = await put(
      "/v1/products",
      skus.map((sku: string) => ({ sku, stock: 4 })),
    );
    expect(large.json.products).toHaveLength(100);
    const ratio = large.text.length / small.text.length;
    expect(ratio).toBeGreaterThan(9);
    expect(ratio).toBeLessThan(11);
  });

  it("touches several products and SKUs of both kinds; each product once, in its final state", async () => {
    const a = await productWith(3);
    const plain = await createProduct({ sku: uid("PLAIN"), stock: 4 });
    const r = await put("/v1/products", [
      { sku: a.variants[0].sku, stock: 7 },
      { sku: plain.sku, stock: 9, qty_location: "Shelf 2" },
      { sku: a.variants[2].sku, price: 99, qty_location: "Back" },
      { sku: a.variants[0].sku, stock: 8 },
      { sku: a.sku, price: 50 },
    ]);
    expect(r.status).toBe(200);
    expect(r.json.success).toBe(5);
    expect(r.json.products.map((p: any) => p.product_id)).toEqual([a.product_id, plain.product_id]);
    const [pa, pp] = r.json.products;
    expect(pa.variants.map((v: any) => [v.qty, v.price, v.qty_location])).toEqual([
      [8, 100, null],
      [1, 100, null],
      [1, 99, "Back"],
    ]);
    expect(pa.price).toBe(50);
    expect(pp).toMatchObject({ stock: 9, qty_location: "Shelf 2" });
    expect(pa).toEqual((await get(`/v1/products/${a.product_id}`)).json);
  });

  it("answers each failing item and applies the others", async () => {
    const guarded = await productWith(2, { disable_minusqty: 1 });
    const open = await productWith(2);
    const r = await put("/v1/products", [
      { sku: open.variants[0].sku, stock: 3 },
      { sku: "NO-SUCH-SKU-X", stock: 1 },
      { sku: guarded.variants[0].sku, stock: -1 },
      { sku: open.sku, stock: 5 },
      { sku: guarded.variants[1].sku, stock: 6 },
    ]);
    expect(r.status).toBe(200);
    expect(r.json.success).toBe(2);
    expect(r.json.errors).toEqual([
      "[1].sku: no product or variant has SKU NO-SUCH-SKU-X",
      "[2].stock: must not be negative while disable_minusqty is on",
      "[3].stock: the product has variants, whose qty is its stock: select a variant or use variants.update",
    ]);
    expect((await get(`/v1/products/${open.product_id}`)).json.variants.map((v: any) => v.qty)).toEqual([3, 1]);
    expect((await get(`/v1/products/${guarded.product_id}`)).json.variants.map((v: any) => v.qty)).toEqual([1, 6]);
  });

  it("answers 404 when no item's SKU exists, in one read", async () => {
    const { db, counts } = wrapD1();
    const r = await put(
      "/v1/products",
      [
        { sku: "NONE-A", stock: 1 },
        { sku: "NONE-B", price: 2 },
      ],
      {
        env: { DB: db },
      },
    );
    expect(r.status).toBe(404);
    expect(counts.calls).toBe(1);
  });

  it("finds SKUs sent with surrounding spaces, but not in another case", async () => {
    const p = await productWith(1);
    const sku = p.variants[0].sku as string;
    const r = await put("/v1/products", [
      { sku: `  ${sku}\t`, stock: 42 },
      { sku: sku.toLowerCase(), stock: 1 },
    ]);
    expect(r.json.success).toBe(1);
    expect(r.json.errors).toEqual([`[1].sku: no product or variant has SKU ${sku.toLowerCase()}`]);
    expect(r.json.products[0].variants[0].qty).toBe(42);
  });

  it("writes one product.update event per product in the same batch, none when it fails", async () => {
    const p = await productWith(3);
    const count = async () =>
      (
        await env.DB.prepare("SELECT count(*) AS n FROM events WHERE product_id = ? AND type = 'product.update'")
          .bind(p.product_id)
          .first<{ n: number }>()
      )?.n;
    const { db } = wrapD1({ failCall: 1 });
    expect((await put("/v1/products", stockItems(p, 3), { env: { DB: db } })).status).toBe(503);
    expect(await count()).toBe(0);
    expect((await put("/v1/products", stockItems(p, 3))).status).toBe(200);
    expect(await count()).toBe(1);
  });

  it("replays a keyed batch's first answer", async () => {
    const p = await productWith(2);
    const headers = { "idempotency-key": uid("key") };
    const body = stockItems(p, 2);
    const first = await put("/v1/products", body, { headers });
    expect(first.status).toBe(200);
    await put("/v1/products", { sku: p.variants[0].sku, stock: 500 });
    const again = await put("/v1/products", body, { headers });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json).toEqual(first.json);
    expect((await get(`/v1/products/${p.product_id}`)).json.variants[0].qty).toBe(500);
  });
});

describe("stock-tool items for one SKU apply in order", () => {
  it("a refused item followed by another for its SKU still fails on its own", async () => {
    const p = await productWith(1, { disable_minusqty: 1 });
    const sku = p.variants[0].sku;
    const r = await put("/v1/products", [
      { sku, stock: -2 },
      { sku, stock: 4 },
    ]);
    expect(r.status).toBe(200);
    expect(r.json.success).toBe(1);
    expect(r.json.errors).toEqual(["[0].stock: must not be negative while disable_minusqty is on"]);
    expect(r.json.products[0].variants[0].qty).toBe(4);
  });

  it("the last item for a SKU wins, field by field", async () => {
    const p = await productWith(1);
    const sku = p.variants[0].sku;
    const r = await put("/v1/products", [
      { sku, stock: 2, price: 5 },
      { sku, stock: 3 },
    ]);
    expect(r.json.success).toBe(2);
    expect(r.json.products[0].variants[0]).toMatchObject({ qty: 3, price: 5 });
  });
});
