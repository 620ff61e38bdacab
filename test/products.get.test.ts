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

  it("answers text as stored: quotes, backticks and characters past ASCII, as a write answered them", async () => {
    const title = 'The "`tick`" \\ é 😀';
    const p = await createProduct({
      sku: uid(),
      title,
      price: 1,
      variants: { add: [{ sku: uid(), variant_option1_name: "`Size`", variant_option1_value: '"L"', qty: 1 }] },
    });
    const r = await get(`/v1/products/${p.product_id}`);
    expect(r.json.title).toBe(title);
    expect(r.json.variants[0]).toMatchObject({ variant_option1_name: "`Size`", variant_option1_value: '"L"' });
    expect(r.json).toEqual(p);
  });
});
