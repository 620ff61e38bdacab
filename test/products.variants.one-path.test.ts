import { env } from "cloudflare:workers";
import fc from "fast-check";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { toJsPlan } from "../src/products/update/index";
import { watched } from "./fixtures/one-path";
import { type Json, product, size } from "./fixtures/sizes";
import { ifMatch, oneItem, owners, type Seeded, seed, severalItems } from "./fixtures/variant-bodies";
import { items, scenario } from "./fixtures/variant-draws";
import { get, post, put, uid } from "./helpers";

// One path per write (docs/design.md, "Writes"): an item carrying a variant list (a sync, even
// empty, or an add or update with entries) is planned in SQL, never by the general planner
// (src/products/update/plan.ts), which matches no lists. The planner's entry is watched
// (`toJsPlan`, src/products/update/index.ts): no item with a list reaches it, in one case per form
// that once did (each pinning its status and errors) and in the random bodies.

afterEach(() => {
  toJsPlan.watch = undefined;
});

const FOREIGN = uid("FOREIGN");
const paths = (n: number) => Array.from({ length: n }, (_, i) => [`Path ${i}`]);

/** Two products of three sizes (./fixtures/sizes.ts): `${p}0`..`${p}2`, counts 0 to 2; the second under `${p}b`. */
type Case = { id: number; v: number[]; p: string; b: { id: number; v: number[]; p: string } };
type Form = {
  extra?: Json;
  before?: (c: Case) => Promise<void>;
  body: (c: Case) => Json | Json[];
  /** Today's answer, which must not change when the form moves to the SQL plan (errors: none if not given). */
  status: number;
  errors?: (c: Case) => string[];
};

const slugless = (id: number) => env.DB.prepare("UPDATE products SET slug = NULL WHERE id = ?").bind(id).run();

// Each form by its smallest body (the inventory gives the code that hands it over).
const FORMS: [string, Form][] = [
  [
    "several items, one without a list",
    {
      body: (c) => [
        { product_id: c.id, title: "No list" },
        { product_id: c.b.id, variants: { update: [{ variant_id: c.b.v[0], qty: 1 }] } },
      ],
      status: 200,
    },
  ],
  [
    "a leading entry beside an empty sync",
    { body: (c) => ({ variant_id: c.v[0], price: 5, variants: { sync: [] } }), status: 200 },
  ],
  [
    "the product's own SKU selected with its stock beside an empty sync",
    {
      extra: { sku: "own" },
      body: (c) => ({ sku: `${c.p}own`, stock: 4, variants: { sync: [] } }),
      status: 200,
    },
  ],
  [
    "a leading expected count beside an update naming its variant",
    {
      body: (c) => ({ variant_id: c.v[1], expected_stock: 1, variants: { update: [{ variant_id: c.v[1], qty: 3 }] } }),
      status: 200,
    },
  ],
  [
    "a variant selected by SKU with an expected count beside an update of another variant",
    {
      body: (c) => ({ sku: `${c.p}1`, expected_stock: 1, variants: { update: [{ variant_id: c.v[2], qty: 3 }] } }),
      status: 200,
    },
  ],
  [
    "merged update entries refused as given, beside another list",
    {
      body: (c) => ({
        product_id: c.id,
        variants: {
          add: [size("xl")],
          update: [
            { variant_id: c.v[0], qty: 1, adjust: 1 },
            { variant_id: c.v[0], price: 3 },
          ],
        },
      }),
      status: 400,
      errors: () => ["variants.update[0].adjust: give qty (the new count) or adjust (the change), not both"],
    },
  ],
  [
    "categories past the bound given beside a list",
    {
      extra: { categories: paths(20) },
      body: (c) => ({
        product_id: c.id,
        categories: paths(20),
        headcategory_name: "New",
        variants: { update: [{ variant_id: c.v[0], qty: 1 }] },
      }),
      status: 400,
      errors: () => ["headcategory_name: the product would be in more than 20 category paths"],
    },
  ],
  [
    "a variant id that finds nothing",
    {
      body: () => ({ variant_id: 2_000_000_000, variants: { update: [{ variant_id: 2_000_000_000, qty: 1 }] } }),
      status: 404,
      errors: () => ["variant_id: variant 2000000000 not found"],
    },
  ],
  [
    "a SKU that finds nothing",
    {
      body: (c) => ({ sku: `${c.p}none`, variants: { sync: [size("s")] } }),
      status: 404,
      errors: (c) => [`sku: no product or variant has SKU ${c.p}none`],
    },
  ],
  [
    "a leading count below 0 under disable_minusqty that a list after lifts",
    {
      extra: { disable_minusqty: 1 },
      body: (c) => ({ variant_id: c.v[1], stock: -1, variants: { update: [{ variant_id: c.v[1], adjust: 3 }] } }),
      status: 200,
    },
  ],
  [
    "a leading entry taking a SKU the sync after it deletes",
    { body: (c) => ({ variant_id: c.v[0], sku: `${c.p}1`, variants: { sync: [size("s"), size("l")] } }), status: 200 },
  ],
  [
    "a variant selected by variant_id and product_id",
    {
      body: (c) => ({
        product_id: c.id,
        variant_id: c.v[0],
        price: 5,
        variants: { update: [{ variant_id: c.v[1], qty: 4 }] },
      }),
      status: 200,
    },
  ],
  [
    "no selector",
    {
      body: (c) => ({ title: "Nobody", variants: { update: [{ variant_id: c.v[1], qty: 4 }] } }),
      status: 400,
      errors: () => ["product_id: give variant_id, product_id or sku to select the product to update"],
    },
  ],
  [
    "in rounds, every selection finds nothing",
    {
      body: (c) => [
        { variant_id: 2_000_000_000, variants: { update: [{ variant_id: 2_000_000_000, qty: 1 }] } },
        { sku: `${c.p}none`, variants: { add: [size("xl")] } },
      ],
      status: 404,
      errors: (c) => [
        "[0].variant_id: variant 2000000000 not found",
        `[1].sku: no product or variant has SKU ${c.p}none`,
      ],
    },
  ],
  [
    "in rounds, a refused round with an update naming a variant twice",
    {
      body: (c) => [
        {
          product_id: c.id,
          variants: {
            update: [
              { variant_id: c.v[0], qty: 1 },
              { variant_id: c.v[0], price: 2 },
              { variant_id: c.v[1], sku: FOREIGN },
            ],
          },
        },
        { product_id: c.b.id, variants: { update: [{ variant_id: c.b.v[0], qty: 1 }] } },
      ],
      status: 200,
      errors: () => [`[0].variants.update[2].sku: SKU ${FOREIGN} is already used by product ${foreign.id}`],
    },
  ],
  [
    "in rounds, a product without a slug",
    {
      before: (c) => slugless(c.id).then(() => undefined),
      body: (c) => [
        { product_id: c.id, variants: { update: [{ variant_id: c.v[0], qty: 1 }] } },
        { product_id: c.b.id, variants: { update: [{ variant_id: c.b.v[0], qty: 1 }] } },
      ],
      status: 200,
    },
  ],
  [
    "in rounds, a refused round with a leading entry",
    {
      body: (c) => [
        { variant_id: c.v[0], price: 5, variants: { update: [{ variant_id: c.v[1], sku: FOREIGN }] } },
        { product_id: c.b.id, variants: { update: [{ variant_id: c.b.v[0], qty: 1 }] } },
      ],
      status: 200,
      errors: () => [`[0].variants.update[0].sku: SKU ${FOREIGN} is already used by product ${foreign.id}`],
    },
  ],
  [
    "in rounds, a head category merged past the bound",
    {
      extra: { categories: paths(20) },
      body: (c) => [
        { product_id: c.id, headcategory_name: "New", variants: { update: [{ variant_id: c.v[0], qty: 1 }] } },
        { product_id: c.b.id, variants: { update: [{ variant_id: c.b.v[0], qty: 1 }] } },
      ],
      status: 200,
      errors: () => ["[0].headcategory_name: the product would be in more than 20 category paths"],
    },
  ],
  [
    "in rounds, an update naming a variant twice refused as given",
    {
      body: (c) => [
        {
          product_id: c.id,
          variants: {
            update: [
              { variant_id: c.v[0], qty: 1, adjust: 1 },
              { variant_id: c.v[0], price: 2 },
            ],
          },
        },
        { product_id: c.b.id, variants: { update: [{ variant_id: c.b.v[0], qty: 1 }] } },
      ],
      status: 200,
      errors: () => ["[0].variants.update[0].adjust: give qty (the new count) or adjust (the change), not both"],
    },
  ],
  [
    "in rounds, a leading entry refused as it is",
    {
      body: (c) => [
        { variant_id: c.v[0], stock: 1, adjust: 1, variants: { update: [{ variant_id: c.v[1], qty: 2 }] } },
        { product_id: c.b.id, variants: { update: [{ variant_id: c.b.v[0], qty: 1 }] } },
      ],
      status: 200,
      errors: () => ["[0].adjust: give stock (the new count) or adjust (the change), not both"],
    },
  ],
  [
    "in rounds, an update after an empty sync",
    {
      body: (c) => [
        { product_id: c.id, variants: { sync: [], update: [{ variant_id: c.v[0], qty: 1 }] } },
        { product_id: c.b.id, variants: { update: [{ variant_id: c.b.v[0], qty: 1 }] } },
      ],
      status: 200,
      errors: (c) => [`[0].variants.update[0].variant_id: variant ${c.v[0]} is not a variant of product ${c.id}`],
    },
  ],
  [
    "a sync without option names beside an add naming them, refused, on a product without variants",
    {
      before: async (c) => {
        const r = await put("/v1/products", { product_id: c.id, variants: { sync: [] } });
        expect(r.status, r.text).toBe(200);
      },
      body: (c) => ({
        product_id: c.id,
        variants: {
          sync: [{ variant_option1_value: "h" }],
          add: [{ variant_option1_name: "Size", variant_option1_value: "i", sku: FOREIGN }],
        },
      }),
      status: 409,
      errors: () => [`variants.add[0].sku: SKU ${FOREIGN} is already used by product ${foreign.id}`],
    },
  ],
];

/** The product that has FOREIGN. */
const foreign = { id: 0 };

beforeAll(async () => {
  const r = await post("/v1/products", { title: "Foreign", price: 1, sku: FOREIGN });
  expect(r.status, r.text).toBe(200);
  foreign.id = r.json.products[0].product_id;
});

async function caseOf(form: Form): Promise<Case> {
  const p = `${uid("F")}-`;
  const extra = form.extra?.sku ? { ...form.extra, sku: `${p}${form.extra.sku}` } : (form.extra ?? {});
  const [a, b] = [await product(p, extra), await product(`${p}b`)];
  const ids = (x: Json) => (x.variants as Json[]).map((v) => v.variant_id as number);
  return { id: a.product_id, v: ids(a), p, b: { id: b.product_id, v: ids(b), p: `${p}b` } };
}

describe("items with variant lists take the SQL plan", () => {
  it.each(FORMS)("%s", async (_name, form) => {
    const c = await caseOf(form);
    await form.before?.(c);
    const [r, seen] = await watched(() => put("/v1/products", form.body(c)));
    expect(r.status, r.text).toBe(form.status);
    expect(r.json.errors).toEqual(form.errors?.(c) ?? []);
    // What was written is answered as stored.
    for (const p of r.json.products) expect(p).toEqual((await get(`/v1/products/${p.product_id}`)).json);
    expect(seen, "reaches the general planner").toEqual([]);
  });
});

describe("the random bodies of test/fixtures/variant-bodies.ts take the SQL plan", () => {
  beforeEach(() => {
    toJsPlan.watch = undefined;
  });

  it("one item: none reaches the general planner", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const prefix = `${uid("P")}-`;
        const seeded = await seed(s, prefix);
        const body = oneItem(s, prefix, seeded, FOREIGN);
        const headers = await ifMatch(s, seeded.id);
        const [r, seen] = await watched(() => put("/v1/products", body, { headers }));
        expect(r.status, r.text).toBeLessThan(500);
        expect(seen, JSON.stringify(body)).toEqual([]);
      }),
      { numRuns: 100 },
    );
  }, 120_000);

  it("several items: none reaches the general planner", async () => {
    await fc.assert(
      fc.asyncProperty(items, async (drawn) => {
        const base = `${uid("S")}-`;
        const owner = owners(drawn);
        const seeded = new Map<number, Seeded>();
        for (const j of new Set(owner)) seeded.set(j, await seed(drawn[j].s, `${base}${j}-`));
        const body = severalItems(drawn, base, (o) => seeded.get(o) as Seeded, FOREIGN);
        const [r, seen] = await watched(() => put("/v1/products", body));
        expect(r.status, r.text).toBeLessThan(500);
        expect(seen, JSON.stringify(body)).toEqual([]);
      }),
      { numRuns: 40 },
    );
  }, 120_000);
});
