import { beforeAll, describe, expect, it } from "vitest";
import { type Json, product, size } from "./fixtures/sizes";
import { get, post, put, uid } from "./helpers";

// The words of a refused PUT with variant lists, several refusals in one body: each error's text,
// their order and the status (the first error's), as the API answers them today (docs/products.md,
// "Updating products"). The random draws (test/products.variants.property.test.ts) hold that
// errors name the body's paths; these pin the words, in the order the checks run: the entries' own
// checks list by list, then those of what the lists leave (src/products/update/states.ts,
// finalChecks). Ids and SKUs are shown as <p> (the SKU prefix), <id> and <b>
// (the products), <v0>..<v2> and <w0>..<w2> (their variants), <FOREIGN> and <foreign> (another
// product's SKU and id).

const FOREIGN = uid("FOREIGN");
const foreign = { id: 0, slug: "" };

/** Two products of three sizes s, m, l (SKUs `${p}0`..`${p}2`, counts 0 to 2); the second's SKUs under `${p}b`. */
type Case = { id: number; v: number[]; p: string; b: number; w: number[] };
type Words = {
  /** The product's fields beside its sizes, from the SKU prefix. */
  extra?: (p: string) => Json;
  body: (c: Case) => Json | Json[];
  headers?: Record<string, string>;
  status: number;
  errors: string[];
};

const CASES: [string, Words][] = [
  [
    "a sync: an entry without values, another product's SKU, two entries of one combination",
    {
      body: (c) => ({
        product_id: c.id,
        variants: { sync: [{ qty: 1 }, size("s", { sku: FOREIGN }), size("m"), size("m")] },
      }),
      status: 400,
      errors: [
        'variants.sync[0].variant_option1_value: is required (option "Size")',
        "variants.sync[3]: same option values as variants.sync[2]",
        "variants.sync[1].sku: SKU <FOREIGN> is already used by product <foreign>",
      ],
    },
  ],
  [
    "a sync: two entries of one SKU, an extra value",
    {
      body: (c) => ({
        product_id: c.id,
        variants: { sync: [{ sku: `${c.p}0` }, { sku: `${c.p}0`, qty: 2 }, size("l", { variant_option2_value: "x" })] },
      }),
      status: 409,
      errors: [
        "variants.sync[1].sku: matches variant <v0> (SKU <p>0), already matched by variants.sync[0]",
        "variants.sync[2].variant_option2_value: the product has no option 2",
      ],
    },
  ],
  [
    "an add: a combination and a SKU the product has, another product's SKU, a combination twice",
    {
      body: (c) => ({
        product_id: c.id,
        variants: { add: [size("s"), size("xl", { sku: `${c.p}1` }), size("xxl", { sku: FOREIGN }), size("xl")] },
      }),
      status: 409,
      errors: [
        "variants.add[0]: option combination (s) already exists (variant <v0>)",
        "variants.add[1].sku: SKU <p>1 already exists (variant <v1>)",
        "variants.add[3]: option combination (xl) already exists (variants.add[1])",
        // The same SKU again, from the checks of what the lists leave, which run after the entries'.
        "variants.add[1].sku: SKU <p>1 is also used by variant <v1>",
        "variants.add[2].sku: SKU <FOREIGN> is already used by product <foreign>",
      ],
    },
  ],
  [
    "an update: an unknown variant, qty beside adjust, an expected count not stored",
    {
      body: (c) => ({
        product_id: c.id,
        variants: {
          update: [
            { variant_id: 2_000_000_000, qty: 1 },
            { variant_id: c.v[0], qty: 1, adjust: 1 },
            { variant_id: c.v[1], expected_qty: 9, qty: 3 },
          ],
        },
      }),
      status: 404,
      errors: [
        "variants.update[0].variant_id: variant 2000000000 is not a variant of product <id>",
        "variants.update[1].adjust: give qty (the new count) or adjust (the change), not both",
        "variants.update[2].expected_qty: variant <v1> has qty 1, not 9",
      ],
    },
  ],
  [
    "an update: a SKU and a combination another variant keeps",
    {
      body: (c) => ({
        product_id: c.id,
        variants: {
          update: [
            { variant_id: c.v[0], sku: `${c.p}1` },
            { variant_id: c.v[2], variant_option1_value: "m" },
          ],
        },
      }),
      status: 409,
      errors: [
        "variants.update[1]: option combination (m) is also used by variant <v1>",
        "variant <v1>: SKU <p>1 is also used by variants.update[0].sku",
      ],
    },
  ],
  [
    "disable_minusqty: a qty below 0 given, an adjust taking one below 0",
    {
      body: (c) => ({
        product_id: c.id,
        disable_minusqty: 1,
        variants: {
          update: [
            { variant_id: c.v[0], qty: -1 },
            { variant_id: c.v[1], adjust: -5 },
          ],
        },
      }),
      status: 400,
      errors: [
        "variants.update[0].qty: must not be negative while disable_minusqty is on",
        "variants.update[1].adjust: would take the qty of variant <v1> from 1 to -4; it cannot go below 0 while disable_minusqty is on",
      ],
    },
  ],
  [
    "disable_minusqty turned on over a stored qty below 0, beside another product's SKU",
    {
      extra: () => ({ variants: { add: [size("s", { qty: -3 })] } }),
      body: (c) => ({
        product_id: c.id,
        disable_minusqty: 1,
        variants: { add: [size("xl", { sku: FOREIGN })] },
      }),
      status: 409,
      errors: [
        "disable_minusqty: stock is negative for variant <v0>; set their stock first",
        "variants.add[0].sku: SKU <FOREIGN> is already used by product <foreign>",
      ],
    },
  ],
  [
    "option names that differ from the product's beside a refused update",
    {
      body: (c) => ({
        product_id: c.id,
        variants: {
          add: [{ variant_option1_name: "Colour", variant_option1_value: "red" }],
          update: [{ variant_id: 2_000_000_000, qty: 1 }],
        },
      }),
      status: 400,
      errors: [
        "variants.add[0].variant_option1_name: option names differ from the product's (Size); rename options with variants.sync",
      ],
    },
  ],
  [
    "three lists: an add repeating a variant the sync keeps, an update of one it deletes",
    {
      body: (c) => ({
        product_id: c.id,
        variants: { sync: [size("s"), size("l")], add: [size("s")], update: [{ variant_id: c.v[1], qty: 1 }] },
      }),
      status: 409,
      errors: [
        "variants.add[0]: option combination (s) already exists (variant <v0>)",
        "variants.update[0].variant_id: variant <v1> is not a variant of product <id>",
      ],
    },
  ],
  [
    "product fields beside the list: a taken slug and SKU, and a refused add",
    {
      body: (c) => ({ product_id: c.id, slug: foreign.slug, sku: FOREIGN, variants: { add: [size("s")] } }),
      status: 409,
      errors: ["slug: <foreign slug> is already used by product <foreign>"],
    },
  ],
  [
    "the product's own counts beside a list",
    {
      body: (c) => ({
        product_id: c.id,
        stock: 3,
        expected_qty: 0,
        variants: { update: [{ variant_id: c.v[0], qty: 1 }] },
      }),
      status: 400,
      errors: [
        "stock: the product has variants, whose qty is its stock: select a variant or use variants.update",
        "expected_qty: the product has variants, whose qty is its stock: select a variant or use variants.update",
      ],
    },
  ],
  [
    "a selected variant taking another variant's SKU, beside an add of a combination it has",
    {
      body: (c) => ({ variant_id: c.v[0], sku: `${c.p}1`, variants: { add: [size("s")] } }),
      status: 409,
      errors: [
        "variants.add[0]: option combination (s) already exists (variant <v0>)",
        "variant <v1>: SKU <p>1 is also used by sku",
      ],
    },
  ],
  // The product's own SKU taken by an entry: named as such where the body leaves it as stored (no
  // `sku`, or one that goes to the selected variant), by the body's `sku` where it gives it.
  [
    "an add taking the product's own SKU, the body giving no sku",
    {
      extra: (p) => ({ sku: `${p}own` }),
      body: (c) => ({ product_id: c.id, variants: { add: [size("xl", { sku: `${c.p}own` })] } }),
      status: 409,
      errors: ["variants.add[0].sku: SKU <p>own is the product's own SKU"],
    },
  ],
  [
    "an add taking the product's own SKU, the body giving it as sku",
    {
      extra: (p) => ({ sku: `${p}own` }),
      body: (c) => ({ product_id: c.id, sku: `${c.p}own`, variants: { add: [size("xl", { sku: `${c.p}own` })] } }),
      status: 409,
      errors: ["variants.add[0].sku: SKU <p>own is also used by sku"],
    },
  ],
  [
    "a selected variant given the product's own SKU, beside an add",
    {
      extra: (p) => ({ sku: `${p}own` }),
      body: (c) => ({ variant_id: c.v[0], sku: `${c.p}own`, variants: { add: [size("xl")] } }),
      status: 409,
      errors: ["sku: SKU <p>own is the product's own SKU"],
    },
  ],
  [
    "an If-Match of another version beside a refused list",
    {
      headers: { "if-match": '"0123456789abcdef"' },
      body: (c) => ({ product_id: c.id, variants: { add: [size("s")] } }),
      status: 412,
      errors: [
        "If-Match: product <id> changed since that ETag; products holds it as it is now, with its ETag in the ETag header",
      ],
    },
  ],
  [
    "two items claiming one new SKU, the second also refused by its list",
    {
      body: (c) => [
        { product_id: c.id, sku: `${c.p}new`, variants: { add: [size("xl")] } },
        { product_id: c.b, sku: `${c.p}new`, variants: { add: [size("s")] } },
      ],
      status: 200,
      errors: ["[1].variants.add[0]: option combination (s) already exists (variant <w0>)"],
    },
  ],
  [
    "two items refused, by their lists and a selection that finds nothing",
    {
      body: (c) => [
        { product_id: c.id, variants: { update: [{ variant_id: c.w[0], qty: 1 }] } },
        { sku: `${c.p}none`, variants: { add: [size("xl")] } },
      ],
      status: 404,
      errors: [
        "[0].variants.update[0].variant_id: variant <w0> is not a variant of product <id>",
        "[1].sku: no product or variant has SKU <p>none",
      ],
    },
  ],
];

beforeAll(async () => {
  const r = await post("/v1/products", { title: "Foreign", price: 1, sku: FOREIGN });
  expect(r.status, r.text).toBe(200);
  foreign.id = r.json.products[0].product_id;
  foreign.slug = r.json.products[0].slug;
});

/** The error as pinned: ids, the SKU prefix and the foreign product's named as the table does. */
function shown(e: string, c: Case) {
  const names: [string, string][] = [
    [`slug: ${foreign.slug} `, "slug: <foreign slug> "],
    [FOREIGN, "<FOREIGN>"],
    [`${c.p}b`, "<p>b"],
    [c.p, "<p>"],
    [`product ${c.id}`, "product <id>"],
    [`product ${c.b}`, "product <b>"],
    [`product ${foreign.id}`, "product <foreign>"],
    ...c.v.map((v, i): [string, string] => [`variant ${v}`, `variant <v${i}>`]),
    ...c.w.map((v, i): [string, string] => [`variant ${v}`, `variant <w${i}>`]),
  ];
  // Whole numbers only: variant 2 is not the start of variant 2000000000.
  const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const whole = (text: string) => `${escaped(text)}${/\d$/.test(text) ? "(?!\\d)" : ""}`;
  return names.reduce((t, [from, to]) => t.replace(new RegExp(whole(from), "g"), to), e);
}

describe("the words of refused PUTs with variant lists", () => {
  it.each(CASES)("%s", async (_, words) => {
    const p = `${uid("W")}-`;
    const [a, b] = [await product(p, words.extra?.(p) ?? {}), await product(`${p}b`)];
    const ids = (x: Json) => (x.variants as Json[]).map((v) => v.variant_id as number);
    const c: Case = { id: a.product_id, v: ids(a), p, b: b.product_id, w: ids(b) };
    const before = [(await get(`/v1/products/${c.id}`)).json, (await get(`/v1/products/${c.b}`)).json];
    const r = await put("/v1/products", words.body(c), { headers: words.headers });
    expect(r.json.errors.map((e: string) => shown(e, c))).toEqual(words.errors);
    expect(r.status, r.text).toBe(words.status);
    if (r.json.success === 0) {
      expect([(await get(`/v1/products/${c.id}`)).json, (await get(`/v1/products/${c.b}`)).json]).toEqual(before);
    }
  });
});
