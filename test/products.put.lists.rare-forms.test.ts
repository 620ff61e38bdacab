import { beforeAll, describe, expect, it } from "vitest";
import { wrapD1 } from "./d1-wrap";
import { answers, type Form } from "./fixtures/forms";
import { type Json, product, size } from "./fixtures/sizes";
import { post, put, uid } from "./helpers";

// The rare one-item forms of a PUT with a variant list that the plan takes
// (src/products/update/plan.ts): written in one batch (after a read where the item needs
// one), or refused whatever is stored and worded from one read (src/products/update/plan.ts).
// Each case pins its status, errors in order, what it writes (nothing when refused) and its round
// trips (./fixtures/forms.ts).

const FOREIGN = uid("FOREIGN");
/** The product that has FOREIGN (made before the cases run). */
const foreign = { id: 0 };
const twentyPaths = () => ({ categories: Array.from({ length: 20 }, (_, i) => [`Path ${i}`]) });

const forms: [string, Form][] = [
  [
    "an empty sync, then an add taking a deleted variant's SKU",
    {
      body: (c) => ({ product_id: c.id, price: 250, variants: { sync: [], add: [size("xl", { sku: `${c.p}0` })] } }),
      status: 200,
      written: (p, c) => expect(p.variants.map((v: Json) => [v.sku, v.price])).toEqual([[`${c.p}0`, 250]]),
      calls: 1,
    },
  ],
  [
    "an empty sync, then an add under new option names",
    {
      body: (c) => ({
        product_id: c.id,
        variants: { sync: [], add: [{ variant_option1_name: "Colour", variant_option1_value: "red" }] },
      }),
      status: 200,
      written: (p) => expect(p.variants.map((v: Json) => v.variant_option1_name)).toEqual(["Colour"]),
      calls: 1,
    },
  ],
  [
    "an empty sync, then an add repeating a combination",
    {
      body: (c) => ({ product_id: c.id, variants: { sync: [], add: [size("xl"), size("xl", { sku: `${c.p}1` })] } }),
      status: 409,
      errors: () => ["variants.add[1]: option combination (xl) already exists (variants.add[0])"],
      calls: 2,
    },
  ],
  [
    "an empty sync, then an add, beside the product's stock",
    {
      body: (c) => ({ product_id: c.id, stock: 3, variants: { sync: [], add: [size("xl")] } }),
      status: 400,
      errors: () => [
        "stock: the product has variants, whose qty is its stock: select a variant or use variants.update",
      ],
      calls: 1,
    },
  ],
  [
    "an empty sync, then an update of a variant it deleted",
    {
      body: (c) => ({
        product_id: c.id,
        variants: { sync: [], add: [size("xl")], update: [{ variant_id: c.v[0], qty: 1 }] },
      }),
      status: 404,
      errors: (c) => [`variants.update[0].variant_id: variant ${c.v[0]} is not a variant of product ${c.id}`],
      calls: 1,
    },
  ],
  [
    "a selected variant with both expected counts",
    {
      body: (c) => ({
        variant_id: c.v[1],
        expected_qty: 1,
        expected_stock: 1,
        variants: { update: [{ variant_id: c.v[2], qty: 5 }] },
      }),
      status: 400,
      errors: () => ["expected_stock: give expected_qty or expected_stock, not both"],
      calls: 2,
    },
  ],
  [
    "a selected variant's stock and adjust, the adjust past the largest count",
    {
      body: (c) => ({
        sku: `${c.p}2`,
        stock: 999_999_999,
        adjust: 5,
        variants: { sync: [size("s"), size("m")] },
      }),
      status: 400,
      errors: () => [
        "adjust: give stock (the new count) or adjust (the change), not both",
        "adjust: would take qty to 1000000004, past 1000000000",
      ],
      calls: 2,
    },
  ],
  [
    "the product's stock and adjust beside an empty sync",
    {
      body: (c) => ({ product_id: c.id, stock: 1, adjust: 1, expected_qty: 0, variants: { sync: [] } }),
      status: 400,
      errors: () => ["adjust: give stock (the new count) or adjust (the change), not both"],
      calls: 1,
    },
  ],
  [
    "an update naming a variant twice, the first entry with qty and adjust",
    {
      body: (c) => ({
        product_id: c.id,
        variants: {
          update: [
            { variant_id: c.v[0], qty: 1, adjust: 2 },
            { variant_id: c.v[1], qty: 4 },
            { variant_id: c.v[0], price: 5 },
          ],
        },
      }),
      status: 400,
      errors: () => ["variants.update[0].adjust: give qty (the new count) or adjust (the change), not both"],
      calls: 1,
    },
  ],
  [
    "an update naming a variant twice, the second entry with qty and adjust",
    {
      body: (c) => ({
        product_id: c.id,
        variants: {
          update: [
            { variant_id: c.v[0], adjust: 1 },
            { variant_id: c.v[0], qty: 1, adjust: -3, sku: `${c.p}1` },
          ],
        },
      }),
      status: 400,
      errors: (c) => [
        "variants.update[1].adjust: give qty (the new count) or adjust (the change), not both",
        `variant ${c.v[1]}: SKU ${c.p}1 is also used by variants.update[1].sku`,
      ],
      calls: 1,
    },
  ],
  [
    "an update naming a variant twice, a count set passing the largest on the way",
    {
      body: (c) => ({
        product_id: c.id,
        variants: {
          update: [
            { variant_id: c.v[1], qty: 999_999_999 },
            { variant_id: c.v[1], adjust: 5 },
            { variant_id: c.v[1], adjust: -10 },
          ],
        },
      }),
      status: 400,
      errors: () => ["variants.update[1].adjust: would take qty to 1000000004, past 1000000000"],
      calls: 1,
    },
  ],
  [
    "an update naming a variant twice, amounts past the largest from a negative count",
    {
      before: async (c) => {
        const r = await put("/v1/products", { variant_id: c.v[0], stock: -500_000_000, variants: { update: [] } });
        expect(r.status, r.text).toBe(200);
      },
      body: (c) => ({
        product_id: c.id,
        variants: {
          update: [
            { variant_id: c.v[0], adjust: 600_000_000 },
            { variant_id: c.v[0], adjust: 600_000_000 },
          ],
        },
      }),
      status: 200,
      written: (p) => expect(p.variants[0].qty).toBe(700_000_000),
      calls: 1,
    },
  ],
  [
    "an update naming a variant twice, amounts passing the largest",
    {
      body: (c) => ({
        product_id: c.id,
        variants: {
          update: [
            { variant_id: c.v[2], adjust: 600_000_000 },
            { variant_id: c.v[2], adjust: 600_000_000 },
          ],
        },
      }),
      status: 400,
      errors: () => ["variants.update[1].adjust: would take qty to 1200000002, past 1000000000"],
      calls: 2,
    },
  ],
  [
    "an update naming a variant twice beside an entry of no variant of the product",
    {
      body: (c) => ({
        product_id: c.id,
        variants: {
          update: [
            { variant_id: c.v[0], qty: 3 },
            { variant_id: 2_000_000_000, qty: 1 },
            { variant_id: c.v[0], adjust: -1, expected_qty: 0 },
          ],
        },
      }),
      status: 404,
      errors: (c) => [`variants.update[1].variant_id: variant 2000000000 is not a variant of product ${c.id}`],
      calls: 2,
    },
  ],
  [
    "a head category merged into the stored paths past the bound",
    {
      extra: twentyPaths,
      body: (c) => ({
        product_id: c.id,
        headcategory_name: "New",
        variants: { update: [{ variant_id: c.v[0], qty: 9 }] },
      }),
      status: 400,
      errors: () => ["headcategory_name: the product would be in more than 20 category paths"],
      calls: 2,
    },
  ],
  [
    "a head category merged past the bound, beside a refused entry (its errors come first and stop the plan)",
    {
      extra: twentyPaths,
      body: (c) => ({ product_id: c.id, headcategory_name: "New", variants: { sync: [size("s"), size("s")] } }),
      status: 400,
      errors: () => ["headcategory_name: the product would be in more than 20 category paths"],
      calls: 2,
    },
  ],
  [
    "a head category merged past the bound beside two lists",
    {
      extra: twentyPaths,
      body: (c) => ({
        variant_id: c.v[1],
        price: 7,
        headcategory_name: "New",
        variants: { sync: [size("s"), size("m")], add: [size("xl")] },
      }),
      status: 400,
      errors: () => ["headcategory_name: the product would be in more than 20 category paths"],
      calls: 2,
    },
  ],
  [
    "the product selected by its own SKU with variant fields",
    {
      extra: (p) => ({ sku: `${p}p` }),
      body: (c) => ({
        sku: `${c.p}p`,
        price: 250,
        weight: 3,
        visible: 0,
        variants: { update: [{ variant_id: c.v[0], qty: 4 }] },
      }),
      status: 200,
      written: (p, c) => {
        expect([p.sku, p.price, p.weight, p.visible]).toEqual([`${c.p}p`, 250, 3, 0]);
        expect(p.variants.map((v: Json) => [v.qty, v.price])).toEqual([
          [4, 100],
          [1, 100],
          [2, 100],
        ]);
      },
      calls: 2,
    },
  ],
  [
    "the product selected by its own SKU with its stock beside a list",
    {
      extra: (p) => ({ sku: `${p}p` }),
      body: (c) => ({ sku: `${c.p}p`, stock: 4, variants: { add: [size("xl")] } }),
      status: 400,
      errors: () => [
        "stock: the product has variants, whose qty is its stock: select a variant or use variants.update",
      ],
      calls: 2,
    },
  ],
  [
    "the product selected by its own SKU with its stock beside an empty sync",
    {
      extra: (p) => ({ sku: `${p}p` }),
      body: (c) => ({ sku: `${c.p}p`, stock: 4, expected_stock: 0, price: 9, variants: { sync: [] } }),
      status: 200,
      written: (p) => expect([p.stock, p.price, p.variants]).toEqual([4, 9, []]),
      calls: 2,
    },
  ],
  [
    "a variant selected by id taking a new SKU that a sync after it matches",
    {
      body: (c) => ({
        variant_id: c.v[0],
        sku: `${c.p}x`,
        price: 5,
        variants: { sync: [{ sku: `${c.p}x`, qty: 7 }, size("m")] },
      }),
      status: 200,
      written: (p, c) =>
        expect(p.variants.map((v: Json) => [v.variant_id, v.sku, v.qty, v.price])).toEqual([
          [c.v[0], `${c.p}x`, 7, 5],
          [c.v[1], `${c.p}1`, 1, 100],
        ]),
      calls: 2,
    },
  ],
  [
    "a variant selected by id taking a SKU of another variant, which the sync after it deletes",
    {
      // SKUs are checked as the lists leave them: the other variant holds a placeholder until the
      // sync deletes it (src/products/update/plan.ts), so the SKU is free: a resolve read and
      // the batch.
      body: (c) => ({ variant_id: c.v[0], sku: `${c.p}1`, variants: { sync: [size("s"), size("l")] } }),
      status: 200,
      written: (p, c) =>
        expect(p.variants.map((v: Json) => [v.variant_id, v.sku])).toEqual([
          [c.v[0], `${c.p}1`],
          [c.v[2], `${c.p}2`],
        ]),
      calls: 2,
    },
  ],
  [
    "a variant selected by id taking another product's SKU",
    {
      body: (c) => ({ variant_id: c.v[0], sku: FOREIGN, variants: { update: [{ variant_id: c.v[1], qty: 3 }] } }),
      status: 409,
      errors: () => [`sku: SKU ${FOREIGN} is already used by product ${foreign.id}`],
      // A refusal of two lists (the leading entry is one): the resolve read, the refused batch and
      // the full read that words it (src/products/update/plan.ts).
      calls: 3,
    },
  ],
  [
    "a variant selected by id with a stock below 0",
    {
      body: (c) => ({ variant_id: c.v[1], stock: -2, variants: { update: [{ variant_id: c.v[2], qty: 0 }] } }),
      status: 200,
      written: (p) => expect(p.variants.map((v: Json) => v.qty)).toEqual([0, -2, 0]),
      calls: 2,
    },
  ],
  [
    "a variant selected by SKU with an adjust below 0",
    {
      body: (c) => ({ sku: `${c.p}2`, adjust: -5, expected_stock: 2, variants: { sync: [size("s"), size("l")] } }),
      status: 200,
      written: (p) => expect(p.variants.map((v: Json) => v.qty)).toEqual([0, -3]),
      calls: 2,
    },
  ],
  [
    "a variant selected under disable_minusqty with an adjust below 0 that the count allows",
    {
      extra: () => ({ disable_minusqty: 1 }),
      body: (c) => ({ variant_id: c.v[2], adjust: -1, variants: { update: [{ variant_id: c.v[0], qty: 4 }] } }),
      status: 200,
      written: (p) => expect(p.variants.map((v: Json) => v.qty)).toEqual([4, 1, 1]),
      calls: 2,
    },
  ],
  [
    "a variant selected under disable_minusqty with a stock below 0 that an update after it lifts",
    {
      // The floor is turned on after the last list (test/products.put.lists.lead-forms.test.ts).
      extra: () => ({ disable_minusqty: 1 }),
      body: (c) => ({ variant_id: c.v[1], stock: -1, variants: { update: [{ variant_id: c.v[1], adjust: 3 }] } }),
      status: 200,
      written: (p) => expect(p.variants.map((v: Json) => v.qty)).toEqual([0, 2, 2]),
      calls: 2,
    },
  ],
];

describe("rare one-item forms of a variant list", () => {
  beforeAll(async () => {
    const r = await post("/v1/products", { title: "Foreign", price: 1, sku: FOREIGN });
    expect(r.status, r.text).toBe(200);
    foreign.id = r.json.products[0].product_id;
  });

  it("leaves a count given twice without a list to the general plan (no variant list: not this path)", async () => {
    const made = await product(`${uid("N")}-`);
    const w = wrapD1();
    const r = await put(
      "/v1/products",
      { product_id: made.product_id, stock: 1, adjust: 1, variants: { add: [] } },
      { env: { DB: w.db } },
    );
    expect(r.status, r.text).toBe(400);
    expect(r.json.errors).toEqual(["adjust: give stock (the new count) or adjust (the change), not both"]);
    // The general plan's read: the products and their variants (no SKU or slug to look up).
    expect(w.counts.statementsPerCall).toEqual([2]);
  });

  it.each(forms)("%s", async (_name, form) => {
    await answers(form);
  });
});
