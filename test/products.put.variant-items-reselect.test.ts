import { describe, expect, it } from "vitest";
import { normal } from "./fixtures/normal";
import { type Json, size, twoSizes } from "./fixtures/sizes";
import { get, put, uid } from "./helpers";

// Items of one body naming one product are applied one per round, and an item selecting its
// product by SKU is looked up again on each round's read until its turn (docs/products.md,
// "Updating products"). When an earlier item deletes the SKU and a later one, still before it,
// gives it back, one of those reads finds no product with it: the item is answered 404, where
// sent alone after the items before it, it would be applied. The plan's rounds
// (src/products/update/plan.ts) answer the whole body, no item handed to the
// general plan; this pins the 404 the page documents (test/products.variants.property.test.ts
// leaves the shape out of "as if sent one by one").

type Product = Awaited<ReturnType<typeof twoSizes>>;

/** Sizes s and m (SKUs `${x}s`, `${x}m`): the first item syncs s away, the second adds it back. */
const body = (p: Product, x: string, last: (x: string) => Json) => [
  { product_id: p.product_id, variants: { sync: [{ sku: `${x}m` }] } },
  { product_id: p.product_id, variants: { add: [size("s", { sku: `${x}s`, qty: 4 })] } },
  { sku: `${x}s`, ...last(x) },
  { product_id: p.product_id, title: "After" },
];

/** The answer and the product it leaves, prefix and ids taken out. */
function seen(r: { status: number; json: Json }, stored: Json, x: string, p: Product) {
  const text = JSON.stringify({ status: r.status, answer: r.json, stored })
    .replaceAll(x, "<x>")
    .replace(new RegExp(`product ${p.product_id}\\b`, "g"), "product <p>");
  return normal(JSON.parse(text), "\u0000", -1);
}

describe("PUT /v1/products: an item selected by a SKU the items before it delete and give back", () => {
  it.each<[string, (x: string) => Json]>([
    ["with a variant list", (x) => ({ variants: { add: [size("l", { sku: `${x}l` })] } })],
    ["without a list (the variant's own fields)", () => ({ stock: 7, price: 9 })],
  ])("is answered 404 %s, and the items after it are applied", async (_, last) => {
    const x = `${uid("R")}-`;
    const p = await twoSizes(x, { title: "Reselect", sku: `${x}p` });
    const r = await put("/v1/products", body(p, x, last));
    // The rounds answered the whole body: the general plan planned none of it.
    const sql = seen(r, (await get(`/v1/products/${p.product_id}`)).json, x, p);
    // The product is answered as it is stored.
    expect(sql.answer.products).toEqual([sql.stored]);
    // Round 1 writes item 0 (item 2's SKU names its product, so it waits); round 2's read finds
    // no product with the SKU item 0 synced away: item 2 is 404 before item 1 gives it back.
    expect([sql.status, sql.answer.success, sql.answer.errors]).toEqual([
      200,
      3,
      ["[2].sku: no product or variant has SKU <x>s"],
    ]);
    expect([
      sql.stored.title,
      sql.stored.variants.map((v: Json) => [v.sku, v.qty, v.price, v.variant_option1_value]),
    ]).toEqual([
      "After",
      [
        ["<x>m", 1, 100, "m"],
        ["<x>s", 4, 100, "s"],
      ],
    ]);
  });

  it("applies that item when the items are sent one by one", async () => {
    const x = `${uid("R")}-`;
    const p = await twoSizes(x, { title: "Reselect", sku: `${x}p` });
    const answers = [];
    for (const item of body(p, x, () => ({ stock: 7, price: 9 }))) answers.push(await put("/v1/products", [item]));
    expect(answers.map((a) => [a.status, a.json.errors])).toEqual([
      [200, []],
      [200, []],
      [200, []],
      [200, []],
    ]);
    const stored = (await get(`/v1/products/${p.product_id}`)).json;
    expect(stored.variants.map((v: Json) => [v.sku, v.qty, v.price])).toEqual([
      [`${x}m`, 1, 100],
      [`${x}s`, 7, 9],
    ]);
  });
});
