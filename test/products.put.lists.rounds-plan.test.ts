import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { size } from "./fixtures/sizes";
import { answered, kept, type Made, run, type Twin } from "./fixtures/twins";
import { put, uid } from "./helpers";

// Bodies of several items with variant lists in the rarer forms a round must plan and word: a
// product without a slug yet, a selected variant's fields (a leading entry), an update naming a
// variant twice, an empty sync before another list. Each pins its status, errors, round trips and
// what it leaves stored (a refused item nothing; each product answered as stored,
// ./fixtures/twins.ts), answered by the plan's rounds, which word them from their read
// (src/products/update/plan.ts, `diagnoseRound`) and write a product without a slug again with
// the slug derived (src/products/update/plan.ts).

const slugless = (which: number[]) => async (made: Made[]) => {
  for (const i of which) await env.DB.prepare("UPDATE products SET slug = NULL WHERE id = ?").bind(made[i].id).run();
};

/** B's sync repeating a combination: refused. */
const refusedSync = (m: Made) => ({ product_id: m.id, variants: { sync: [size("s"), size("s")] } });
/** B's count of its first variant: written. */
const written = (m: Made, qty = 4) => ({ product_id: m.id, variants: { update: [{ variant_id: m.v[0], qty }] } });

const cases: [string, Omit<Twin, "count">, number, string[], number][] = [
  [
    "a product without a slug beside another item",
    {
      prepare: slugless([0]),
      body: ([a, b]) => [{ product_id: a.id, variants: { sync: [size("s", { qty: 5 }), size("m")] } }, written(b)],
    },
    200,
    [],
    3,
  ],
  [
    "two products without a slug, one of them refused",
    {
      prepare: slugless([0, 1]),
      body: ([a, b]) => [{ product_id: a.id, variants: { add: [size("xl")] } }, refusedSync(b)],
    },
    200,
    ["[1].variants.sync[1]: same option values as variants.sync[0]"],
    5,
  ],
  [
    "a product without a slug with a body refused as it is",
    {
      prepare: slugless([0]),
      body: ([a, b]) => [{ product_id: a.id, stock: 1, adjust: 2, variants: { add: [size("xl")] } }, written(b)],
    },
    200,
    ["[0].adjust: give stock (the new count) or adjust (the change), not both"],
    3,
  ],
  [
    "a product without a slug with a selected variant's fields",
    {
      prepare: slugless([0]),
      body: ([a, b]) => [{ variant_id: a.v[0], price: 5, variants: { add: [size("xl")] } }, written(b)],
    },
    200,
    [],
    4,
  ],
  [
    "a product without a slug with its own count beside a list",
    {
      prepare: slugless([0]),
      body: ([a, b]) => [{ product_id: a.id, stock: 3, variants: { add: [size("xl")] } }, written(b)],
    },
    200,
    ["[0].stock: the product has variants, whose qty is its stock: select a variant or use variants.update"],
    3,
  ],
  [
    "a product without a slug with a selected variant's fields and a list repeating a combination",
    {
      prepare: slugless([0]),
      body: ([a, b]) => [{ variant_id: a.v[0], price: 5, variants: { sync: [size("s"), size("s")] } }, written(b)],
    },
    200,
    ["[0].variants.sync[1]: same option values as variants.sync[0]"],
    6,
  ],
  [
    "a product without a slug, an update naming a variant twice",
    {
      prepare: slugless([1]),
      body: ([a, b]) => [
        written(a),
        {
          product_id: b.id,
          variants: {
            update: [
              { variant_id: b.v[0], qty: 1 },
              { variant_id: b.v[0], price: 7 },
            ],
          },
        },
      ],
    },
    200,
    [],
    3,
  ],
  [
    "a selected variant's fields and a list repeating a combination",
    { body: ([a, b]) => [{ variant_id: a.v[0], price: 5, variants: { sync: [size("s"), size("s")] } }, written(b)] },
    200,
    ["[0].variants.sync[1]: same option values as variants.sync[0]"],
    4,
  ],
  [
    "a selected variant's fields beside a refused item",
    {
      body: ([a, b]) => [
        { variant_id: a.v[0], price: 5, variants: { update: [{ variant_id: a.v[1], qty: 7 }] } },
        refusedSync(b),
      ],
    },
    200,
    ["[1].variants.sync[1]: same option values as variants.sync[0]"],
    4,
  ],
  [
    "a variant selected by SKU with fields, adding another product's SKU",
    {
      body: ([a, b]) => [{ sku: `${a.p}0`, price: 5, variants: { add: [size("xl", { sku: `${b.p}1` })] } }, written(b)],
    },
    200,
    ["[0].variants.add[0].sku: SKU <1>1 is already used by product <1>"],
    4,
  ],
  [
    "an update naming a variant twice beside a refused item",
    {
      body: ([a, b]) => [
        {
          product_id: a.id,
          variants: {
            update: [
              { variant_id: a.v[0], qty: 1 },
              { variant_id: a.v[0], price: 7 },
            ],
          },
        },
        refusedSync(b),
      ],
    },
    200,
    ["[1].variants.sync[1]: same option values as variants.sync[0]"],
    3,
  ],
  [
    "an update naming a variant twice and one of another product",
    {
      body: ([a, b]) => [
        {
          product_id: a.id,
          variants: {
            update: [
              { variant_id: a.v[0], qty: 1 },
              { variant_id: a.v[0], price: 7 },
              { variant_id: b.v[0], qty: 1 },
            ],
          },
        },
        written(b),
      ],
    },
    200,
    ["[0].variants.update[2].variant_id: variant <1.0> is not a variant of product <0>"],
    3,
  ],
  [
    "an update naming a variant twice with qty and adjust",
    {
      body: ([a, b]) => [
        {
          product_id: a.id,
          variants: {
            update: [
              { variant_id: a.v[0], qty: 1 },
              { variant_id: a.v[0], qty: 2, adjust: 1 },
            ],
          },
        },
        written(b),
      ],
    },
    200,
    ["[0].variants.update[1].adjust: give qty (the new count) or adjust (the change), not both"],
    2,
  ],
  [
    "an update after an empty sync",
    {
      body: ([a, b]) => [
        { product_id: a.id, variants: { sync: [], update: [{ variant_id: a.v[0], qty: 1 }] } },
        written(b),
      ],
    },
    200,
    ["[0].variants.update[0].variant_id: variant <0.0> is not a variant of product <0>"],
    2,
  ],
  [
    "an empty sync and an add repeating a combination",
    {
      body: ([a, b]) => [{ product_id: a.id, variants: { sync: [], add: [size("s"), size("s")] } }, written(b)],
    },
    200,
    ["[0].variants.add[1]: option combination (s) already exists (variants.add[0])"],
    3,
  ],
];

/** What each case leaves stored of both products (./fixtures/twins.ts, kept): their variants SKU, size and count. */
const STORED: Record<string, string[][]> = {
  "a product without a slug beside another item": [
    ["<0>0 s 5", "<0>1 m 1"],
    ["<1>0 s 4", "<1>1 m 1", "<1>2 l 2"],
  ],
  "two products without a slug, one of them refused": [
    ["<0>0 s 0", "<0>1 m 1", "<0>2 l 2", "xl 0"],
    ["<1>0 s 0", "<1>1 m 1", "<1>2 l 2"],
  ],
  "a product without a slug with a body refused as it is": [
    ["<0>0 s 0", "<0>1 m 1", "<0>2 l 2"],
    ["<1>0 s 4", "<1>1 m 1", "<1>2 l 2"],
  ],
  "a product without a slug with a selected variant's fields": [
    ["<0>0 s 0", "<0>1 m 1", "<0>2 l 2", "xl 0"],
    ["<1>0 s 4", "<1>1 m 1", "<1>2 l 2"],
  ],
  "a product without a slug with its own count beside a list": [
    ["<0>0 s 0", "<0>1 m 1", "<0>2 l 2"],
    ["<1>0 s 4", "<1>1 m 1", "<1>2 l 2"],
  ],
  "a product without a slug with a selected variant's fields and a list repeating a combination": [
    ["<0>0 s 0", "<0>1 m 1", "<0>2 l 2"],
    ["<1>0 s 4", "<1>1 m 1", "<1>2 l 2"],
  ],
  "a product without a slug, an update naming a variant twice": [
    ["<0>0 s 4", "<0>1 m 1", "<0>2 l 2"],
    ["<1>0 s 1", "<1>1 m 1", "<1>2 l 2"],
  ],
  "a selected variant's fields and a list repeating a combination": [
    ["<0>0 s 0", "<0>1 m 1", "<0>2 l 2"],
    ["<1>0 s 4", "<1>1 m 1", "<1>2 l 2"],
  ],
  "a selected variant's fields beside a refused item": [
    ["<0>0 s 0", "<0>1 m 7", "<0>2 l 2"],
    ["<1>0 s 0", "<1>1 m 1", "<1>2 l 2"],
  ],
  "a variant selected by SKU with fields, adding another product's SKU": [
    ["<0>0 s 0", "<0>1 m 1", "<0>2 l 2"],
    ["<1>0 s 4", "<1>1 m 1", "<1>2 l 2"],
  ],
  "an update naming a variant twice beside a refused item": [
    ["<0>0 s 1", "<0>1 m 1", "<0>2 l 2"],
    ["<1>0 s 0", "<1>1 m 1", "<1>2 l 2"],
  ],
  "an update naming a variant twice and one of another product": [
    ["<0>0 s 0", "<0>1 m 1", "<0>2 l 2"],
    ["<1>0 s 4", "<1>1 m 1", "<1>2 l 2"],
  ],
  "an update naming a variant twice with qty and adjust": [
    ["<0>0 s 0", "<0>1 m 1", "<0>2 l 2"],
    ["<1>0 s 4", "<1>1 m 1", "<1>2 l 2"],
  ],
  "an update after an empty sync": [
    ["<0>0 s 0", "<0>1 m 1", "<0>2 l 2"],
    ["<1>0 s 4", "<1>1 m 1", "<1>2 l 2"],
  ],
  "an empty sync and an add repeating a combination": [
    ["<0>0 s 0", "<0>1 m 1", "<0>2 l 2"],
    ["<1>0 s 4", "<1>1 m 1", "<1>2 l 2"],
  ],
};

const named = (name: string) => (cases.find((c) => c[0] === name) as (typeof cases)[number])[1];

describe("a round of several items in the rarer forms", () => {
  it.each(cases)("%s", async (name, twin, status, errors, calls) => {
    const sql = await answered({ count: 2, ...twin });
    expect(sql.status, JSON.stringify(sql.raw)).toBe(status);
    expect(sql.json.errors).toEqual(errors);
    expect(sql.after.map(kept)).toEqual(STORED[name]);
    // The plan's batches and reads (a product without a slug: a batch more, a read more), none
    // of them the general plan's read.
    // A read and a write per round; a round refused whole is its read alone.
    expect(sql.calls).toBeLessThanOrEqual(Math.max(2, calls));
  });

  it("writes a selected variant taking a SKU the sync after it frees in the round's batch", async () => {
    // SKUs are checked as the lists leave the product, as for any swap within one request: the
    // holder keeps a placeholder until the sync deletes it (src/products/update/plan.ts).
    const sql = await answered({
      count: 2,
      body: ([a, b]) => [
        { variant_id: a.v[0], sku: `${a.p}1`, variants: { sync: [size("s"), size("l")] } },
        written(b),
      ],
    });
    expect(sql.status, JSON.stringify(sql.raw)).toBe(200);
    expect(sql.after.map(kept)).toEqual([
      ["<0>1 s 0", "<0>2 l 2"],
      ["<1>0 s 4", "<1>1 m 1", "<1>2 l 2"],
    ]);
    // The read of the selection and the round's batch.
    expect(sql.calls).toBeLessThanOrEqual(2);
  });

  it.each<[string, Omit<Twin, "count">]>([
    ["two products without a slug, one of them refused", named("two products without a slug, one of them refused")],
    [
      "a selected variant's fields and a refused list",
      named("a selected variant's fields and a list repeating a combination"),
    ],
    ["an update after an empty sync", named("an update after an empty sync")],
  ])("%s: replays the answer under its Idempotency-Key", async (_name, twin) => {
    const key = uid("key");
    const first = await run({ count: 2, ...twin, headers: { "idempotency-key": key } });
    const again = await put("/v1/products", twin.body(first.made), { headers: { "idempotency-key": key } });
    expect([again.status, again.json]).toEqual([first.status, first.raw]);
  });
});
