import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { size } from "./fixtures/sizes";
import { asMade, expectPinned, foreignOwner, type Made, type Pinned, run } from "./fixtures/twins";
import { put, uid } from "./helpers";

// Items of several with variant lists, one giving a head category that merged into its product's
// stored paths passes the bound: that item is refused (400, naming headcategory_name) and the
// others are written, as each item of an array fails on its own (docs/products.md, "Updating
// products"). The rounds' read (src/products/update/plan.ts) words the refusal
// (src/products/update/plan.ts) as one item's is. Each case pins its status,
// errors in order, round trips and what each product keeps; a refused body writes nothing, each
// product answered is the stored one, and no item with a list reaches the general planner.

const FOREIGN = uid("FOREIGN");
const paths = (n: number) => Array.from({ length: n }, (_, i) => [`Path ${i}`]);

/** The products given (by their place) 20 category paths, the bound. */
const bounded =
  (...which: number[]) =>
  async (made: Made[]) => {
    for (const i of which) {
      const r = await put("/v1/products", { product_id: made[i].id, categories: paths(20) });
      expect(r.status, r.text).toBe(200);
    }
  };
const slugless = (i: number) => async (made: Made[]) => {
  await env.DB.prepare("UPDATE products SET slug = NULL WHERE id = ?").bind(made[i].id).run();
};

const update = (m: Made, qty = 4) => ({ update: [{ variant_id: m.v[1], qty }] });
const written = (m: Made) => ({ product_id: m.id, variants: { update: [{ variant_id: m.v[0], qty: 7 }] } });
const PAST = "headcategory_name: the product would be in more than 20 category paths";

type Case = Pinned;

const pastTheBound: Case[] = [
  [
    "by product id, beside an item written",
    {
      count: 2,
      prepare: bounded(0),
      body: ([a, b]) => [{ product_id: a.id, headcategory_name: "New", variants: update(a) }, written(b)],
    },
    200,
    [`[0].${PAST}`],
    3,
    [asMade(0), asMade(1, 7)],
  ],
  [
    "by variant id with its fields, beside an item written",
    {
      count: 2,
      prepare: bounded(0),
      body: ([a, b]) => [{ variant_id: a.v[0], price: 5, headcategory_name: "New", variants: update(a) }, written(b)],
    },
    200,
    [`[0].${PAST}`],
    3,
    [asMade(0), asMade(1, 7)],
  ],
  [
    "after an item written, its product without a slug",
    {
      count: 2,
      prepare: async (made) => {
        await bounded(1)(made);
        await slugless(1)(made);
      },
      body: ([a, b]) => [written(a), { product_id: b.id, headcategory_name: "New", variants: { add: [size("xl")] } }],
    },
    200,
    [`[1].${PAST}`],
    4,
    [asMade(0, 7), asMade(1)],
  ],
  [
    "every item",
    {
      count: 2,
      prepare: bounded(0, 1),
      body: ([a, b]) => [
        { product_id: a.id, headcategory_name: "New", variants: update(a) },
        { sku: `${b.p}0`, headcategory_name: "New", variants: { sync: [size("s")] } },
      ],
    },
    400,
    [`[0].${PAST}`, `[1].${PAST}`],
    2,
    [asMade(0), asMade(1)],
  ],
  [
    "then an item naming the product again",
    {
      count: 1,
      prepare: bounded(0),
      body: ([a]) => [
        { product_id: a.id, headcategory_name: "New", variants: update(a) },
        { product_id: a.id, headcategory_name: "Path 3", variants: update(a, 9) },
      ],
    },
    200,
    [`[0].${PAST}`],
    4,
    [asMade(0, 0, 9)],
  ],
  [
    "a head category among the stored paths (not past the bound)",
    {
      count: 2,
      prepare: bounded(0),
      body: ([a, b]) => [{ product_id: a.id, headcategory_name: "Path 7", variants: update(a) }, written(b)],
    },
    200,
    [],
    2,
    [asMade(0, 0, 4), asMade(1, 7)],
  ],
];

/** Errors with the product that has FOREIGN shown as <F>. */
let shown = (errors: string[]) => errors;

describe("in rounds, a head category merged into stored paths past the bound", () => {
  it("has the product that owns FOREIGN", async () => {
    shown = await foreignOwner(FOREIGN);
  });

  it.each(pastTheBound)("%s: pinned, by the one path", (...c) => expectPinned(c, shown));

  it("by product id, beside an item written: recorded under an Idempotency-Key and replayed", async () => {
    const [, twin, status] = pastTheBound[0];
    const key = uid("key");
    const first = await run({ ...twin, headers: { "idempotency-key": key } });
    expect(first.status).toBe(status);
    const again = await put("/v1/products", twin.body(first.made), { headers: { "idempotency-key": key } });
    expect([again.status, again.json]).toEqual([status, first.raw]);
  });
});
