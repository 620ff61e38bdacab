import { describe, expect, it } from "vitest";
import { type Json, size } from "./fixtures/sizes";
import { asMade, expectPinned, foreignOwner, type Made, type Pinned, run } from "./fixtures/twins";
import { put, uid } from "./helpers";

// A sync whose entries name no options beside an add naming them. Entries that omit option names
// use the product's, and a product without options takes them from the first entry that names
// them (docs/products.md, "Updating products"; src/products/update/states.ts, listNames): where
// the product has none yet, the sync is matched with the add's names. The plan takes them
// (src/products/update/plan.ts), and a guard refuses the batch where the
// product has other names by then (variants-guards.ts, namesGuard); the read words a refusal from
// the plan's matches. Each case pins its status, errors in order, round trips and what each
// product keeps; a refused body writes nothing, each product answered is the stored one, and no
// item with a list reaches the general planner.

const FOREIGN = uid("FOREIGN");

/** The products given no variants (and so no option names). */
const emptied =
  (...which: number[]) =>
  async (made: Made[]) => {
    for (const i of which) {
      const r = await put("/v1/products", { product_id: made[i].id, variants: { sync: [] } });
      expect(r.status, r.text).toBe(200);
    }
  };

const written = (m: Made) => ({ product_id: m.id, variants: { update: [{ variant_id: m.v[0], qty: 7 }] } });

type Case = Pinned;

/** A's sync naming no options and add naming Size, a having no variants. */
const unnamed = (a: Made, add: Json[], sync: Json[] = [{ variant_option1_value: "h" }], more: Json = {}) => ({
  product_id: a.id,
  variants: { sync, add, ...more },
});

const namedByTheAdd: Case[] = [
  [
    "another product's SKU in the add",
    { count: 1, prepare: emptied(0), body: ([a]) => unnamed(a, [size("i", { sku: FOREIGN })]) },
    409,
    [`variants.add[0].sku: SKU ${FOREIGN} is already used by product <F>`],
    2,
    [[]],
  ],
  [
    "the add repeating the sync's combination",
    { count: 1, prepare: emptied(0), body: ([a]) => unnamed(a, [size("h")]) },
    409,
    ["variants.add[0]: option combination (h) already exists (variants.sync[0])"],
    2,
    [[]],
  ],
  [
    "the sync repeating a combination",
    {
      count: 1,
      prepare: emptied(0),
      body: ([a]) => unnamed(a, [size("i")], [{ variant_option1_value: "h" }, { variant_option1_value: "h" }]),
    },
    409,
    ["variants.sync[1]: option combination (h) is also used by variants.sync[0]"],
    2,
    [[]],
  ],
  [
    "a sync entry without the value",
    {
      count: 1,
      prepare: emptied(0),
      body: ([a]) => unnamed(a, [size("i")], [{ variant_option1_value: "h" }, { qty: 2 }]),
    },
    400,
    ['variants.sync[1].variant_option1_value: is required (option "Size")'],
    2,
    [[]],
  ],
  [
    "the sync's SKU taken by the add",
    {
      count: 1,
      prepare: emptied(0),
      body: ([a]) => unnamed(a, [size("i", { sku: `${a.p}x` })], [{ variant_option1_value: "h", sku: `${a.p}x` }]),
    },
    409,
    [
      "variants.add[0].sku: SKU <0>x already exists (variants.sync[0])",
      "variants.add[0].sku: SKU <0>x is also used by variants.sync[0].sku",
    ],
    2,
    [[]],
  ],
  [
    "an update of a variant the product no longer has",
    {
      count: 1,
      prepare: emptied(0),
      body: ([a]) => unnamed(a, [size("i")], undefined, { update: [{ variant_id: a.v[0], qty: 1 }] }),
    },
    404,
    ["variants.update[0].variant_id: variant <0.0> is not a variant of product <0>"],
    2,
    [[]],
  ],
  [
    "in rounds, beside an item written",
    {
      count: 2,
      prepare: emptied(0),
      body: ([a, b]) => [unnamed(a, [size("i", { sku: FOREIGN })]), written(b)],
    },
    200,
    [`[0].variants.add[0].sku: SKU ${FOREIGN} is already used by product <F>`],
    3,
    [[], asMade(1, 7)],
  ],
  ["accepted", { count: 1, prepare: emptied(0), body: ([a]) => unnamed(a, [size("i")]) }, 200, [], 1, [["h 0", "i 0"]]],
  [
    "accepted on a product with those names",
    { count: 1, body: ([a]) => unnamed(a, [size("xl")], [{ variant_option1_value: "s", sku: `${a.p}0` }]) },
    200,
    [],
    1,
    [["<0>0 s 0", "xl 0"]],
  ],
  [
    "on a product with other names",
    {
      count: 1,
      body: ([a]) =>
        unnamed(
          a,
          [{ variant_option1_name: "Colour", variant_option1_value: "red" }],
          [{ variant_option1_value: "s" }],
        ),
    },
    400,
    [
      "variants.add[0].variant_option1_name: option names differ from the product's (Size); rename options with variants.sync",
    ],
    2,
    [asMade(0)],
  ],
  [
    "in rounds, on a product with other names, beside an item written",
    {
      count: 2,
      body: ([a, b]) => [
        unnamed(
          a,
          [{ variant_option1_name: "Colour", variant_option1_value: "red" }],
          [{ variant_option1_value: "s" }],
        ),
        written(b),
      ],
    },
    200,
    [
      "[0].variants.add[0].variant_option1_name: option names differ from the product's (Size); rename options with variants.sync",
    ],
    3,
    [asMade(0), asMade(1, 7)],
  ],
];

/** Errors with the product that has FOREIGN shown as <F>. */
let shown = (errors: string[]) => errors;

describe("a sync naming no options beside an add naming them", () => {
  it("has the product that owns FOREIGN", async () => {
    shown = await foreignOwner(FOREIGN);
  });

  it.each(namedByTheAdd)("%s: pinned, by the one path", (...c) => expectPinned(c, shown));

  it("another product's SKU in the add: recorded under an Idempotency-Key and replayed", async () => {
    const [, twin, status] = namedByTheAdd[0];
    const key = uid("key");
    const first = await run({ ...twin, headers: { "idempotency-key": key } });
    expect(first.status).toBe(status);
    const again = await put("/v1/products", twin.body(first.made), { headers: { "idempotency-key": key } });
    expect([again.status, again.json]).toEqual([status, first.raw]);
  });

  it("checks the names of 2 items or 4 in the same statements", async () => {
    const statements = async (n: number) => {
      const r = await run({
        count: n,
        prepare: emptied(...Array.from({ length: n }, (_, i) => i)),
        body: (made) => made.map((m) => unnamed(m, [size("i")])),
      });
      // A read and a write, whatever the number of items.
      expect([r.status, r.calls], JSON.stringify(r.raw)).toEqual([200, 2]);
      return r.queries.map((q) => q.length);
    };
    expect(await statements(4)).toEqual(await statements(2));
  });
});
