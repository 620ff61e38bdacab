import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { encodeCursor } from "../src/platform/cursor";
import { get, post, uid } from "./helpers";

// Every answer lists a product's variants by position, then id (docs/products.md). The modelled
// answers build a product's variants in runs of 256 positions (docs/design.md, "Answers from D1"):
// positions that ties, gaps or values past 2,048 leave uneven change the runs, never the order.

describe("the order of a product's variants in its answers", () => {
  it.each([
    ["numbered by the writes", "position"],
    ["reversed and spread over gaps", "(10000 - position) * 3"],
    ["tied in threes", "position / 3"],
    ["all tied", "0"],
    ["past 2,048", "5000 + position % 700"],
  ])("is by position, then id, in both dialects and a page, with positions %s", async (_, positions) => {
    const prefix = uid("ORD");
    const add = Array.from({ length: 700 }, (_, i) => ({
      sku: `${prefix}-${i}`,
      variant_option1_name: "Size",
      variant_option1_value: `S${i}`,
      qty: 1,
    }));
    const created = await post("/v1/products", { title: `Order ${prefix}`, price: 100, variants: { add } });
    expect(created.status).toBe(200);
    const id = created.json.products[0].product_id;
    await env.DB.prepare(`UPDATE variants SET position = ${positions} WHERE product_id = ?1`).bind(id).run();
    const { results } = await env.DB.prepare("SELECT id FROM variants WHERE product_id = ?1 ORDER BY position, id")
      .bind(id)
      .all<{ id: number }>();
    const expected = results.map((r) => r.id);
    const own = (await get(`/v1/products/${id}`)).json;
    expect(own.variants.map((v: any) => v.variant_id)).toEqual(expected);
    const lookup = (await get(`/v1/products?product_id=${id}&include_details=true`)).json;
    expect(lookup.variants.map((v: any) => Number(v.id))).toEqual(expected);
    const page = (await get(`/v1/products?limit=1&include_details=true&cursor=${encodeCursor(id - 1)}`)).json;
    expect(page[0].variants.map((v: any) => Number(v.id))).toEqual(expected);
  });
});
