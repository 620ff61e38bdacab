import { beforeAll, describe, expect, it } from "vitest";
import { answers, type Form } from "./fixtures/forms";
import { size } from "./fixtures/sizes";
import { post, uid } from "./helpers";

// One-item bodies refused whatever is stored (src/products/update/plan.ts)
// beside several lists, which the plan words from one read (src/products/update/plan.ts):
// update entries naming a variant twice, refused as given, beside another list (the lists travel
// as given, the read runs the plan of the first); category paths given past the bound (a head
// category placed among them) beside a list. Each pins its answer and round trips (./fixtures/forms.ts).

const twenty = Array.from({ length: 20 }, (_, i) => [`Path ${i}`]);
/** A product whose slug the cases name (made before they run). */
const other = { slug: uid("other").toLowerCase(), id: 0 };

const merged: [string, Form][] = [
  [
    "after a sync, an update naming a variant twice with qty and adjust",
    {
      body: (c) => ({
        product_id: c.id,
        variants: {
          sync: [size("s"), size("m")],
          update: [
            { variant_id: c.v[0], qty: 1, adjust: 2 },
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
    "after an add, an update naming a variant twice passing the largest count",
    {
      body: (c) => ({
        product_id: c.id,
        variants: {
          add: [size("xl")],
          update: [
            { variant_id: c.v[1], qty: 999_999_999 },
            { variant_id: c.v[1], adjust: 5 },
          ],
        },
      }),
      status: 400,
      errors: () => ["variants.update[1].adjust: would take qty to 1000000004, past 1000000000"],
      calls: 1,
    },
  ],
  [
    "after a selected variant's fields, an update naming a variant twice with qty and adjust",
    {
      body: (c) => ({
        variant_id: c.v[2],
        price: 9,
        variants: {
          update: [
            { variant_id: c.v[0], adjust: 1 },
            { variant_id: c.v[0], qty: 2, adjust: 1 },
          ],
        },
      }),
      status: 400,
      errors: () => ["variants.update[1].adjust: give qty (the new count) or adjust (the change), not both"],
      calls: 2,
    },
  ],
  [
    "after a sync whose entries repeat a combination, an update naming a variant twice",
    {
      body: (c) => ({
        product_id: c.id,
        variants: {
          sync: [size("s"), size("s")],
          update: [
            { variant_id: c.v[0], qty: 1, adjust: 1 },
            { variant_id: c.v[0], price: 1 },
          ],
        },
      }),
      status: 409,
      errors: () => [
        "variants.sync[1]: same option values as variants.sync[0]",
        "variants.update[0].adjust: give qty (the new count) or adjust (the change), not both",
      ],
      calls: 1,
    },
  ],
  [
    "after a sync deleting it, an update naming a variant twice",
    {
      body: (c) => ({
        product_id: c.id,
        variants: {
          sync: [size("s")],
          update: [
            { variant_id: c.v[1], qty: 1, adjust: 1 },
            { variant_id: c.v[1], price: 2 },
          ],
        },
      }),
      status: 404,
      errors: (c) => [
        `variants.update[0].variant_id: variant ${c.v[1]} is not a variant of product ${c.id}`,
        `variants.update[1].variant_id: variant ${c.v[1]} is not a variant of product ${c.id}`,
      ],
      calls: 1,
    },
  ],
];

const paths: [string, Form][] = [
  [
    "paths given with a head category past the bound, beside an update",
    {
      body: (c) => ({
        product_id: c.id,
        categories: twenty,
        headcategory_name: "New",
        variants: { update: [{ variant_id: c.v[0], qty: 3 }] },
      }),
      status: 400,
      errors: () => ["headcategory_name: the product would be in more than 20 category paths"],
      calls: 1,
    },
  ],
  [
    "paths given past the bound beside a selected variant's fields and a sync",
    {
      body: (c) => ({
        variant_id: c.v[1],
        categories: twenty,
        headcategory_name: "New",
        stock: 2,
        variants: { sync: [size("s")] },
      }),
      status: 400,
      errors: () => ["headcategory_name: the product would be in more than 20 category paths"],
      calls: 2,
    },
  ],
  [
    "paths given past the bound beside another product's slug and an add",
    {
      body: (c) => ({
        product_id: c.id,
        categories: twenty,
        headcategory_name: "New",
        slug: other.slug,
        variants: { add: [size("xl")] },
      }),
      status: 400,
      errors: () => [
        "headcategory_name: the product would be in more than 20 category paths",
        `slug: ${other.slug} is already used by product ${other.id}`,
      ],
      calls: 1,
    },
  ],
  [
    "paths given past the bound beside entries that disagree on option names",
    {
      body: (c) => ({
        product_id: c.id,
        categories: twenty,
        headcategory_name: "New",
        variants: { sync: [size("s"), { variant_option1_name: "Colour", variant_option1_value: "red" }] },
      }),
      status: 400,
      errors: () => [
        "headcategory_name: the product would be in more than 20 category paths",
        "variants.sync[1].variant_option1_name: option names differ from those of variants.sync[0]",
      ],
      calls: 1,
    },
  ],
];

describe("refusals as given beside lists, by the one path", () => {
  beforeAll(async () => {
    const r = await post("/v1/products", { title: "Other", price: 1, slug: other.slug });
    expect(r.status, r.text).toBe(200);
    other.id = r.json.products[0].product_id;
  });

  describe.each([
    ["merged update entries refused beside another list", merged],
    ["paths past the bound beside a list", paths],
  ])("%s", (_kind, forms) => {
    it.each(forms)("%s", async (_name, form) => {
      await answers(form);
    });
  });
});
