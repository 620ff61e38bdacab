import { describe, expect, it } from "vitest";
import { wrapD1 } from "./d1-wrap";
import { createProduct, get, put, uid } from "./helpers";

// PUT /v1/products by one SKU's stock, price and/or qty_location (the stock tools' item): one read
// and one write batch (the guarded UPDATEs of what changed, the events, the versions and the
// read-back), as every PUT. test/products.put.stock.test.ts has the batches of many items.

const colour = (value: string, extra: Record<string, unknown> = {}) => ({
  variant_option1_name: "Colour",
  variant_option1_value: value,
  sku: uid("V"),
  qty: 3,
  price: 10,
  ...extra,
});

const withVariants = (body: Record<string, unknown> = {}) =>
  createProduct({ sku: uid("P"), variants: { add: [colour("Red"), colour("Blue")] }, ...body });

/** Everything but the timestamps, which differ between two products. */
const stable = ({ updated_at: _, created_at: __, ...rest }: Record<string, unknown>) => rest;

describe("PUT /v1/products by one SKU's stock or price", () => {
  it("sets a variant's qty by its SKU in a read and a write of fixed statements", async () => {
    const p = await withVariants();
    const [red, blue] = p.variants;
    const { db, counts } = wrapD1();
    const r = await put("/v1/products", { sku: red.sku, stock: 17 }, { env: { DB: db } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ success: 1, errors: [], notices: [] });
    // No size check: only a qty_location can grow the answer (products.bodies.test.ts).
    // The write: the guard, the product's and the variant's rows, the versions, the answer.
    expect(counts).toMatchObject({ calls: 2, statementsPerCall: [2, 7] });
    const out = r.json.products[0];
    expect(out.variants.map((v: any) => [v.sku, v.qty])).toEqual([
      [red.sku, 17],
      [blue.sku, 3],
    ]);
    expect(out.stock).toBe(20);
    expect(out.updated_at > p.updated_at).toBe(true);
    // The answer is the product as GET returns it.
    expect((await get(`/v1/products/${p.product_id}`)).json).toEqual(out);
  });

  it("answers the same change the same whether the variant is selected by SKU or by id", async () => {
    const a = await withVariants();
    const b = await withVariants();
    const general = wrapD1();
    const slow = await put(
      "/v1/products",
      { variant_id: b.variants[1].variant_id, stock: 4, price: "12.50" },
      { env: { DB: general.db } },
    );
    expect(general.counts.calls).toBe(2);
    const fast = wrapD1();
    const quick = await put(
      "/v1/products",
      { sku: a.variants[1].sku, stock: 4, price: "12.50" },
      { env: { DB: fast.db } },
    );
    expect(fast.counts.calls).toBe(2);
    const strip = (x: any) => ({
      ...stable(x),
      product_id: 0,
      sku: null,
      // Two products of one title: "test-product-2" and "-3".
      slug: null,
      variants: x.variants.map((v: any) => ({ ...v, variant_id: 0, sku: null })),
    });
    expect(quick.status).toBe(slow.status);
    expect(strip(quick.json.products[0])).toEqual(strip(slow.json.products[0]));
  });

  it("sets a product's stock and price by the product SKU, and a variant's price alone", async () => {
    const sku = uid();
    const p = await createProduct({ sku, stock: 1, price: 5 });
    const { db, counts } = wrapD1();
    const r = await put("/v1/products", { sku, stock: "8", price: 7.25 }, { env: { DB: db } });
    expect(r.status).toBe(200);
    expect(r.json.products[0]).toMatchObject({ product_id: p.product_id, sku, stock: 8, price: 7.25 });
    expect(counts.calls).toBe(2);

    const v = await withVariants();
    const price = await put("/v1/products", { sku: v.variants[0].sku, price: 99 });
    expect(price.json.products[0].price).toBe(v.price);
    expect(price.json.products[0].variants.map((x: any) => x.price)).toEqual([99, 10]);
  });

  it("the price of a product with variants by the product SKU changes the product only", async () => {
    const p = await withVariants({ price: 30 });
    const r = await put("/v1/products", { sku: p.sku, price: 31 });
    expect(r.status).toBe(200);
    expect(r.json.products[0].price).toBe(31);
    expect(r.json.products[0].variants.map((v: any) => v.price)).toEqual([10, 10]);
  });

  it("keeps unknown-field notices", async () => {
    const p = await withVariants();
    const r = await put("/v1/products", { sku: p.variants[0].sku, stock: 2, stok: 3 });
    expect(r.status).toBe(200);
    expect(r.json.notices).toEqual(["ignored unknown field stok"]);
  });
});

describe("PUT /v1/products by one SKU: refusals", () => {
  it("an unknown SKU is 404, nothing written", async () => {
    const sku = uid("NONE");
    const { db, counts } = wrapD1();
    const r = await put("/v1/products", { sku, stock: 1 }, { env: { DB: db } });
    expect(r.status).toBe(404);
    expect(r.json).toMatchObject({ success: 0, errors: [`sku: no product or variant has SKU ${sku}`], products: [] });
    // The read finds no owner of the SKU: nothing to write.
    expect(counts.calls).toBe(1);
  });

  it("negative stock while disable_minusqty is on is refused by the constraint, then worded as 400", async () => {
    const p = await withVariants({ disable_minusqty: 1 });
    const before = (await get(`/v1/products/${p.product_id}`)).json;
    const r = await put("/v1/products", { sku: p.variants[0].sku, stock: -1 });
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual(["stock: must not be negative while disable_minusqty is on"]);
    expect((await get(`/v1/products/${p.product_id}`)).json).toEqual(before);

    const sku = uid();
    const plain = await createProduct({ sku, stock: 2, disable_minusqty: 1 });
    const q = await put("/v1/products", { sku, stock: -3, price: 1 });
    expect(q.status).toBe(400);
    expect(q.json.errors).toEqual(["stock: must not be negative while disable_minusqty is on"]);
    expect((await get(`/v1/products/${plain.product_id}`)).json).toMatchObject({ stock: 2, price: plain.price });
  });

  it("negative stock is fine while disable_minusqty is off", async () => {
    const p = await withVariants();
    const r = await put("/v1/products", { sku: p.variants[1].sku, stock: -4 });
    expect(r.status).toBe(200);
    expect(r.json.products[0].variants[1].qty).toBe(-4);
  });

  it("stock by the SKU of a product with variants is 400, nothing written", async () => {
    const p = await withVariants();
    const before = (await get(`/v1/products/${p.product_id}`)).json;
    const r = await put("/v1/products", { sku: p.sku, stock: 5, price: 1 });
    expect(r.status).toBe(400);
    expect(r.json.errors[0]).toMatch(/^stock: the product has variants/);
    expect((await get(`/v1/products/${p.product_id}`)).json).toEqual(before);
  });

  it("an array of one such item is one read and one write too", async () => {
    const p = await withVariants();
    const { db, counts } = wrapD1();
    const r = await put("/v1/products", [{ sku: p.variants[0].sku, stock: 2, x: 1 }], { env: { DB: db } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ success: 1, notices: ["ignored unknown field [0].x"] });
    expect(counts.calls).toBe(2);
  });

  it("several items, other fields beside and an Idempotency-Key are one read and one write too", async () => {
    const p = await withVariants();
    const q = await withVariants();
    for (const [body, headers, calls] of [
      [{ sku: p.variants[0].sku, stock: 1, title: "T" }, {}, 2],
      [
        [
          { sku: p.variants[0].sku, stock: 2 },
          { sku: q.variants[0].sku, stock: 2 },
        ],
        {},
        2,
      ],
      [{ sku: p.variants[0].sku, stock: 3 }, { "idempotency-key": uid("K") }, 2],
    ] as const) {
      const { db, counts } = wrapD1();
      const r = await put("/v1/products", body, { env: { DB: db }, headers });
      expect(r.status).toBe(200);
      expect(counts.calls).toBe(calls);
    }
    expect((await get(`/v1/products/${p.product_id}`)).json).toMatchObject({ title: "T", variants: [{ qty: 3 }, {}] });
    expect((await get(`/v1/products/${q.product_id}`)).json).toMatchObject({ variants: [{ qty: 2 }, {}] });
  });
});
