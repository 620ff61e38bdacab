import { describe, expect, it } from "vitest";
import { wrapD1 } from "./d1-wrap";
import { createProduct, get, post, put, uid } from "./helpers";

// POST /v1/orders plans from the catalog rows earlier reads saw, when they resolve every line, and
// writes in one round trip, guarded by the products' updated_at. Reads happen on the read path
// (read, plan, write), which an Idempotency-Key request takes when the rows are not cached yet
// (its answer is recorded in the write batch); these tests warm the cache that way. An unkeyed
// order the cache cannot plan is planned in SQL (test/orders.cold.test.ts).

/** A keyed order of `products` on `db`: the read path, whose read the isolate keeps. */
const warm = (db: D1Database, products: unknown[]) =>
  post("/v1/orders", order(products), { env: { DB: db }, headers: { "idempotency-key": uid("warm") } });

const colour = (value: string, extra: Record<string, unknown> = {}) => ({
  variant_option1_name: "Colour",
  variant_option1_value: value,
  sku: uid("C"),
  qty: 10,
  ...extra,
});

const order = (products: unknown[], extra: Record<string, unknown> = {}) => [
  { order_id: "create", products, shipping: { price: 49 }, ...extra },
];

describe("POST /v1/orders from cached catalog rows", () => {
  it("an order of cached rows is one round trip, and answers as one planned in SQL does", async () => {
    const p = await createProduct({ sku: uid("P"), price: 100, variants: { add: [colour("Red", { price: 25 })] } });
    const plain = await createProduct({ sku: uid("Q"), price: 12.5, stock: 10, tax_rate: 12 });
    const { db, counts, reset } = wrapD1();
    const body = order([
      { sku: p.variants[0].sku, qty: 2 },
      { product_id: plain.product_id, qty: 1 },
    ]);
    const first = await post("/v1/orders", body, { env: { DB: db } });
    expect(first.status).toBe(200);
    // A fresh binding is a cold isolate: planned in SQL and written in one batch (with the sold
    // products' and the catalogue's versions).
    expect(counts).toMatchObject({ calls: 1, statementsPerCall: [7] });
    expect((await warm(db, body[0].products)).status).toBe(200);
    reset();
    const second = await post("/v1/orders", body, { env: { DB: db } });
    expect(second.status).toBe(200);
    // 8: the stale-read guard, the order (RETURNING its id), its lines, the stock of variants and
    // of products, the sold products' and the catalogue's versions, the order.created outbox row;
    // no customer upsert (no e-mail).
    expect(counts).toMatchObject({ calls: 1, statementsPerCall: [8] });
    const { order_id: a, ...one } = first.json.results.create_1;
    const { order_id: b, ...two } = second.json.results.create_1;
    expect(b).toBe(a + 2);
    expect(two).toEqual(one);
    expect((await get(`/v1/orders/${b}`)).json.products).toEqual((await get(`/v1/orders/${a}`)).json.products);
    const after = (await get(`/v1/products/${p.product_id}`)).json;
    expect(after.variants[0].qty).toBe(4);
    expect((await get(`/v1/products/${plain.product_id}`)).json.stock).toBe(7);
  });

  it("a product changed since it was cached is read again: the order gets the new price", async () => {
    const p = await createProduct({ sku: uid("P"), price: 100, variants: { add: [colour("Red", { price: 25 })] } });
    const sku = p.variants[0].sku;
    const { db, counts, reset } = wrapD1();
    await warm(db, [{ sku, qty: 1 }]);
    // The one-SKU fast path of PUT moves the product's updated_at too.
    expect((await put("/v1/products", { sku, price: 30 })).status).toBe(200);
    reset();
    const r = await post("/v1/orders", order([{ sku, qty: 1 }]), { env: { DB: db } });
    expect(r.json.results.create_1).toMatchObject({ success: true, subtotal: 30 });
    // The guarded batch was refused and rolled back, and the cache dropped; then the SQL-planned
    // batch of a cold isolate.
    expect(counts.calls).toBe(2);
    const again = await post("/v1/orders", order([{ sku, qty: 1 }]), { env: { DB: db } });
    expect(again.json.results.create_1).toMatchObject({ success: true, subtotal: 30 });
  });

  it("a SKU that moved to another product is resolved afresh", async () => {
    const a = await createProduct({ sku: uid("A"), price: 100, variants: { add: [colour("Red", { price: 25 })] } });
    const sku = a.variants[0].sku;
    const { db } = wrapD1();
    expect((await warm(db, [{ sku, qty: 1 }])).status).toBe(200);
    const renamed = await put("/v1/products", {
      product_id: a.product_id,
      variants: { sync: [colour("Red", { sku: uid("R"), price: 25 })] },
    });
    expect(renamed.status).toBe(200);
    const b = await createProduct({ sku, price: 7, stock: 5 });
    const r = await post("/v1/orders", order([{ sku, qty: 1 }]), { env: { DB: db } });
    expect(r.json.results.create_1).toMatchObject({ success: true, subtotal: 7 });
    const lines = (await get(`/v1/orders/${r.json.results.create_1.order_id}`)).json.products;
    expect(lines).toMatchObject([{ product_id: b.product_id, variant_id: null, sku }]);
  });

  it("stock the cache thinks is there but is not: refused by the floor, then the read path words it", async () => {
    const p = await createProduct({
      sku: uid("P"),
      disable_minusqty: 1,
      variants: { add: [colour("Red", { qty: 3 })] },
    });
    const sku = p.variants[0].sku;
    const { db } = wrapD1();
    expect((await warm(db, [{ sku, qty: 2 }])).status).toBe(200);
    // Taken by an order through another isolate: orders do not move updated_at.
    expect((await post("/v1/orders", order([{ sku, qty: 1 }]))).status).toBe(200);
    const r = await post("/v1/orders", order([{ sku, qty: 1 }]), { env: { DB: db } });
    expect(r.status).toBe(400);
    expect(r.json.results.create_1.errors).toEqual([`products[0].qty: insufficient stock for ${sku}: 0 left`]);
    expect((await get(`/v1/products/${p.product_id}`)).json.variants[0].qty).toBe(0);
  });

  it("an order the cached rows cannot resolve is planned in SQL; an unknown SKU then takes the read path", async () => {
    const p = await createProduct({ sku: uid("P"), price: 100, variants: { add: [colour("Red")] } });
    const other = await createProduct({ sku: uid("O"), price: 3, stock: 9 });
    const { db, counts, reset } = wrapD1();
    await warm(db, [{ sku: p.variants[0].sku, qty: 1 }]);
    reset();
    const r = await post(
      "/v1/orders",
      order([
        { sku: p.variants[0].sku, qty: 1 },
        { sku: other.sku, qty: 1 },
      ]),
      { env: { DB: db } },
    );
    expect(r.status).toBe(200);
    expect(counts.calls).toBe(1);
    reset();
    const missing = uid("NONE");
    const bad = await post("/v1/orders", order([{ sku: missing, qty: 1 }]), { env: { DB: db } });
    expect(bad.json.results.create_1.errors).toEqual([`products[0].sku: no product or variant has SKU ${missing}`]);
    // The SQL-planned batch refused (nothing written), then the read that words the error.
    expect(counts.calls).toBe(2);
  });

  it("an Idempotency-Key is recorded in the one batch, and replays", async () => {
    const p = await createProduct({ sku: uid("P"), price: 100, variants: { add: [colour("Red", { price: 25 })] } });
    const body = order([{ sku: p.variants[0].sku, qty: 1 }]);
    const { db, counts, reset } = wrapD1();
    await warm(db, body[0].products);
    reset();
    const headers = { "idempotency-key": uid("K") };
    const r = await post("/v1/orders", body, { env: { DB: db }, headers });
    expect(r.status).toBe(200);
    expect(counts.calls).toBe(1);
    const replay = await post("/v1/orders", body, { env: { DB: db }, headers });
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.json).toEqual(r.json);
  });
});
