import { describe, expect, it } from "vitest";
import { createProduct, get, uid } from "./helpers";

describe("GET /v1/products", () => {
  it("reads a product by id", async () => {
    const sku = uid();
    const p = await createProduct({ sku, title: "Mug", price: "129.50", stock: 4 });
    const r = await get(`/v1/products/${p.product_id}`);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ product_id: p.product_id, sku, title: "Mug", price: 129.5, stock: 4, variants: [] });
  });
});
