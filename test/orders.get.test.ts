import { describe, expect, it } from "vitest";
import { createProduct, get, post, uid } from "./helpers";

// GET /v1/orders/{id} and GET /v1/orders (contract 5). Storage is per file, so the first test
// sees no orders at all.

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
  it("answers an empty list with 200", async () => {
    const r = await get("/v1/orders");
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ orders: [], next_cursor: null });
  });

  it("starts order numbers at 1001", async () => {
    const [first] = await makeOrders(1);
    expect(first).toBe(1001);
  });

  it("lists newest first and pages with the cursor", async () => {
    const ids = await makeOrders(5);
    const p1 = await get("/v1/orders?limit=2");
    expect(p1.status).toBe(200);
    expect(p1.json.orders.map((o: any) => o.order_id)).toEqual([ids[4], ids[3]]);
    expect(p1.json.orders[0].products).toHaveLength(1);
    expect(p1.json.next_cursor).toEqual(expect.any(String));
    const p2 = await get(`/v1/orders?limit=2&cursor=${p1.json.next_cursor}`);
    expect(p2.json.orders.map((o: any) => o.order_id)).toEqual([ids[2], ids[1]]);
    const all = await get("/v1/orders?limit=100");
    expect(all.json.next_cursor).toBeNull();
    expect(all.json.orders.length).toBe(6);
  });

  it("filters by status", async () => {
    await makeOrders(1);
    const unpaid = await get("/v1/orders?status=unpaid");
    expect(unpaid.json.orders.length).toBeGreaterThan(0);
    expect(unpaid.json.orders.every((o: any) => o.status === "unpaid")).toBe(true);
    const paid = await get("/v1/orders?status=paid");
    expect(paid.status).toBe(200);
    expect(paid.json).toEqual({ orders: [], next_cursor: null });
  });

  it.each([
    ["limit=0", "limit:"],
    ["limit=101", "limit:"],
    ["limit=abc", "limit:"],
    ["cursor=nonsense!", "cursor:"],
  ])("refuses %s with 400", async (query, error) => {
    const r = await get(`/v1/orders?${query}`);
    expect(r.status).toBe(400);
    expect(r.json.code).toBe(400);
    expect(r.json.errors[0]).toContain(error);
  });

  it("needs credentials", async () => {
    expect((await get("/v1/orders", { headers: { authorization: "" } })).status).toBe(401);
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
