import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createProduct, get, post, put, uid } from "./helpers";

// Stock reservation (docs/orders.md, "Orders"): never oversold with disable_minusqty on, enforced by the
// database so that it holds under concurrent requests.

const stockOf = async (productId: number) => (await get(`/v1/products/${productId}`)).json;
const orderCount = async () =>
  (await env.DB.prepare("SELECT count(*) AS n FROM orders").first<{ n: number }>())?.n ?? 0;

describe("stock", () => {
  it("decrements variant qty and product stock", async () => {
    const sku = uid();
    const vsku = uid();
    const p = await createProduct({ sku, stock: 10 });
    const v = await createProduct({
      variants: { add: [{ variant_option1_name: "Size", variant_option1_value: "M", sku: vsku, qty: 4 }] },
    });
    const r = await post("/v1/orders", [
      {
        order_id: "create",
        products: [
          { sku, qty: 3 },
          { sku: vsku, qty: 1 },
        ],
      },
    ]);
    expect(r.status).toBe(200);
    expect((await stockOf(p.product_id)).stock).toBe(7);
    expect((await stockOf(v.product_id)).variants[0].qty).toBe(3);
  });

  it("lets stock go negative when disable_minusqty is off", async () => {
    const sku = uid();
    const p = await createProduct({ sku, stock: 1, disable_minusqty: 0 });
    const r = await post("/v1/orders", [{ order_id: "create", products: [{ sku, qty: 3 }] }]);
    expect(r.json.results.create_1.success).toBe(true);
    expect((await stockOf(p.product_id)).stock).toBe(-2);
  });

  it("fails an order that would oversell with disable_minusqty on, writing nothing", async () => {
    const sku = uid();
    const vsku = uid();
    const p = await createProduct({ sku, stock: 2, disable_minusqty: "1" });
    const v = await createProduct({
      disable_minusqty: 1,
      variants: { add: [{ variant_option1_name: "Size", variant_option1_value: "S", sku: vsku, qty: 5 }] },
    });
    const before = await orderCount();
    const r = await post("/v1/orders", [
      {
        order_id: "create",
        customer: { email: `${uid("x")}@example.com` },
        products: [
          { sku: vsku, qty: 1 },
          { sku, qty: 3 },
        ],
      },
    ]);
    expect(r.status).toBe(400);
    expect(r.json.results.create_1).toEqual({
      success: false,
      errors: [`products[1].qty: insufficient stock for ${sku}: 2 left`],
      notices: [],
    });
    expect(await orderCount()).toBe(before);
    expect((await stockOf(p.product_id)).stock).toBe(2);
    expect((await stockOf(v.product_id)).variants[0].qty).toBe(5);
  });

  it("counts lines of one item together, and earlier orders of the same request first", async () => {
    const sku = uid();
    const p = await createProduct({ sku, stock: 5, disable_minusqty: 1 });
    const r = await post("/v1/orders", [
      {
        order_id: "create",
        products: [
          { sku, qty: 2 },
          { sku, qty: 2, price: 1 },
        ],
      },
      { order_id: "create", products: [{ sku, qty: 2 }] },
      { order_id: "create", products: [{ sku, qty: 1 }] },
    ]);
    expect(r.json.results.create_1.success).toBe(true);
    expect(r.json.results.create_2.errors).toEqual([`products[0].qty: insufficient stock for ${sku}: 1 left`]);
    expect(r.json.results.create_3.success).toBe(true);
    expect((await stockOf(p.product_id)).stock).toBe(0);
  });

  it("mixed array: one good, one invalid, one over stock gives one order and two clear errors", async () => {
    const sku = uid();
    const tight = uid();
    const p = await createProduct({ sku, stock: 10, disable_minusqty: 1 });
    const t = await createProduct({ sku: tight, stock: 1, disable_minusqty: 1 });
    const before = (await get("/v1/orders?limit=100")).json.length;
    const r = await post("/v1/orders", [
      { order_id: "create", products: [{ sku, qty: 2 }] },
      { order_id: "create", products: [{ sku, qty: 0 }] },
      {
        order_id: "create",
        products: [
          { sku, qty: 1 },
          { sku: tight, qty: 2 },
        ],
      },
    ]);
    expect(r.status).toBe(200);
    const { create_1, create_2, create_3 } = r.json.results;
    expect(create_1.success).toBe(true);
    expect(create_2).toEqual({
      success: false,
      errors: ["products[0].qty: must be a whole number of at least 1"],
      notices: [],
    });
    expect(create_3).toEqual({
      success: false,
      errors: [`products[1].qty: insufficient stock for ${tight}: 1 left`],
      notices: [],
    });
    expect((await stockOf(p.product_id)).stock).toBe(8);
    expect((await stockOf(t.product_id)).stock).toBe(1);
    const list = (await get("/v1/orders?limit=100")).json;
    expect(list.length).toBe(before + 1);
    expect(list[0].order_id).toBe(String(create_1.order_id));
  });

  it("never oversells under 40 concurrent orders against stock 7", async () => {
    const sku = uid();
    const p = await createProduct({ sku, stock: 7, disable_minusqty: 1 });
    const rs = await Promise.all(
      Array.from({ length: 40 }, () => post("/v1/orders", [{ order_id: "create", products: [{ sku, qty: 1 }] }])),
    );
    const ok = rs.filter((r) => r.status === 200);
    expect(ok.length).toBe(7);
    for (const r of rs.filter((r) => r.status !== 200)) {
      expect(r.status).toBe(400);
      expect(r.json.results.create_1.errors[0]).toBe(`products[0].qty: insufficient stock for ${sku}: 0 left`);
    }
    expect((await stockOf(p.product_id)).stock).toBe(0);
    const n = await env.DB.prepare("SELECT count(*) AS n FROM order_lines WHERE sku = ?")
      .bind(sku)
      .first<{ n: number }>();
    expect(n?.n).toBe(7);
  });
});

/**
 * A D1 binding that lets another writer take stock right before this request's first write batch,
 * as a concurrent request would between our read and our write.
 */
function racingD1(steal: () => Promise<unknown>) {
  let batches = 0;
  return new Proxy(env.DB, {
    get(target, prop, self) {
      // The app opens a D1 session per request (src/platform/d1.ts): keep it on this proxy.
      if (prop === "withSession") return () => self;
      if (prop === "batch") {
        return async (stmts: D1PreparedStatement[]) => {
          if (++batches === 2) await steal();
          return target.batch(stmts);
        };
      }
      const v = (target as any)[prop];
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

// Every order is read, planned and then written; the binding above lands the other writer in
// that window. Half the races are keyed, whose answer is recorded in the same write batch.
const keyed = () => ({ "idempotency-key": uid("race") });

describe("stock races", () => {
  it("plans again after losing a race, so the other orders of the request still go through", async () => {
    const contested = uid();
    const other = uid();
    const c = await createProduct({ sku: contested, stock: 3, disable_minusqty: 1 });
    const o = await createProduct({ sku: other, stock: 3, disable_minusqty: 1 });
    const db = racingD1(() =>
      env.DB.prepare("UPDATE products SET stock = stock - 2 WHERE id = ?").bind(c.product_id).run(),
    );
    const r = await post(
      "/v1/orders",
      [
        { order_id: "create", products: [{ sku: contested, qty: 2 }] },
        { order_id: "create", products: [{ sku: other, qty: 1 }] },
      ],
      { env: { DB: db }, headers: keyed() },
    );
    expect(r.status).toBe(200);
    expect(r.json.results.create_1.errors).toEqual([`products[0].qty: insufficient stock for ${contested}: 1 left`]);
    expect(r.json.results.create_2.success).toBe(true);
    expect((await stockOf(c.product_id)).stock).toBe(1);
    expect((await stockOf(o.product_id)).stock).toBe(2);
  });

  it("still creates an order whose stock survives the race", async () => {
    const sku = uid();
    const p = await createProduct({ sku, stock: 3, disable_minusqty: 1 });
    const db = racingD1(() =>
      env.DB.prepare("UPDATE products SET stock = stock - 1 WHERE id = ?").bind(p.product_id).run(),
    );
    const r = await post("/v1/orders", [{ order_id: "create", products: [{ sku, qty: 2 }] }], { env: { DB: db } });
    expect(r.json.results.create_1.success).toBe(true);
    expect((await stockOf(p.product_id)).stock).toBe(0);
  });
});

describe("catalog races", () => {
  it("sells a SKU that moved to another product as that product's", async () => {
    const a = await createProduct({
      variants: { add: [{ variant_option1_name: "Colour", variant_option1_value: "Red", sku: uid("MV"), qty: 5 }] },
    });
    const sku = a.variants[0].sku;
    expect((await post("/v1/orders", [{ order_id: "create", products: [{ sku, qty: 1 }] }])).status).toBe(200);
    const renamed = await put("/v1/products", {
      product_id: a.product_id,
      variants: { sync: [{ variant_option1_name: "Colour", variant_option1_value: "Red", sku: uid("R"), qty: 5 }] },
    });
    expect(renamed.status).toBe(200);
    const b = await createProduct({ sku, price: 7, stock: 5 });
    const r = await post("/v1/orders", [{ order_id: "create", products: [{ sku, qty: 1 }] }]);
    expect(r.json.results.create_1).toMatchObject({ success: true, subtotal: 7 });
    const lines = (await get(`/v1/orders/${r.json.results.create_1.order_id}`)).json.products;
    expect(lines).toMatchObject([{ product_id: b.product_id, variant_id: null, sku }]);
  });

  it("plans again when the product changed between the read and the write", async () => {
    const sku = uid();
    const p = await createProduct({ sku, price: 100, stock: 5 });
    // A PUT lands between our read and our write: the order must use the new price, not the one read.
    const db = racingD1(() => put("/v1/products", { product_id: p.product_id, price: 80 }));
    const r = await post("/v1/orders", [{ order_id: "create", products: [{ sku, qty: 1 }] }], {
      env: { DB: db },
      headers: keyed(),
    });
    expect(r.json.results.create_1).toMatchObject({ success: true, subtotal: 80 });
    const order = await get(`/v1/orders/${r.json.results.create_1.order_id}`);
    expect(order.json.products[0].price).toBe(80);
  });

  it("does not sell a variant deleted between the read and the write", async () => {
    const p = await createProduct({
      variants: { add: [{ variant_option1_name: "Size", variant_option1_value: "S", sku: uid(), qty: 5 }] },
    });
    const variantId = p.variants[0].variant_id;
    const db = racingD1(() => put("/v1/products", { product_id: p.product_id, variants: { sync: [] } }));
    const r = await post("/v1/orders", [{ order_id: "create", products: [{ variant_id: variantId, qty: 1 }] }], {
      env: { DB: db },
    });
    expect(r.status).toBe(400);
    expect(r.json.results.create_1.errors).toEqual([`products[0].variant_id: no variant ${variantId}`]);
  });
});
