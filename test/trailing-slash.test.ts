import { describe, expect, it } from "vitest";
import { createProduct, get, post, uid } from "./helpers";

// Trailing slashes (docs/api.md, "Conventions"): real clients build URLs as base + "/" + path, and
// the modelled API answers them; every route answers with or without one.
describe("trailing slashes", () => {
  it.each([
    ["/v1/products/", 200],
    ["/v1/products/count/", 200],
    ["/v1/orders/", 200],
    ["/v1/webhooks/", 200],
    ["/health/", 200],
    ["/v1/nothing-here/", 404],
  ])("GET %s answers %i", async (path, status) => {
    const r = await get(path);
    expect(r.status, r.text).toBe(status);
    expect(r.headers.get("content-type")).toMatch(/^application\/json/);
  });

  it("reads by id and by query with a trailing slash, as without", async () => {
    const sku = uid("SLASH");
    const p = await createProduct({ sku, stock: 3 });
    const o = await post("/v1/orders/", [{ order_id: "create", products: [{ sku, qty: 1 }] }]);
    expect(o.status, o.text).toBe(200);
    const id = o.json.results.create_1.order_id;
    expect((await get(`/v1/orders/?order_id=${id}`)).json).toEqual((await get(`/v1/orders?order_id=${id}`)).json);
    expect((await get(`/v1/orders/${id}/`)).json.order_id).toBe(id);
    expect((await get(`/v1/products/${p.product_id}/`)).json.product_id).toBe(p.product_id);
    expect((await get(`/v1/products/?sku=${sku}`)).json.id).toBe(String(p.product_id));
  });
});
