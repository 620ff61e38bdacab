import { describe, expect, it } from "vitest";
import { type Json, product, size } from "./fixtures/sizes";
import { answered, type Made } from "./fixtures/twins";
import { get, put, uid } from "./helpers";

// A variant selected by variant_id and given a SKU another variant of its product has, beside
// lists that free it (a sync deleting that variant, an update renaming it). The lists apply to the
// variants as the leading entry leaves them (two with that SKU; a sync naming it matches the later
// in the product's order) and SKUs are checked only on what the last list leaves, as for any swap
// within one request (docs/products.md, "Updating products"): freed, 200; still twice, 409 naming
// the later holder. Each body pins its status, errors and the SKUs left; the plan writes it
// (src/products/update/plan.ts) in the batch after the selection's read.
// The products are ./fixtures/sizes.ts's: s, m, l with SKUs <0>0 to <0>2 (here `p0`..`p2`).

/** The variants of product `i` as the twins' runs show them: [size, SKU, qty]. */
const left = (after: Json[], i = 0) => after[i].variants.map((v: Json) => [v.variant_option1_value, v.sku, v.qty]);

type Lead = [string, (a: Made) => Json, number, string[], (string | number | null)[][]];

// v[0] is s (<0>0, qty 0), v[1] m (<0>1, qty 1), v[2] l (<0>2, qty 2), in that order.
const LEADS: Lead[] = [
  [
    "the holder after the selected variant, deleted by the sync",
    (a) => ({ variant_id: a.v[0], sku: `${a.p}1`, variants: { sync: [size("s"), size("l")] } }),
    200,
    [],
    [
      ["s", "<0>1", 0],
      ["l", "<0>2", 2],
    ],
  ],
  [
    "the holder before the selected variant, deleted by the sync",
    (a) => ({ variant_id: a.v[1], sku: `${a.p}0`, variants: { sync: [size("m"), size("l")] } }),
    200,
    [],
    [
      ["m", "<0>0", 1],
      ["l", "<0>2", 2],
    ],
  ],
  [
    "a sync naming the SKU matches the later of the two (the holder)",
    (a) => ({ variant_id: a.v[0], sku: `${a.p}1`, variants: { sync: [{ sku: `${a.p}1`, qty: 7 }, size("l")] } }),
    200,
    [],
    [
      ["m", "<0>1", 7],
      ["l", "<0>2", 2],
    ],
  ],
  [
    "a sync naming the SKU matches the later of the two (the selected variant)",
    (a) => ({ variant_id: a.v[1], sku: `${a.p}0`, variants: { sync: [{ sku: `${a.p}0`, qty: 7 }, size("l")] } }),
    200,
    [],
    [
      ["m", "<0>0", 7],
      ["l", "<0>2", 2],
    ],
  ],
  [
    "a sync naming the selected variant's old SKU makes a new variant",
    (a) => ({ variant_id: a.v[0], sku: `${a.p}1`, variants: { sync: [size("xl", { sku: `${a.p}0` }), size("l")] } }),
    200,
    [],
    [
      ["xl", "<0>0", 0],
      ["l", "<0>2", 2],
    ],
  ],
  [
    "a sync deleting the selected variant (the holder keeps the SKU)",
    (a) => ({ variant_id: a.v[0], sku: `${a.p}1`, variants: { sync: [size("m"), size("l")] } }),
    200,
    [],
    [
      ["m", "<0>1", 1],
      ["l", "<0>2", 2],
    ],
  ],
  [
    "a sync deleting the selected variant, the holder before it",
    (a) => ({ variant_id: a.v[1], sku: `${a.p}0`, variants: { sync: [size("s"), size("l")] } }),
    200,
    [],
    [
      ["s", "<0>0", 0],
      ["l", "<0>2", 2],
    ],
  ],
  [
    "an empty sync after the leading entry",
    (a) => ({ variant_id: a.v[0], sku: `${a.p}1`, price: 5, variants: { sync: [] } }),
    200,
    [],
    [],
  ],
  [
    "a sync keeping both: refused",
    (a) => ({ variant_id: a.v[0], sku: `${a.p}1`, variants: { sync: [size("s"), size("m"), size("l")] } }),
    409,
    ["variant <0.1>: SKU <0>1 is also used by sku"],
    [
      ["s", "<0>0", 0],
      ["m", "<0>1", 1],
      ["l", "<0>2", 2],
    ],
  ],
  [
    "an update renaming the holder after the selected variant",
    (a) => ({ variant_id: a.v[0], sku: `${a.p}1`, variants: { update: [{ variant_id: a.v[1], sku: `${a.p}x` }] } }),
    200,
    [],
    [
      ["s", "<0>1", 0],
      ["m", "<0>x", 1],
      ["l", "<0>2", 2],
    ],
  ],
  [
    "an update renaming the holder before the selected variant",
    (a) => ({ variant_id: a.v[1], sku: `${a.p}0`, variants: { update: [{ variant_id: a.v[0], sku: `${a.p}x` }] } }),
    200,
    [],
    [
      ["s", "<0>x", 0],
      ["m", "<0>0", 1],
      ["l", "<0>2", 2],
    ],
  ],
  [
    "an update clearing the holder's SKU",
    (a) => ({ variant_id: a.v[1], sku: `${a.p}0`, variants: { update: [{ variant_id: a.v[0], sku: null }] } }),
    200,
    [],
    [
      ["s", null, 0],
      ["m", "<0>0", 1],
      ["l", "<0>2", 2],
    ],
  ],
  [
    "an update giving the selected variant another SKU wins",
    (a) => ({ variant_id: a.v[0], sku: `${a.p}1`, variants: { update: [{ variant_id: a.v[0], sku: `${a.p}y` }] } }),
    200,
    [],
    [
      ["s", "<0>y", 0],
      ["m", "<0>1", 1],
      ["l", "<0>2", 2],
    ],
  ],
  [
    "an update giving the selected variant another SKU wins, the holder before it",
    (a) => ({ variant_id: a.v[1], sku: `${a.p}0`, variants: { update: [{ variant_id: a.v[1], sku: `${a.p}y` }] } }),
    200,
    [],
    [
      ["s", "<0>0", 0],
      ["m", "<0>y", 1],
      ["l", "<0>2", 2],
    ],
  ],
  [
    "an update giving the holder the SKU again: refused",
    (a) => ({ variant_id: a.v[0], sku: `${a.p}1`, variants: { update: [{ variant_id: a.v[1], sku: `${a.p}1` }] } }),
    409,
    ["variants.update[0].sku: SKU <0>1 is also used by sku"],
    [
      ["s", "<0>0", 0],
      ["m", "<0>1", 1],
      ["l", "<0>2", 2],
    ],
  ],
  [
    "an add naming the SKU after a sync freed it: refused",
    (a) => ({
      variant_id: a.v[0],
      sku: `${a.p}1`,
      variants: { sync: [size("s"), size("l")], add: [size("xl", { sku: `${a.p}1` })] },
    }),
    409,
    [
      "variants.add[0].sku: SKU <0>1 already exists (variant <0.0>)",
      "variants.add[0].sku: SKU <0>1 is also used by sku",
    ],
    [
      ["s", "<0>0", 0],
      ["m", "<0>1", 1],
      ["l", "<0>2", 2],
    ],
  ],
  [
    "a sync, then an update renaming the selected variant",
    (a) => ({
      variant_id: a.v[0],
      sku: `${a.p}1`,
      variants: { sync: [size("s"), size("m"), size("l")], update: [{ variant_id: a.v[0], sku: `${a.p}z` }] },
    }),
    200,
    [],
    [
      ["s", "<0>z", 0],
      ["m", "<0>1", 1],
      ["l", "<0>2", 2],
    ],
  ],
];

describe("a selected variant given a SKU a list after it frees or keeps", () => {
  it.each(LEADS)("%s", async (_, body, status, errors, skus) => {
    const sql = await answered({ count: 1, body: ([a]) => body(a) });
    expect(sql.status, JSON.stringify(sql.raw)).toBe(status);
    expect(sql.json.errors ?? []).toEqual(errors);
    expect(left(sql.after)).toEqual(skus);
    // The read and one batch; a refusal, the read alone.
    expect(sql.calls).toBe(status === 200 ? 2 : 1);
  });

  it.each(LEADS.filter(([, , status]) => status === 200))(
    "%s, in a round of two",
    async (_, body, status, errors, skus) => {
      // Two products alike, each item leading on its own.
      const sql = await answered({ count: 2, body: ([a, b]) => [body(a), body(b)] });
      expect(sql.status, JSON.stringify(sql.raw)).toBe(status);
      expect(sql.json.errors ?? []).toEqual(errors);
      expect(left(sql.after, 0)).toEqual(skus);
      expect(JSON.stringify(left(sql.after, 1))).toBe(JSON.stringify(skus).replaceAll("<0>", "<1>"));
    },
  );
});

type Other = [string, (made: Made[]) => Json | Json[], number, string[], (string | number | null)[][][]];

const keep = (a: Made) => ({ update: [{ variant_id: a.v[1], qty: 5 }] });
const sizes = [
  ["s", "<1>0", 0],
  ["m", "<1>1", 1],
  ["l", "<1>2", 2],
];

// A SKU of another product as the batch begins: refused where the selected variant keeps it, even
// when another item of the round frees it, since a SKU one item frees cannot be taken by another
// product in the same request (docs/products.md, "Decisions beyond the modelled API").
const OTHERS: Other[] = [
  [
    "another product's SKU, the selected variant deleted by the sync",
    ([a, b]) => ({ variant_id: a.v[0], sku: `${b.p}0`, variants: { sync: [size("m"), size("l")] } }),
    200,
    [],
    [
      [
        ["m", "<0>1", 1],
        ["l", "<0>2", 2],
      ],
      sizes,
    ],
  ],
  [
    "another product's SKU, the selected variant given another by an update",
    ([a, b]) => ({
      variant_id: a.v[0],
      sku: `${b.p}0`,
      variants: { update: [{ variant_id: a.v[0], sku: `${a.p}y` }] },
    }),
    200,
    [],
    [
      [
        ["s", "<0>y", 0],
        ["m", "<0>1", 1],
        ["l", "<0>2", 2],
      ],
      sizes,
    ],
  ],
  [
    "another product's SKU kept: refused",
    ([a, b]) => ({ variant_id: a.v[0], sku: `${b.p}0`, variants: keep(a) }),
    409,
    ["sku: SKU <1>0 is already used by product <1>"],
    [
      [
        ["s", "<0>0", 0],
        ["m", "<0>1", 1],
        ["l", "<0>2", 2],
      ],
      sizes,
    ],
  ],
  [
    "in a round, another product's SKU the selected variant keeps, which the item after frees: refused",
    ([a, b]) => [
      { variant_id: a.v[0], sku: `${b.p}0`, variants: keep(a) },
      { product_id: b.id, variants: { update: [{ variant_id: b.v[0], sku: `${b.p}x` }] } },
    ],
    200,
    ["[0].sku: SKU <1>0 is already used by product <1>"],
    [
      [
        ["s", "<0>0", 0],
        ["m", "<0>1", 1],
        ["l", "<0>2", 2],
      ],
      [
        ["s", "<1>x", 0],
        ["m", "<1>1", 1],
        ["l", "<1>2", 2],
      ],
    ],
  ],
  [
    "in a round, another product's SKU, the selected variant deleted by the sync",
    ([a, b]) => [
      { variant_id: a.v[0], sku: `${b.p}0`, variants: { sync: [size("m"), size("l")] } },
      { product_id: b.id, variants: { update: [{ variant_id: b.v[1], qty: 4 }] } },
    ],
    200,
    [],
    [
      [
        ["m", "<0>1", 1],
        ["l", "<0>2", 2],
      ],
      [
        ["s", "<1>0", 0],
        ["m", "<1>1", 4],
        ["l", "<1>2", 2],
      ],
    ],
  ],
  [
    "in a round, an item before claims the SKU, the selected variant deleted by the sync",
    ([a, b]) => [claim(a, b), { variant_id: a.v[0], sku: `${a.p}new`, variants: { sync: [size("m"), size("l")] } }],
    200,
    [],
    [
      [
        ["m", "<0>1", 1],
        ["l", "<0>2", 2],
      ],
      [...sizes, ["xl", "<0>new", 0]],
    ],
  ],
  [
    "in a round, an item after claims the SKU, the selected variant deleted by the sync",
    ([a, b]) => [{ variant_id: a.v[0], sku: `${a.p}new`, variants: { sync: [size("m"), size("l")] } }, claim(a, b)],
    200,
    [],
    [
      [
        ["m", "<0>1", 1],
        ["l", "<0>2", 2],
      ],
      [...sizes, ["xl", "<0>new", 0]],
    ],
  ],
  [
    "in a round, an item before claims the SKU the selected variant keeps: the later refused",
    ([a, b]) => [claim(a, b), { variant_id: a.v[0], sku: `${a.p}new`, variants: keep(a) }],
    200,
    ["[1].sku: SKU <0>new is also claimed by item [0] of this request"],
    [
      [
        ["s", "<0>0", 0],
        ["m", "<0>1", 1],
        ["l", "<0>2", 2],
      ],
      [...sizes, ["xl", "<0>new", 0]],
    ],
  ],
  [
    "in a round, an item after claims the SKU the selected variant keeps: the later refused",
    ([a, b]) => [{ variant_id: a.v[0], sku: `${a.p}new`, variants: keep(a) }, claim(a, b)],
    200,
    ["[1].variants.add[0].sku: SKU <0>new is also claimed by item [0] of this request"],
    [
      [
        ["s", "<0>new", 0],
        ["m", "<0>1", 5],
        ["l", "<0>2", 2],
      ],
      sizes,
    ],
  ],
];

/** An item of product b adding a variant with a SKU under a's prefix, new to the catalog. */
const claim = (a: Made, b: Made) => ({ product_id: b.id, variants: { add: [size("xl", { sku: `${a.p}new` })] } });

describe("a selected variant given another product's SKU", () => {
  it.each(OTHERS)("%s", async (_, body, status, errors, skus) => {
    const sql = await answered({ count: 2, body });
    expect(sql.status, JSON.stringify(sql.raw)).toBe(status);
    expect(sql.json.errors ?? []).toEqual(errors);
    expect([left(sql.after, 0), left(sql.after, 1)]).toEqual(skus);
  });
});

describe("written with an If-Match", () => {
  it("answers the ETag the product is left with", async () => {
    const p = `${uid("LK")}-`;
    const made = await product(p);
    const v = (made.variants as Json[]).map((x) => x.variant_id as number);
    const etag = String((await get(`/v1/products/${made.product_id}`)).headers.get("etag"));
    const r = await put(
      "/v1/products",
      { variant_id: v[0], sku: `${p}1`, variants: { sync: [size("s"), size("l")] } },
      { headers: { "if-match": etag } },
    );
    expect(r.status, r.text).toBe(200);
    const g = await get(`/v1/products/${made.product_id}`);
    expect(r.headers.get("etag")).toBe(g.headers.get("etag"));
    expect(g.json.variants.map((x: Json) => x.sku)).toEqual([`${p}1`, `${p}2`]);
  });
});
