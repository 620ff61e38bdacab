import { describe, expect, it } from "vitest";
import { size } from "./fixtures/sizes";
import { asMade, expectPinned, foreignOwner, type Made, type Pinned, run } from "./fixtures/twins";
import { put, uid } from "./helpers";

// Items with a variant list that select a variant by variant_id beside the product_id that should
// own it, and items that name no product at all, answered by the plan
// (src/products/update/plan.ts), which words the 404 of a variant of another
// product from its read and the 400 of no selector without one. Each case pins its status, errors
// in order, round trips and what each product keeps; a refused body writes nothing, each product
// answered is the stored one, and no item with a list reaches the general planner.

const NONE = 2_000_000_000;
const FOREIGN = uid("FOREIGN");

const update = (m: Made, qty = 4) => ({ update: [{ variant_id: m.v[1], qty }] });
/** B's count of its first variant: written. */
const written = (m: Made) => ({ product_id: m.id, variants: { update: [{ variant_id: m.v[0], qty: 7 }] } });

type Case = Pinned;

const one: Case[] = [
  [
    "a variant of the product, with its fields",
    { count: 1, body: ([a]) => ({ product_id: a.id, variant_id: a.v[0], price: 5, variants: update(a) }) },
    200,
    [],
    2,
    [asMade(0, 0, 4)],
  ],
  [
    "a variant of the product given a new SKU beside an add",
    {
      count: 1,
      body: ([a]) => ({ product_id: a.id, variant_id: a.v[2], sku: `${a.p}new`, variants: { add: [size("xl")] } }),
    },
    200,
    [],
    2,
    [["<0>0 s 0", "<0>1 m 1", "<0>new l 2", "xl 0"]],
  ],
  [
    "a variant of the product with product fields only",
    { count: 1, body: ([a]) => ({ product_id: a.id, variant_id: a.v[0], title: "Renamed", variants: update(a) }) },
    200,
    [],
    2,
    [asMade(0, 0, 4)],
  ],
  [
    "a variant of another product",
    { count: 2, body: ([a, b]) => ({ product_id: b.id, variant_id: a.v[0], price: 5, variants: update(b) }) },
    404,
    ["variant_id: variant <0.0> is not a variant of product <1>"],
    1,
    [asMade(0), asMade(1)],
  ],
  [
    "a variant beside a product id no product has",
    { count: 1, body: ([a]) => ({ product_id: NONE, variant_id: a.v[0], variants: update(a) }) },
    404,
    [`variant_id: variant <0.0> is not a variant of product ${NONE}`],
    1,
    [asMade(0)],
  ],
  [
    "a variant id no variant has beside the product's id",
    { count: 1, body: ([a]) => ({ product_id: a.id, variant_id: NONE, variants: update(a) }) },
    404,
    [`variant_id: variant ${NONE} not found`],
    1,
    [asMade(0)],
  ],
  [
    "a variant of the product whose list is refused",
    {
      count: 1,
      body: ([a]) => ({
        product_id: a.id,
        variant_id: a.v[0],
        price: 5,
        variants: { update: [{ variant_id: a.v[1], sku: FOREIGN }] },
      }),
    },
    409,
    [`variants.update[0].sku: SKU ${FOREIGN} is already used by product <F>`],
    3,
    [asMade(0)],
  ],
  [
    "a variant of another product under an If-Match naming another version",
    {
      count: 2,
      body: ([a, b]) => ({ product_id: b.id, variant_id: a.v[0], variants: update(b) }),
      headers: { "if-match": '"p1-1"' },
    },
    404,
    ["variant_id: variant <0.0> is not a variant of product <1>"],
    1,
    [asMade(0), asMade(1)],
  ],
  [
    "no selector",
    { count: 1, body: ([a]) => ({ title: "Nobody", variants: update(a) }) },
    400,
    ["product_id: give variant_id, product_id or sku to select the product to update"],
    0,
    [asMade(0)],
  ],
  [
    "no selector (a null SKU) with a sync",
    { count: 1, body: () => ({ sku: null, price: 5, variants: { sync: [size("s")] } }) },
    400,
    ["product_id: give variant_id, product_id or sku to select the product to update"],
    0,
    [asMade(0)],
  ],
  [
    "no selector under an If-Match",
    { count: 1, body: ([a]) => ({ title: "Nobody", variants: update(a) }), headers: { "if-match": '"p1-1"' } },
    400,
    ["product_id: give variant_id, product_id or sku to select the product to update"],
    0,
    [asMade(0)],
  ],
  [
    "no selector, with a count given twice",
    { count: 1, body: ([a]) => ({ stock: 1, adjust: 1, variants: update(a) }) },
    400,
    ["product_id: give variant_id, product_id or sku to select the product to update"],
    0,
    [asMade(0)],
  ],
];

const several: Case[] = [
  [
    "a variant of its product beside another item",
    {
      count: 2,
      body: ([a, b]) => [{ product_id: a.id, variant_id: a.v[0], price: 5, variants: update(a) }, written(b)],
    },
    200,
    [],
    2,
    [asMade(0, 0, 4), asMade(1, 7)],
  ],
  [
    "a variant of another product beside an item written",
    {
      count: 2,
      body: ([a, b]) => [{ product_id: b.id, variant_id: a.v[0], price: 5, variants: update(b) }, written(b)],
    },
    200,
    ["[0].variant_id: variant <0.0> is not a variant of product <1>"],
    2,
    [asMade(0), asMade(1, 7)],
  ],
  [
    "two items naming one product, the first by its variant and id",
    {
      count: 1,
      body: ([a]) => [
        { product_id: a.id, variant_id: a.v[0], price: 5, variants: update(a, 5) },
        { product_id: a.id, variants: update(a, 6) },
      ],
    },
    200,
    [],
    // Two rounds: the second item names the product again after a list.
    4,
    [asMade(0, 0, 6)],
  ],
  [
    "an item without a selector beside an item written",
    { count: 1, body: ([a]) => [{ title: "Nobody", variants: update(a) }, written(a)] },
    200,
    ["[0].product_id: give variant_id, product_id or sku to select the product to update"],
    1,
    [asMade(0, 7)],
  ],
  [
    "every item without a selector",
    { count: 1, body: ([a]) => [{ variants: update(a) }, { price: 5, variants: { add: [size("xl")] } }] },
    400,
    [
      "[0].product_id: give variant_id, product_id or sku to select the product to update",
      "[1].product_id: give variant_id, product_id or sku to select the product to update",
    ],
    0,
    [asMade(0)],
  ],
  [
    "an item without a selector, a variant of another product and an item refused",
    {
      count: 2,
      body: ([a, b]) => [
        { product_id: b.id, variant_id: a.v[0], variants: update(b) },
        { title: "Nobody", variants: update(a) },
        { product_id: a.id, variants: { update: [{ variant_id: a.v[0], sku: FOREIGN }] } },
      ],
    },
    404,
    [
      "[0].variant_id: variant <0.0> is not a variant of product <1>",
      "[1].product_id: give variant_id, product_id or sku to select the product to update",
      `[2].variants.update[0].sku: SKU ${FOREIGN} is already used by product <F>`,
    ],
    3,
    [asMade(0), asMade(1)],
  ],
];

/** Errors with the product that has FOREIGN shown as <F>. */
let named = (errors: string[]) => errors;

describe("a variant selected by variant_id and product_id, and no selector", () => {
  it("has the product that owns FOREIGN", async () => {
    named = await foreignOwner(FOREIGN);
  });

  it.each([...one, ...several])("%s: pinned, by the one path", (...c) => expectPinned(c, named));

  it.each([...one.slice(3, 6), ...one.slice(8, 10), several[3]])(
    "%s: recorded under an Idempotency-Key and replayed",
    async (_name, twin, status) => {
      const key = uid("key");
      const first = await run({ ...twin, headers: { ...twin.headers, "idempotency-key": key } });
      expect(first.status).toBe(status);
      const again = await put("/v1/products", twin.body(first.made), {
        headers: { ...twin.headers, "idempotency-key": key },
      });
      expect([again.status, again.json]).toEqual([status, first.raw]);
    },
  );
});
