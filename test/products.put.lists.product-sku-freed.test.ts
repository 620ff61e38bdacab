import { beforeAll, describe, expect, it } from "vitest";
import { size } from "./fixtures/sizes";
import { answered, expectPinned, foreignOwner, kept, type Made, run, type Twin } from "./fixtures/twins";
import { get, uid } from "./helpers";

// An item naming a product by id that gives the product a SKU one of its own variants has, beside
// lists that free it from that variant (an update giving the variant none or another, a sync
// deleting it or renaming it). SKUs are checked on what the last list leaves, as for any swap
// within one request (docs/products.md, "Updating products"), so such a body is 200. The plan
// (src/products/update/plan.ts) once wrote the product's fields with the first list,
// before a later list freed the SKU, so the registry refused the batch, its refusal read found
// nothing refused and the write was retried as if a concurrent writer had changed the product,
// then answered 503. Each case pins its status, errors in order, D1 calls, the SKU each product
// keeps and each variant's SKU, value and count; a refused body writes nothing, each product
// answered is the one stored, and no item with a list reaches the general planner.

const FOREIGN = uid("FOREIGN");

/** Product a of the run (sizes s, m, l; SKUs <a>0, <a>1, <a>2) given <a>1, lists beside. */
const taking = (a: Made, variants: unknown) => ({ product_id: a.id, sku: `${a.p}1`, variants });
const freedByUpdate = (a: Made, sku: string | null = null) => ({
  add: [size("xl")],
  update: [{ variant_id: a.v[1], sku }],
});

/** A case: name, twin, status, errors, D1 calls, each product's own SKU and `kept` of its variants. */
type Case = [string, Twin, number, string[], number, [string | null, string[]][]];

const MADE = (i: number) => [`<${i}>0 s 0`, `<${i}>1 m 1`, `<${i}>2 l 2`];

const cases: Case[] = [
  [
    "an update frees it after an add",
    { count: 1, body: ([a]) => taking(a, freedByUpdate(a)) },
    200,
    [],
    1,
    [["<0>1", ["<0>0 s 0", "m 1", "<0>2 l 2", "xl 0"]]],
  ],
  [
    "an update gives the variant another SKU after an add",
    { count: 1, body: ([a]) => taking(a, freedByUpdate(a, `${a.p}new`)) },
    200,
    [],
    1,
    [["<0>1", ["<0>0 s 0", "<0>new m 1", "<0>2 l 2", "xl 0"]]],
  ],
  [
    "a sync deletes the variant holding it, an update after",
    {
      count: 1,
      body: ([a]) =>
        taking(a, { sync: [size("s", { sku: `${a.p}0` }), size("l")], update: [{ variant_id: a.v[0], qty: 5 }] }),
    },
    200,
    [],
    1,
    [["<0>1", ["<0>0 s 5", "<0>2 l 2"]]],
  ],
  [
    "a sync renames the variant holding it, an add after",
    {
      count: 1,
      body: ([a]) =>
        taking(a, { sync: [size("s"), size("m", { sku: `${a.p}new`, qty: 1 }), size("l")], add: [size("xl")] }),
    },
    200,
    [],
    1,
    [["<0>1", ["<0>0 s 0", "<0>new m 1", "<0>2 l 2", "xl 0"]]],
  ],
  [
    "a sync deletes the variant holding it, alone",
    { count: 1, body: ([a]) => taking(a, { sync: [size("s"), size("l")] }) },
    200,
    [],
    1,
    [["<0>1", ["<0>0 s 0", "<0>2 l 2"]]],
  ],
  // One list: the fields are written after it frees the SKU.
  [
    "an update frees it, alone",
    { count: 1, body: ([a]) => taking(a, { update: [{ variant_id: a.v[1], sku: null }] }) },
    200,
    [],
    1,
    [["<0>1", ["<0>0 s 0", "m 1", "<0>2 l 2"]]],
  ],
  [
    "a sync renames the variant holding it, alone",
    {
      count: 1,
      body: ([a]) => taking(a, { sync: [size("s"), size("m", { sku: `${a.p}new`, qty: 1 }), size("l")] }),
    },
    200,
    [],
    1,
    [["<0>1", ["<0>0 s 0", "<0>new m 1", "<0>2 l 2"]]],
  ],
  [
    "a round of two items, each product taking its variant's SKU",
    {
      count: 2,
      body: ([a, b]) => [taking(a, freedByUpdate(a)), taking(b, { sync: [size("s"), size("l")], add: [size("xl")] })],
    },
    200,
    [],
    1,
    [
      ["<0>1", ["<0>0 s 0", "m 1", "<0>2 l 2", "xl 0"]],
      ["<1>1", ["<1>0 s 0", "<1>2 l 2", "xl 0"]],
    ],
  ],
  // The other item is refused (the SKU is product a's variant's as read) and the round written again.
  [
    "a round whose other item gives its product the same SKU",
    {
      count: 2,
      body: ([a, b]) => [taking(a, freedByUpdate(a)), { product_id: b.id, sku: `${a.p}1`, variants: freedByUpdate(b) }],
    },
    200,
    ["[1].sku: SKU <0>1 is already used by product <0>"],
    3,
    [
      ["<0>1", ["<0>0 s 0", "m 1", "<0>2 l 2", "xl 0"]],
      [null, MADE(1)],
    ],
  ],
  // The lists apply in order: the add meets the variant that has the SKU until the update.
  [
    "an add takes it as well",
    {
      count: 1,
      body: ([a]) => taking(a, { add: [size("xl", { sku: `${a.p}1` })], update: [{ variant_id: a.v[1], sku: null }] }),
    },
    409,
    [
      "variants.add[0].sku: SKU <0>1 already exists (variant <0.1>)",
      "variants.add[0].sku: SKU <0>1 is also used by sku",
    ],
    2,
    [[null, MADE(0)]],
  ],
  // Refused: the SKU still used twice after the last list, or another product's.
  [
    "the variant keeps it",
    { count: 1, body: ([a]) => taking(a, { add: [size("xl")], update: [{ variant_id: a.v[1], qty: 3 }] }) },
    409,
    ["variant <0.1>: SKU <0>1 is also used by sku"],
    2,
    [[null, MADE(0)]],
  ],
  [
    "another product has it",
    {
      count: 1,
      body: ([a]) => ({ product_id: a.id, sku: FOREIGN, variants: freedByUpdate(a) }),
    },
    409,
    [`sku: SKU ${FOREIGN} is already used by product <F>`],
    2,
    [[null, MADE(0)]],
  ],
];

describe("PUT /v1/products: the product given a SKU its variant has, freed by a list beside", () => {
  let shown: (errors: string[]) => string[];
  beforeAll(async () => {
    shown = await foreignOwner(FOREIGN);
  });

  it.each(cases)("%s", (...c) => expectPinned(c, shown, (p) => [p.sku, kept(p)]));

  it("replays under an Idempotency-Key: the second answer is the first, written once", async () => {
    const key = uid("key");
    const twin: Twin = {
      count: 1,
      body: ([a]) => taking(a, freedByUpdate(a)),
      headers: { "idempotency-key": key },
    };
    const first = { sql: await answered(twin) };
    expect(first.sql.status, JSON.stringify(first.sql.raw)).toBe(200);
    // The same key and body on the same product: the stored answer, nothing written again.
    const again = await run({ ...twin, count: 0, body: () => twin.body(first.sql.made) });
    expect(again.status).toBe(200);
    expect(again.raw).toEqual(first.sql.raw);
    // The read, then the key claimed in the write batch; the replay's read, its batch meeting the
    // claim, then the record.
    expect([first.sql.calls, again.calls]).toEqual([2, 3]);
    const stored = (await get(`/v1/products/${first.sql.made[0].id}`)).json;
    expect(stored).toEqual(first.sql.raw.products[0]);
    expect([stored.sku, stored.variants.map((v: { sku: string | null }) => v.sku)]).toEqual([
      `${first.sql.made[0].p}1`,
      [`${first.sql.made[0].p}0`, null, `${first.sql.made[0].p}2`, null],
    ]);
  });
});
