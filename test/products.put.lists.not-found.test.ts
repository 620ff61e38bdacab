import { describe, expect, it } from "vitest";
import { size } from "./fixtures/sizes";
import { answered, kept, run, type Twin } from "./fixtures/twins";
import { put, uid } from "./helpers";

// One item with a variant list whose selection finds nothing: a variant id or SKU no variant or
// product has, or a product id read first (a head category merged into its paths). The answer is
// a 404 naming the selection, recorded under an
// Idempotency-Key like any refusal, and nothing is written: worded from the read that finds
// nothing (src/products/update/plan.ts), in one call.

const NONE = 2_000_000_000;

const cases: [string, Omit<Twin, "count">, string][] = [
  [
    "a variant id no variant has",
    { body: () => ({ variant_id: NONE, variants: { sync: [size("s")] } }) },
    `variant_id: variant ${NONE} not found`,
  ],
  [
    "a variant id no variant has, with the variant's fields",
    { body: () => ({ variant_id: NONE, price: 5, stock: 2, variants: { add: [size("xl")] } }) },
    `variant_id: variant ${NONE} not found`,
  ],
  [
    "a SKU no variant or product has, with the variant's fields",
    { body: ([a]) => ({ sku: `${a.p}none`, price: 5, variants: { add: [size("xl")] } }) },
    "sku: no product or variant has SKU <0>none",
  ],
  [
    "a SKU no variant or product has, with product fields",
    {
      body: ([a]) => ({ sku: `${a.p}none`, title: "Renamed", variants: { update: [{ variant_id: a.v[0], qty: 1 }] } }),
    },
    "sku: no product or variant has SKU <0>none",
  ],
  [
    "a product id read first for its head category",
    { body: () => ({ product_id: NONE, headcategory_name: "Shoes", variants: { add: [size("xl")] } }) },
    `product_id: product ${NONE} not found`,
  ],
  [
    "a product id under an If-Match tag",
    { body: () => ({ product_id: NONE, variants: { add: [size("xl")] } }), headers: { "if-match": '"p1-1"' } },
    `product_id: product ${NONE} not found`,
  ],
  [
    "a variant id under an If-Match tag",
    { body: () => ({ variant_id: NONE, variants: { add: [size("xl")] } }), headers: { "if-match": '"p1-1"' } },
    `variant_id: variant ${NONE} not found`,
  ],
];

describe("one item whose selection finds nothing", () => {
  it.each(cases)("%s: a 404, nothing written", async (_name, twin, error) => {
    const sql = await answered({ count: 1, ...twin });
    expect(sql.status, JSON.stringify(sql.raw)).toBe(404);
    expect(sql.json.errors).toEqual([error]);
    // Worded from the read that found nothing (src/products/update/plan.ts),
    // or the refused batch's read for a product id not read first: not the general plan's read.
    expect(sql.calls).toBeLessThanOrEqual(2);
  });

  it.each(cases.slice(0, 5))("%s: replays the 404 under its Idempotency-Key", async (_name, twin) => {
    const key = uid("key");
    const first = await run({ count: 1, ...twin, headers: { "idempotency-key": key } });
    expect(first.status).toBe(404);
    // The read, then the record.
    expect(first.calls).toBeLessThanOrEqual(2);
    const again = await put("/v1/products", twin.body(first.made), { headers: { "idempotency-key": key } });
    expect([again.status, again.json]).toEqual([404, first.raw]);
    // The key is spent on that body: another body with it is refused.
    const other = await put(
      "/v1/products",
      { product_id: first.made[0].id, title: "Other" },
      { headers: { "idempotency-key": key } },
    );
    expect(other.status).toBe(422);
  });
});

describe("items of several whose selections find nothing", () => {
  const rounds: [string, Omit<Twin, "count">, number, string[], number, string[]][] = [
    [
      "every item's",
      {
        body: ([a]) => [
          { variant_id: NONE, variants: { sync: [size("s")] } },
          { sku: `${a.p}none`, price: 5, variants: { add: [size("xl")] } },
        ],
      },
      404,
      [`[0].variant_id: variant ${NONE} not found`, "[1].sku: no product or variant has SKU <0>none"],
      // The read alone: nothing to write.
      1,
      ["<0>0 s 0", "<0>1 m 1", "<0>2 l 2"],
    ],
    [
      "one item's, beside one written",
      {
        body: ([a]) => [
          { variant_id: NONE, variants: { sync: [size("s")] } },
          { product_id: a.id, variants: { update: [{ variant_id: a.v[0], qty: 4 }] } },
        ],
      },
      200,
      [`[0].variant_id: variant ${NONE} not found`],
      2,
      ["<0>0 s 4", "<0>1 m 1", "<0>2 l 2"],
    ],
  ];

  it.each(rounds)("%s: 404s naming the selections", async (_name, twin, status, errors, calls, stored) => {
    const sql = await answered({ count: 1, ...twin });
    expect(sql.status, JSON.stringify(sql.raw)).toBe(status);
    expect(sql.json.errors).toEqual(errors);
    expect(sql.after.map(kept)).toEqual([stored]);
    // The rounds' read words them (src/products/update/plan.ts), then one batch.
    expect(sql.calls).toBe(calls);
  });

  it.each(rounds)("%s: replays the answer under its Idempotency-Key", async (_name, twin, status) => {
    const key = uid("key");
    const first = await run({ count: 1, ...twin, headers: { "idempotency-key": key } });
    expect(first.status).toBe(status);
    const again = await put("/v1/products", twin.body(first.made), { headers: { "idempotency-key": key } });
    expect([again.status, again.json]).toEqual([status, first.raw]);
  });
});
