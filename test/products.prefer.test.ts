import { describe, expect, it } from "vitest";
import { MAX_VARIANTS } from "../src/products/schema";
import { createProduct, get, post, put, uid } from "./helpers";

// docs/products.md, "Prefer: return=minimal": PUT and POST /v1/products answer ids, SKUs and updated_at
// instead of whole products when the client asks, and say so.

const MINIMAL = { prefer: "return=minimal" };
const colour = (value: string, extra: Record<string, unknown> = {}) => ({
  variant_option1_name: "Colour",
  variant_option1_value: value,
  ...extra,
});

describe("Prefer: return=minimal", () => {
  it("PUT answers each product's ids, SKUs and updated_at, with Preference-Applied and Vary", async () => {
    const p = await createProduct({ sku: uid("P"), variants: { add: [colour("red", { sku: uid("V") })] } });
    const fresh = uid("V");
    const r = await put(
      "/v1/products",
      {
        product_id: p.product_id,
        variants: { sync: [colour("red", { sku: p.variants[0].sku, qty: 3 }), colour("blue", { sku: fresh })] },
      },
      { headers: MINIMAL },
    );
    expect(r.status).toBe(200);
    expect(r.headers.get("preference-applied")).toBe("return=minimal");
    expect(r.headers.get("vary")).toContain("Prefer");
    const now = (await get(`/v1/products/${p.product_id}`)).json;
    expect(r.json).toEqual({
      success: 1,
      errors: [],
      notices: [],
      products: [
        {
          product_id: p.product_id,
          sku: p.sku,
          updated_at: now.updated_at,
          variants: now.variants.map((v: { variant_id: number; sku: string }) => ({
            variant_id: v.variant_id,
            sku: v.sku,
          })),
        },
      ],
    });
    expect(r.json.products[0].variants.map((v: { sku: string }) => v.sku)).toEqual([p.variants[0].sku, fresh]);
    expect(now.variants[0].qty).toBe(3);
  });

  it("POST answers the created products minimally, in the order of the body", async () => {
    const skus = [uid("A"), uid("B")];
    const r = await post(
      "/v1/products",
      skus.map((sku) => ({ title: "Minimal", price: 100, sku, variants: { add: [colour("x", { sku: `${sku}-x` })] } })),
      { headers: MINIMAL },
    );
    expect(r.status).toBe(200);
    expect(r.headers.get("preference-applied")).toBe("return=minimal");
    expect(r.json.products.map((p: { sku: string }) => p.sku)).toEqual(skus);
    for (const p of r.json.products) {
      expect(Object.keys(p)).toEqual(["product_id", "sku", "updated_at", "variants"]);
      const full = (await get(`/v1/products/${p.product_id}`)).json;
      expect(p.updated_at).toBe(full.updated_at);
      expect(p.variants).toEqual([{ variant_id: full.variants[0].variant_id, sku: `${p.sku}-x` }]);
    }
  });

  it("the stock tools' path answers minimally too", async () => {
    const p = await createProduct({ sku: uid("S"), stock: 1 });
    const r = await put("/v1/products", [{ sku: p.sku, stock: 7 }], { headers: MINIMAL });
    expect(r.status).toBe(200);
    expect(r.headers.get("preference-applied")).toBe("return=minimal");
    expect(r.json.products).toEqual([
      { product_id: p.product_id, sku: p.sku, updated_at: expect.any(String), variants: [] },
    ]);
    expect((await get(`/v1/products/${p.product_id}`)).json.stock).toBe(7);
  });

  it.each([["return=representation"], ["respond-async"], [""]])(
    "Prefer %j gets the whole products, Vary: Prefer and no Preference-Applied",
    async (prefer) => {
      const p = await createProduct({ sku: uid("F") });
      const r = await put("/v1/products", { product_id: p.product_id, title: "Full" }, { headers: { prefer } });
      expect(r.status).toBe(200);
      expect(r.headers.get("preference-applied")).toBeNull();
      expect(r.headers.get("vary")).toContain("Prefer");
      expect(r.json.products[0].title).toBe("Full");
    },
  );

  it("failed items still answer their errors; nothing is written", async () => {
    const r = await put("/v1/products", { product_id: 987654321, title: "x" }, { headers: MINIMAL });
    expect(r.status).toBe(404);
    expect(r.json.errors[0]).toMatch(/product_id/);
    expect(r.json.products).toEqual([]);
  });
});

describe("OpenAPI", () => {
  it("documents Prefer on PUT and POST /v1/products, and the variant bound", async () => {
    const doc = (await get("/openapi.json")).json;
    for (const op of ["put", "post"]) {
      const params = doc.paths["/v1/products"][op].parameters as { name: string; in: string }[];
      expect(params).toContainEqual(expect.objectContaining({ name: "Prefer", in: "header" }));
    }
    const sync = doc.components.schemas.ProductUpdate.properties.variants.properties.sync;
    expect(JSON.stringify(sync)).toContain(`"maxItems":${MAX_VARIANTS}`);
  });
});
