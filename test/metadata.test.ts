import { describe, expect, it } from "vitest";
import { asStrings } from "../src/metadata/route";
import { basic, createProduct, get, post, uid } from "./helpers";

// GET /v1/metadata/{product|order}/{id} (docs/modelled-reads.md, "Metadata"): the stored metadata as
// the public C# SDK reads it, a flat object of strings.

describe("GET /v1/metadata/product/{id} and /v1/metadata/order/{id}", () => {
  it("answers a product's and an order's metadata as a flat object of strings", async () => {
    const sku = uid("META");
    const p = await createProduct({
      sku,
      stock: 5,
      metadata: { channel: "web", gift: true, n: 12, nested: { a: [1, "b"] }, none: null },
    });
    const want = { channel: "web", gift: "true", n: "12", nested: '{"a":[1,"b"]}', none: "null" };
    const r = await get(`/v1/metadata/product/${p.product_id}`);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual(want);
    const o = await post("/v1/orders", [
      { order_id: "create", products: [{ sku, qty: 1 }], metadata: { source: "pos", till: 3 } },
    ]);
    const orderId = o.json.results.create_1.order_id;
    expect((await get(`/v1/metadata/order/${orderId}`)).json).toEqual({ source: "pos", till: "3" });
    // With a trailing slash, as the SDK's base URL may end in one.
    expect((await get(`/v1/metadata/order/${orderId}/`)).json).toEqual({ source: "pos", till: "3" });
  });

  it("answers {} for a product without metadata", async () => {
    const p = await createProduct({ sku: uid("META") });
    expect((await get(`/v1/metadata/product/${p.product_id}`)).json).toEqual({});
  });

  it.each([
    ["/v1/metadata/product/999999", 404, "product 999999 not found"],
    ["/v1/metadata/order/999999", 404, "order 999999 not found"],
    ["/v1/metadata/product/abc", 400, "invalid path parameters"],
    ["/v1/metadata/customer/1", 404, "no route GET /v1/metadata/customer/1"],
  ])("GET %s answers %i", async (path, status, error) => {
    const r = await get(path);
    expect(r.status).toBe(status);
    expect(r.json.error).toContain(error.split(" ")[0]);
  });

  it("needs credentials", async () => {
    const r = await get("/v1/metadata/product/1", { headers: { authorization: basic("wrong") } });
    expect(r.status).toBe(401);
  });

  it("asStrings keeps strings and writes other values as JSON text", () => {
    expect(asStrings(null)).toEqual({});
    expect(asStrings('{"a":"x","b":1.5,"c":false}')).toEqual({ a: "x", b: "1.5", c: "false" });
  });
});
