import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { size } from "./fixtures/sizes";
import { answeredWatched, asMade, jsPlanReads, kept, type Made, run, type Twin } from "./fixtures/twins";
import { post, put, uid } from "./helpers";

// Items of several with variant lists, one giving a head category that merged into its product's
// stored paths passes the bound: the rounds' read (src/products/update/variants-round-read.ts)
// once left the body to the JavaScript plan; it now holds the item as refused as it is, worded from
// the rounds' read (src/products/update/diagnose.ts, diagnoseRound) as one item's is. Each case pins
// its status, errors in order, round trips and what each product keeps; a refused body writes
// nothing, each product answered is the stored one, and no item reaches the JavaScript plan.

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

type Case = [string, Twin, number, string[], number, string[][]];

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

/** The product that has FOREIGN, as the errors show it. */
let foreign = 0;
const shown = (errors: string[]) => errors.map((e) => e.replace(`product ${foreign}`, "product <F>"));

describe("in rounds, a head category merged into stored paths past the bound", () => {
  it("has the product that owns FOREIGN", async () => {
    const r = await post("/v1/products", { title: "Foreign", price: 1, sku: FOREIGN });
    expect(r.status, r.text).toBe(200);
    foreign = r.json.products[0].product_id;
  });

  it.each(pastTheBound)("%s: pinned, by the SQL plan alone", async (_name, twin, status, errors, calls, stored) => {
    const { sql, seen } = await answeredWatched(twin);
    expect(sql.status, JSON.stringify(sql.raw)).toBe(status);
    expect(shown(sql.json.errors ?? [])).toEqual(errors);
    expect(seen).toEqual([]);
    expect(jsPlanReads(sql.queries)).toBe(0);
    expect(sql.calls).toBe(calls);
    expect(sql.after.map(kept)).toEqual(stored);
  });

  it("by product id, beside an item written: recorded under an Idempotency-Key and replayed", async () => {
    const [, twin, status] = pastTheBound[0];
    const key = uid("key");
    const first = await run({ ...twin, headers: { "idempotency-key": key } });
    expect(first.status).toBe(status);
    expect(jsPlanReads(first.queries)).toBe(0);
    const again = await put("/v1/products", twin.body(first.made), { headers: { "idempotency-key": key } });
    expect([again.status, again.json]).toEqual([status, first.raw]);
  });
});
