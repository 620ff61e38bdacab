import { describe, expect, it } from "vitest";
import { normal } from "./fixtures/normal";
import { type Json, size } from "./fixtures/sizes";
import { get, post, put, uid } from "./helpers";

// An add whose entry takes the product's own SKU while the fields beside the list give the product
// another one (or none): SKUs are checked on what the request leaves, so the old SKU is free for
// the entry; where the product keeps it, the entry is 409 (docs/products.md, "Updating
// products"). The plan (src/products/update/plan.ts) once refused the entry as
// the product's own SKU, its refusal read then found nothing refused and the request was retried
// as if a concurrent writer had changed the product, then answered 503. Each body pins its
// status, errors in order and the SKUs both products keep; no item with a list reaches the general
// planner, a refused body writes nothing and each product answered is the one stored.

/** A product of size m without a SKU, its own SKU `${x}old`. */
async function product(x: string) {
  const r = await post("/v1/products", { title: "Own", price: 100, sku: `${x}old`, variants: { add: [size("m")] } });
  expect(r.status, r.text).toBe(200);
  return r.json.products[0].product_id as number;
}

const taking = (x: string, extra: Json = {}) => ({ add: [size("s", { sku: `${x}old`, qty: 2, ...extra })] });

type Body = (ids: number[], x: string[]) => unknown;

/**
 * The body, to two new products, and the products it leaves, prefixes and ids taken out: no item
 * with a list reaches the general planner (./fixtures/one-path.ts), a refused body writes nothing
 * and each product answered is the one stored.
 */
async function once(body: Body, keyed = false) {
  const x = [`${uid("O")}-`, `${uid("O")}-`];
  const ids = [await product(x[0]), await product(x[1])];
  const stored = async () => {
    const out = [];
    for (const id of ids) out.push((await get(`/v1/products/${id}`)).json);
    return out;
  };
  const before = await stored();
  const headers: Record<string, string> = keyed ? { "idempotency-key": uid("key") } : {};
  const r = await put("/v1/products", body(ids, x), { headers });
  // The plan answered the whole body.
  const after = await stored();
  if (r.status >= 400) expect(after).toEqual(before);
  for (const p of r.json.products ?? []) expect(after).toContainEqual(p);
  let text = JSON.stringify({ status: r.status, answer: r.json, stored: after });
  x.forEach((prefix, i) => {
    text = text.replaceAll(prefix, `<${i}>`).replace(new RegExp(`product ${ids[i]}\\b`, "g"), `product <${i}>`);
  });
  return normal(JSON.parse(text), "\u0000", -1) as { status: number; answer: Json; stored: Json[] };
}

const skus = (p: Json) => [p.sku, p.variants.map((v: Json) => v.sku)];

/** The second product, which these bodies leave as made. */
const UNTOUCHED = ["<1>old", [null]];
/** The entry refused: the SKU the body's `sku` gives the product, or the product's own as stored. */
const TAKEN = (sku: string) => [`variants.add[0].sku: SKU <0>${sku} is also used by sku`];
const OWN = [`variants.add[0].sku: SKU <0>old is the product's own SKU`];

describe("PUT /v1/products: an add taking the product's own SKU that the fields beside it change", () => {
  it.each<[string, Body, number, string[], unknown[]]>([
    [
      "renamed",
      (ids, x) => ({ product_id: ids[0], sku: `${x[0]}new`, variants: taking(x[0]) }),
      200,
      [],
      ["<0>new", [null, "<0>old"]],
    ],
    [
      "cleared",
      (ids, x) => ({ product_id: ids[0], sku: null, variants: taking(x[0]) }),
      200,
      [],
      [null, [null, "<0>old"]],
    ],
    // The product keeps the SKU: the entry takes one the product has.
    [
      "given unchanged",
      (ids, x) => ({ product_id: ids[0], sku: `${x[0]}old`, variants: taking(x[0]) }),
      409,
      TAKEN("old"),
      ["<0>old", [null]],
    ],
    ["not given", (ids, x) => ({ product_id: ids[0], variants: taking(x[0]) }), 409, OWN, ["<0>old", [null]]],
    // The new SKU is the one the entry takes.
    [
      "renamed to the entry's",
      (ids, x) => ({ product_id: ids[0], sku: `${x[0]}new`, variants: taking(x[0], { sku: `${x[0]}new` }) }),
      409,
      TAKEN("new"),
      ["<0>old", [null]],
    ],
  ])("%s", async (_, body, status, errors, first) => {
    const r = await once(body);
    expect(r.status, JSON.stringify(r.answer)).toBe(status);
    expect(r.answer.errors).toEqual(errors);
    expect(r.stored.map(skus)).toEqual([first, UNTOUCHED]);
  });

  it("is taken in rounds of several items, beside an item refused (the round written again without it)", async () => {
    const r = await once(
      (ids, x) => [
        { product_id: ids[0], sku: `${x[0]}new`, variants: taking(x[0]) },
        // Takes the SKU item 0 gives product 0: refused, the round written again.
        { product_id: ids[1], variants: taking(x[1], { sku: `${x[0]}new` }) },
        { product_id: ids[1], sku: null, variants: taking(x[1]) },
      ],
      true,
    );
    expect([r.status, r.answer.success, r.answer.errors]).toEqual([
      200,
      2,
      ["[1].variants.add[0].sku: SKU <0>new is also claimed by item [0] of this request"],
    ]);
    expect(r.stored.map(skus)).toEqual([
      ["<0>new", [null, "<0>old"]],
      [null, [null, "<1>old"]],
    ]);
  });
});
