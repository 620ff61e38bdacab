import { afterEach, describe, expect, it } from "vitest";
import { jsPlanOnly } from "../src/products/update/index";
import { normal } from "./fixtures/normal";
import { type Json, size } from "./fixtures/sizes";
import { post, put, uid } from "./helpers";

// An add whose entry takes the product's own SKU while the fields beside the list give the product
// another one (or none): the fields are written before the new variants, so the SKU is free for
// the entry, as the JavaScript plan has it. The SQL plan (src/products/update/variants-sql.ts,
// PLAN) refused the entry as the product's own SKU, its refusal read then found nothing refused
// and the request was retried as if a concurrent writer had changed the product, then answered
// 503. Each body goes through the SQL plan and, to other products, through the JavaScript plan
// alone (`jsPlanOnly`): the same status, errors, answer and stored products.

afterEach(() => {
  jsPlanOnly.on = false;
});

/** A product of size m without a SKU, its own SKU `${x}old`. */
async function product(x: string) {
  const r = await post("/v1/products", { title: "Own", price: 100, sku: `${x}old`, variants: { add: [size("m")] } });
  expect(r.status, r.text).toBe(200);
  return r.json.products[0].product_id as number;
}

const taking = (x: string, extra: Json = {}) => ({ add: [size("s", { sku: `${x}old`, qty: 2, ...extra })] });

type Body = (ids: number[], x: string[]) => unknown;

/** The body through both plans, to two products each time; the SQL plan's answer and products. */
async function both(body: Body, keyed = false) {
  const runs = [];
  for (const js of [false, true]) {
    const x = [`${uid("O")}-`, `${uid("O")}-`];
    const ids = [await product(x[0]), await product(x[1])];
    jsPlanOnly.on = js;
    const taken = jsPlanOnly.taken;
    const headers: Record<string, string> = keyed ? { "idempotency-key": uid("key") } : {};
    const r = await put("/v1/products", body(ids, x), { headers });
    jsPlanOnly.on = false;
    // The SQL plan answered the whole body.
    if (!js) expect(jsPlanOnly.taken).toBe(taken);
    const stored = [];
    for (const id of ids) stored.push((await put("/v1/products", { product_id: id })).json.products?.[0]);
    let text = JSON.stringify({ status: r.status, answer: r.json, stored });
    x.forEach((prefix, i) => {
      text = text.replaceAll(prefix, `<${i}>`).replace(new RegExp(`product ${ids[i]}\\b`, "g"), `product <${i}>`);
    });
    runs.push(normal(JSON.parse(text), "\u0000", -1));
  }
  expect(runs[0]).toEqual(runs[1]);
  return runs[0] as { status: number; answer: Json; stored: Json[] };
}

const skus = (p: Json) => [p.sku, p.variants.map((v: Json) => v.sku)];

describe("PUT /v1/products: an add taking the product's own SKU that the fields beside it change", () => {
  it.each<[string, Body, number, unknown[]]>([
    ["renamed", (ids, x) => ({ product_id: ids[0], sku: `${x[0]}new`, variants: taking(x[0]) }), 200, ["<0>new"]],
    ["cleared", (ids, x) => ({ product_id: ids[0], sku: null, variants: taking(x[0]) }), 200, [null]],
    // The product keeps the SKU: the entry takes one the product has.
    ["given unchanged", (ids, x) => ({ product_id: ids[0], sku: `${x[0]}old`, variants: taking(x[0]) }), 409, []],
    ["not given", (ids, x) => ({ product_id: ids[0], variants: taking(x[0]) }), 409, []],
    // The new SKU is the one the entry takes.
    [
      "renamed to the entry's",
      (ids, x) => ({ product_id: ids[0], sku: `${x[0]}new`, variants: taking(x[0], { sku: `${x[0]}new` }) }),
      409,
      [],
    ],
  ])("%s", async (_, body, status, sku) => {
    const r = await both(body);
    expect(r.status, JSON.stringify(r.answer)).toBe(status);
    if (status === 200) expect(skus(r.answer.products[0])).toEqual([sku[0], [null, "<0>old"]]);
    else expect(skus(r.stored[0])).toEqual(["<0>old", [null]]);
  });

  it("is taken in rounds of several items, beside an item refused (the round written again without it)", async () => {
    const r = await both(
      (ids, x) => [
        { product_id: ids[0], sku: `${x[0]}new`, variants: taking(x[0]) },
        // Takes the SKU product 0 has as the round reads it: refused, the round written again.
        { product_id: ids[1], variants: taking(x[1], { sku: `${x[0]}new` }) },
        { product_id: ids[1], sku: null, variants: taking(x[1]) },
      ],
      true,
    );
    expect([r.status, r.answer.success, r.answer.errors]).toEqual([
      200,
      2,
      [expect.stringMatching(/^\[1\]\.variants\.add\[0\]\.sku: SKU <0>new /)],
    ]);
    expect(r.stored.map(skus)).toEqual([
      ["<0>new", [null, "<0>old"]],
      [null, [null, "<1>old"]],
    ]);
  });
});
