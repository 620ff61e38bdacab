import { describe, expect, it } from "vitest";
import { wrapD1 } from "./d1-wrap";
import { get, post, put, uid } from "./helpers";

// Product fields beside a variant list that derive from the stored product (a head category
// merged into its stored paths, `slug: null` without a title): the plan reads them first in
// one statement (src/products/update/plan.ts) and its batch re-checks the
// stored paths.

type Json = Record<string, any>;
const size = (v: string, extra: Json = {}) => ({ variant_option1_name: "Size", variant_option1_value: v, ...extra });

async function product(extra: Json = {}) {
  const r = await post("/v1/products", {
    title: "Stored Title",
    price: 100,
    categories: [["Shoes"], ["Sale", "Summer"]],
    variants: { add: [size("s"), size("m")] },
    ...extra,
  });
  expect(r.status, r.text).toBe(200);
  return r.json.products[0] as Json;
}

describe("a variant list beside fields derived from the stored product", () => {
  it.each<[string, Json, (p: Json) => void]>([
    [
      "a head category merged into the stored paths",
      { headcategory_name: "Sale" },
      (p) => expect(p.categories).toEqual([["Sale", "Summer"], ["Shoes"]]),
    ],
    [
      "a new head category before the stored paths",
      { headcategory_name: "New" },
      (p) => expect(p.categories).toEqual([["New"], ["Shoes"], ["Sale", "Summer"]]),
    ],
    ["slug: null without a title", { slug: null }, (p) => expect(p.slug).toMatch(/^stored-title/)],
  ])("writes %s in a read and one batch", async (_name, fields, check) => {
    const p = await product({ slug: uid("kept") });
    const w = wrapD1();
    const r = await put(
      "/v1/products",
      { product_id: p.product_id, ...fields, variants: { sync: [size("s", { qty: 4 }), size("l")] } },
      { env: { DB: w.db } },
    );
    expect(r.status, r.text).toBe(200);
    expect(w.counts.calls).toBeLessThanOrEqual(2);
    const got = (await get(`/v1/products/${p.product_id}`)).json;
    check(got);
    expect(got.variants.map((v: Json) => [v.variant_option1_value, v.qty])).toEqual([
      ["s", 4],
      ["l", 0],
    ]);
    expect(r.json.products[0]).toEqual(got);
  });

  it("merges into the paths as they are when another write changed them after the read", async () => {
    const p = await product();
    const w = wrapD1({
      before: async (call) => {
        if (call === 2) {
          const moved = await put("/v1/products", { product_id: p.product_id, categories: [["Boots"]] });
          expect(moved.status).toBe(200);
        }
      },
    });
    const r = await put(
      "/v1/products",
      { product_id: p.product_id, headcategory_name: "Sale", variants: { sync: [size("m")] } },
      { env: { DB: w.db } },
    );
    expect(r.status, r.text).toBe(200);
    const got = (await get(`/v1/products/${p.product_id}`)).json;
    expect(got.categories).toEqual([["Sale"], ["Boots"]]);
    expect(got.variants.map((v: Json) => v.variant_option1_value)).toEqual(["m"]);
  });

  it("refuses a list beside a merged head category, writing nothing", async () => {
    const p = await product();
    const before = (await get(`/v1/products/${p.product_id}`)).json;
    const r = await put("/v1/products", {
      product_id: p.product_id,
      headcategory_name: "Sale",
      variants: { sync: [size("s"), size("s")] },
    });
    expect(r.status, r.text).toBe(409);
    expect(r.json.errors).toEqual(["variants.sync[1]: same option values as variants.sync[0]"]);
    expect((await get(`/v1/products/${p.product_id}`)).json).toEqual(before);
  });

  it("checks an update's expected_qty beside a sync against the count as stored, in one batch", async () => {
    const p = await product();
    const [s, m] = p.variants as Json[];
    const body = (expected: number) => ({
      product_id: p.product_id,
      variants: {
        sync: [size("s", { qty: 7 }), size("m")],
        update: [{ variant_id: s.variant_id, expected_qty: expected, adjust: 1 }],
      },
    });
    // The sync sets 7; the expected_qty names the count before it (0), and the adjust moves the 7.
    const w = wrapD1();
    const r = await put("/v1/products", body(0), { env: { DB: w.db } });
    expect(r.status, r.text).toBe(200);
    expect(w.counts.calls).toBeLessThanOrEqual(2);
    expect(r.json.products[0].variants.map((v: Json) => [v.variant_id, v.qty])).toEqual([
      [s.variant_id, 8],
      [m.variant_id, 0],
    ]);
    // Now stored 8: an expected_qty of 7 (what the sync sets) is refused, nothing written.
    const refused = await put("/v1/products", body(7));
    expect(refused.status, refused.text).toBe(409);
    expect(refused.json.errors).toEqual([`variants.update[0].expected_qty: variant ${s.variant_id} has qty 8, not 7`]);
    expect((await get(`/v1/products/${p.product_id}`)).json.variants[0].qty).toBe(8);
  });

  it("changes a variant selected by id with the fields beside the list first, in a read and one batch", async () => {
    const p = await product();
    const [s, m] = p.variants as Json[];
    const w = wrapD1();
    const r = await put(
      "/v1/products",
      {
        variant_id: s.variant_id,
        price: 250,
        stock: 5,
        expected_stock: 0,
        gtin: "00012345",
        // The sync keeps it (by its values) and changes its price again; the update adds to the 5.
        variants: { sync: [size("s", { price: 300 }), size("m")], update: [{ variant_id: s.variant_id, adjust: 2 }] },
      },
      { env: { DB: w.db } },
    );
    expect(r.status, r.text).toBe(200);
    expect(w.counts.calls).toBeLessThanOrEqual(2);
    expect(r.json.products[0].variants.map((v: Json) => [v.variant_id, v.price, v.qty, v.gtin])).toEqual([
      [s.variant_id, 300, 7, "00012345"],
      [m.variant_id, 100, 0, null],
    ]);
    // The count it expects is the stored one (7 now): another is refused, nothing written.
    const refused = await put("/v1/products", {
      variant_id: s.variant_id,
      stock: 1,
      expected_stock: 5,
      variants: { sync: [size("s")] },
    });
    expect(refused.status, refused.text).toBe(409);
    expect(refused.json.errors).toEqual([`expected_stock: variant ${s.variant_id} has qty 7, not 5`]);
  });

  it("deletes every variant with an empty sync in one batch, and refuses it under disable_minusqty with a negative stock", async () => {
    const p = await product({ slug: uid("empty") });
    const w = wrapD1();
    const r = await put(
      "/v1/products",
      { product_id: p.product_id, title: "No variants", variants: { sync: [] } },
      { env: { DB: w.db } },
    );
    expect(r.status, r.text).toBe(200);
    expect(w.counts.calls).toBeLessThanOrEqual(2);
    expect(r.json.products[0]).toMatchObject({ title: "No variants", variants: [] });
    const got = (await get(`/v1/products/${p.product_id}`)).json;
    expect(got).toEqual(r.json.products[0]);

    // A product whose own stock went negative while it had variants: leaving it without them under
    // disable_minusqty is refused; nothing written.
    const q = (await post("/v1/products", { title: "Negative", price: 1, stock: -3 })).json.products[0];
    expect((await put("/v1/products", { product_id: q.product_id, variants: { add: [size("s")] } })).status).toBe(200);
    const before = (await get(`/v1/products/${q.product_id}`)).json;
    const body = { product_id: q.product_id, disable_minusqty: 1, variants: { sync: [] } };
    const refused = await put("/v1/products", body);
    expect(refused.status, refused.text).toBe(409);
    expect(refused.json.errors).toEqual([
      `disable_minusqty: stock is negative for product ${q.product_id}; set their stock first`,
    ]);
    expect((await get(`/v1/products/${q.product_id}`)).json).toEqual(before);
  });

  it("applies the product's own stock, adjust and expected_stock beside an empty sync to the product", async () => {
    const p = await product();
    const w = wrapD1();
    const body = { product_id: p.product_id, stock: 4, expected_stock: 0, variants: { sync: [] } };
    const r = await put("/v1/products", body, { env: { DB: w.db } });
    expect(r.status, r.text).toBe(200);
    expect(w.counts.calls).toBeLessThanOrEqual(2);
    expect(r.json.products[0]).toMatchObject({ stock: 4, variants: [] });
    const moved = await put("/v1/products", {
      product_id: p.product_id,
      adjust: -1,
      expected_stock: 4,
      variants: { sync: [] },
    });
    expect(moved.json.products[0]).toMatchObject({ stock: 3, variants: [] });
    // The stored stock is 3 now: expecting 4 is refused.
    const refused = await put("/v1/products", { ...body, expected_stock: 4 });
    expect(refused.status, refused.text).toBe(409);
    expect(refused.json.errors).toEqual([`expected_stock: product ${p.product_id} has stock 3, not 4`]);
  });

  it("merges a count after an adjust and adjusts that turn back, checking the counts reached on the way", async () => {
    const p = await product();
    const [s] = p.variants as Json[];
    const id = s.variant_id;
    const w = wrapD1();
    const merged = [
      { variant_id: id, adjust: 2 },
      { variant_id: id, adjust: -1 },
      { variant_id: id, qty: 6 },
      { variant_id: id, adjust: -2 },
    ];
    const r = await put(
      "/v1/products",
      { product_id: p.product_id, variants: { update: merged } },
      { env: { DB: w.db } },
    );
    expect(r.status, r.text).toBe(200);
    expect(w.counts.calls).toBeLessThanOrEqual(2);
    expect(r.json.products[0].variants[0].qty).toBe(4);
    // Near the largest count, an adjust on the way passes it, though the count after it does not.
    expect(
      (await put("/v1/products", { variant_id: id, stock: 999_999_999, variants: { sync: [size("s"), size("m")] } }))
        .status,
    ).toBe(200);
    const past = [
      { variant_id: id, adjust: 5 },
      { variant_id: id, qty: 3 },
    ];
    const body = { product_id: p.product_id, variants: { update: past } };
    const refused = await put("/v1/products", body);
    expect(refused.status, refused.text).toBe(400);
    expect(refused.json.errors).toEqual([`variants.update[0].adjust: would take qty to 1000000004, past 1000000000`]);
    expect((await get(`/v1/products/${p.product_id}`)).json.variants[0].qty).toBe(999_999_999);
  });

  it("changes a variant selected by SKU with the fields beside the list first, in a read and one batch", async () => {
    const p = await product({ variants: { add: [size("s", { sku: uid("S") }), size("m")] } });
    const [s, m] = p.variants as Json[];
    const w = wrapD1();
    const body = { sku: s.sku, price: 250, stock: 3, variants: { update: [{ variant_id: m.variant_id, qty: 2 }] } };
    const r = await put("/v1/products", body, { env: { DB: w.db } });
    expect(r.status, r.text).toBe(200);
    expect(w.counts.calls).toBeLessThanOrEqual(2);
    expect(r.json.products[0].variants.map((v: Json) => [v.sku, v.price, v.qty])).toEqual([
      [s.sku, 250, 3],
      [null, 100, 2],
    ]);
  });
});
