import { describe, expect, it } from "vitest";
import { createProduct, get, KEY, post, put, uid } from "./helpers";

// An order's history (docs/orders.md, "History"): every status change, shipping change and
// line edit, with the restock and reason of a cancel and the key (or its admin session) that made
// it; cancel_reason on PUT /v1/orders. Not shown to a publishable key.

async function order(qty = 1) {
  const sku = uid();
  const p = await createProduct({ sku, stock: 100, price: 10 });
  const r = await post("/v1/orders", [{ order_id: "create", products: [{ sku, qty }] }]);
  expect(r.status, r.text).toBe(200);
  return { id: r.json.results.create_1.order_id as number, productId: p.product_id as number, sku };
}

const API_KEY = { id: null, name: "API_KEY" };

describe("GET /v1/orders/{id} history", () => {
  it("records paid, shipping, shipped and a cancel with its reason and restock, by the key", async () => {
    const { id } = await order();
    expect((await get(`/v1/orders/${id}`)).json.history).toEqual([]);
    await put("/v1/orders", [{ order_id: id, status: "paid" }]);
    await put("/v1/orders", [{ order_id: id, shipping_info: { trackingnumber: "T1" } }]);
    await put("/v1/orders", [{ order_id: id, status: "done" }]);
    // The same status again is a no-op: no row.
    await put("/v1/orders", [{ order_id: id, status: "done" }]);
    const cancel = await put("/v1/orders", [
      { order_id: id, status: "cancelled", restock: false, cancel_reason: "parcel lost" },
    ]);
    expect(cancel.status, cancel.text).toBe(200);
    const o = (await get(`/v1/orders/${id}`)).json;
    expect(o.cancel_reason).toBe("parcel lost");
    expect(o.history.map((h: any) => [h.change, h.restock, h.reason, h.key, h.via])).toEqual([
      ["paid", null, null, API_KEY, "key"],
      ["shipping", null, null, API_KEY, "key"],
      ["done", null, null, API_KEY, "key"],
      ["cancelled", false, "parcel lost", API_KEY, "key"],
    ]);
    expect(o.history.every((h: any) => !Number.isNaN(Date.parse(h.at)))).toBe(true);
  });

  it("names a stored key, and says when the change came through the admin's session", async () => {
    const { id } = await order(2);
    const k = await post("/v1/keys", { name: `packer ${uid("k")}`, type: "secret", scopes: ["orders:write"] });
    const byKey = await put("/v1/orders", [{ order_id: id, products: [{ sku: (await order()).sku, qty: 1 }] }], {
      headers: { authorization: `Bearer ${k.json.key}` },
    });
    expect(byKey.status, byKey.text).toBe(200);
    const s = await post("/v1/sessions", { key: KEY }, { headers: { authorization: "" } });
    const cookie = (s.headers.get("set-cookie") ?? "").split(";")[0];
    const bySession = await put("/v1/orders", [{ order_id: id, status: "cancelled" }], {
      headers: { authorization: "", cookie, "x-csrf-token": s.json.csrf_token },
    });
    expect(bySession.status, bySession.text).toBe(200);
    const { history } = (await get(`/v1/orders/${id}`)).json;
    expect(history.map((h: any) => [h.change, h.restock, h.key, h.via])).toEqual([
      ["lines", null, { id: k.json.id, name: k.json.name }, "key"],
      ["cancelled", true, API_KEY, "session"],
    ]);
  });

  it("is not shown to a publishable key reading its order", async () => {
    const sku = uid();
    await createProduct({ sku, stock: 5, price: 10 });
    const pk = await post("/v1/keys", { name: "shop", type: "publishable", allowed_origins: ["https://s.example"] });
    const headers = { authorization: "", "x-publishable-key": pk.json.key, origin: "https://s.example" };
    const made = await post("/v1/orders", [{ order_id: "create", products: [{ sku, qty: 1 }] }], { headers });
    const { order_id, token } = made.json.results.create_1;
    await put("/v1/orders", [{ order_id, status: "paid" }]);
    const r = await get(`/v1/orders/${order_id}?token=${token}`, { headers });
    expect(r.status).toBe(200);
    expect(r.json.history).toBeUndefined();
    expect((await get(`/v1/orders/${order_id}`)).json.history).toHaveLength(1);
  });
});

describe("cancel_reason", () => {
  it("is kept only by the cancel itself, at most 255 characters", async () => {
    const { id } = await order();
    const paid = await put("/v1/orders", [{ order_id: id, status: "paid", cancel_reason: "not a cancel" }]);
    expect(paid.status).toBe(200);
    expect((await get(`/v1/orders/${id}`)).json.cancel_reason).toBeNull();
    const long = await put("/v1/orders", [{ order_id: id, status: "cancelled", cancel_reason: "x".repeat(256) }]);
    expect(long.status).toBe(400);
    expect(long.json.results.update_1.errors).toEqual(["cancel_reason: must be at most 255 characters"]);
  });
});
