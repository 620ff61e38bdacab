import { describe, expect, it } from "vitest";
import { createProduct, get, post, uid } from "./helpers";

// GET /v1/orders/{id} (docs/orders.md, "Orders"); the list is test/orders.list.test.ts. Storage is per
// file, so the first order is the store's first.

async function makeOrders(n: number) {
  const sku = uid();
  await createProduct({ sku, stock: 1000 });
  const r = await post(
    "/v1/orders",
    Array.from({ length: n }, (_, i) => ({ order_id: "create", products: [{ sku, qty: i + 1 }] })),
  );
  return Object.values(r.json.results).map((x: any) => x.order_id as number);
}

describe("GET /v1/orders", () => {
  it("starts order numbers at 1001", async () => {
    const [first] = await makeOrders(1);
    expect(first).toBe(1001);
  });

  it("needs credentials", async () => {
    expect((await get("/v1/orders/1001", { headers: { authorization: "" } })).status).toBe(401);
  });
});

describe("GET /v1/orders/{id}", () => {
  it("reads an order with its lines, totals and status", async () => {
    const sku = uid();
    await createProduct({ sku, title: "Lamp", price: "99.90", stock: 10, tax_rate: 25 });
    const r = await post("/v1/orders", [
      {
        order_id: "create",
        customer: { email: `${uid("g")}@example.com`, note: "Gift" },
        payment: { method: "card" },
        shipping: { id: 2, name: "Pickup", price: 0 },
        products: [{ sku, qty: 2 }],
        metadata: { ref: "A1" },
      },
    ]);
    const id = r.json.results.create_1.order_id;
    const g = await get(`/v1/orders/${id}`);
    expect(g.status).toBe(200);
    expect(g.json).toMatchObject({
      order_id: id,
      status: "unpaid",
      currency: "SEK",
      payment: { method: "card", currency: "SEK", transaction_id: null, log: null },
      shipping: { id: 2, name: "Pickup", price: 0 },
      products: [{ sku, title: "Lamp", qty: 2, price: 99.9, total: 199.8, tax_rate: 25 }],
      subtotal: 199.8,
      discount: 0,
      total: 199.8,
      tax: [{ rate: 25, amount: 39.96 }],
      metadata: { ref: "A1" },
      created_at: expect.any(String),
    });
    expect(g.json.customer.note).toBe("Gift");
  });

  it("answers 404 for an order that does not exist and 400 for a bad id", async () => {
    const r = await get("/v1/orders/999999");
    expect(r.status).toBe(404);
    expect(r.json).toEqual({ code: 404, error: "order 999999 not found" });
    expect((await get("/v1/orders/abc")).status).toBe(400);
  });
});
