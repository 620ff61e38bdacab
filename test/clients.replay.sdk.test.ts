import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { catalog, type Json, read, SDK_LINE, SDK_ORDER, SDK_PRODUCT, SDK_VARIANT } from "./fixtures/clients-replay";
import { createProduct, get, post, put, uid } from "./helpers";

// The requests of the modelled API's C# SDK (QuickbutikSharp), replayed against this service, with
// each answer read the way the SDK reads it: the fields it takes and the JSON types its parser
// accepts (test/fixtures/clients-replay.ts; docs/modelled-reads.md, "Modelled reads"). Where the
// modelled API's documentation and its clients disagree, the clients win: lists and lookups answer
// bare, as the SDK reads them.

async function order(variantSku: string, email: string) {
  const r = await post("/v1/orders", [
    {
      order_id: "create",
      customer: { email, billing_details: { firstname: "Sam", lastname: "Sdk", city: "Malmö", country: "SE" } },
      payment: { method: "card", transaction_id: uid("tx") },
      shipping: { id: 1, name: "Postal", price: 49 },
      products: [{ sku: variantSku, qty: 2 }],
    },
  ]);
  expect(r.status).toBe(200);
  return r.json.results.create_1.order_id as number;
}

describe("the C# SDK (QuickbutikSharp)", () => {
  it("reads one product: product_id=N&include_details=true&limit=1", async () => {
    const { id, variantSku } = await catalog();
    const r = await get(`/v1/products?product_id=${id}&include_details=true&limit=1`);
    expect(r.status).toBe(200);
    const product = r.json;
    read(product, SDK_PRODUCT, "product");
    expect(product.id).toBe(String(id));
    expect(product.images["1"]).toEqual({ image: "https://example.com/1.jpg", alttext: "one" });
    read(product.variants[0], SDK_VARIANT, "product.variants[0]");
    expect(product.variants[0].sku).toBe(variantSku);
    expect(product.variants[0].values[0]).toMatchObject({ val: "L" });
    // Not found: the SDK reads `code` of the error body to tell a 404.
    const missing = await get("/v1/products?product_id=99999999&include_details=true&limit=1");
    expect(missing.status).toBe(404);
    expect(missing.json.code).toBe(404);
  });

  it("updates inventory: PUT /v1/products {sku, stock}, then reads the stock back", async () => {
    const sku = uid("INV");
    const p = await createProduct({ sku, stock: 3 });
    const r = await put("/v1/products", { sku, stock: 17 });
    expect(r.status).toBe(200);
    expect(r.json.success).toBe(1);
    const back = (await get(`/v1/products?product_id=${p.product_id}&include_details=true&limit=1`)).json;
    expect(back.stock).toBe(17);
    expect(back.qty).toBe("17");
  });

  it("updates inventory as the SDK serialises it: an object keyed by its class name", async () => {
    const sku = uid("INV");
    const p = await createProduct({ sku, stock: 3 });
    // The SDK's PUT body is a dictionary keyed by its request class, not a plain array.
    const r = await put("/v1/products", { ProductUpdate: { sku, stock: 9 } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ success: 1, errors: [] });
    const back = (await get(`/v1/products?product_id=${p.product_id}&include_details=true&limit=1`)).json;
    expect(back.qty).toBe("9");
  });

  it("counts products: the count as a string it reads into an int", async () => {
    await catalog();
    const r = await get("/v1/products/count");
    expect(r.status).toBe(200);
    expect(r.json.count).toMatch(/^\d+$/);
    expect(Number.parseInt(r.json.count, 10)).toBeGreaterThan(0);
  });

  it("reads one order: order_id=N, element [0] with products, customer and total_pay_amount", async () => {
    const { variantSku } = await catalog();
    const orderId = await order(variantSku, "sam@example.com");
    const r = await get(`/v1/orders?order_id=${orderId}`);
    expect(r.status).toBe(200);
    const [o] = r.json;
    read(o, SDK_ORDER, "[0]");
    read(o.products[0], SDK_LINE, "[0].products[0]");
    read(o.customer, { email: "string", full_name: "string", city: "string", shipping_details: "object" }, "customer");
    expect(o).toMatchObject({ order_id: String(orderId), total_pay_amount: "1847.00", status: "-1" });
    expect(o.customer).toMatchObject({ email: "sam@example.com", full_name: "Sam Sdk", city: "Malmö" });
  });

  it("lists paid orders since a time: status=paid&from_date_paid=<UNIX seconds>", async () => {
    const { variantSku } = await catalog();
    const before = await order(variantSku, "early@example.com");
    const after = await order(variantSku, "late@example.com");
    const since = 1_750_000_000;
    for (const [id, at] of [
      [before, since - 60],
      [after, since + 60],
    ]) {
      await env.DB.prepare("UPDATE orders SET status = 'paid', date_paid = ?1, status_date = ?1 WHERE id = ?2")
        .bind(at * 1000, id)
        .run();
    }
    const r = await get(`/v1/orders?status=paid&from_date_paid=${since}&include_details=true`);
    expect(r.status).toBe(200);
    expect(r.json.map((o: Json) => o.order_id)).toEqual([String(after)]);
    read(r.json[0], SDK_ORDER, "[0]");
    expect(r.json[0]).toMatchObject({ status: "1", date_paid: "2025-06-15 15:07:40" });
    // Nothing matched: 200 and an empty list (the SDK turned the old 404 into the same).
    const none = await get(`/v1/orders?status=done&from_date_paid=${since}`);
    expect(none.status).toBe(200);
    expect(none.json).toEqual([]);
  });

  it("changes an order's status as the SDK sends it: order_id as a number, flags as booleans", async () => {
    const { variantSku } = await catalog();
    const orderId = await order(variantSku, "kim@example.com");
    const r = await put("/v1/orders", {
      OrderUpdate: { order_id: orderId, status: "paid", email_confirmation: false },
    });
    expect(r.status).toBe(200);
    expect(r.json.results.update_1).toMatchObject({ success: true, status: "paid" });
    const [o] = (await get(`/v1/orders?order_id=${orderId}`)).json;
    expect(o.status).toBe("1");
    expect(o.date_paid).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
  });
});
