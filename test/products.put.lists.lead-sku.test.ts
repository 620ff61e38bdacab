import { describe, expect, it } from "vitest";
import { size } from "./fixtures/sizes";
import { answered, kept, type Made } from "./fixtures/twins";

// A selected variant given a SKU beside a sync: the batch writes the leading entry first, so the
// sync matches the variants as it leaves them (the variant's old SKU is free, its new one taken),
// while the read that words a refusal runs the sync's plan on the variants as stored and moves its
// SKU matches as the leading entry does (src/products/update/plan.ts), for one
// item and in a round of several; each pins its status, errors and what it leaves stored.

const SIZES = (i: number) => [`<${i}>0 s 0`, `<${i}>1 m 1`, `<${i}>2 l 2`];
/** The second product of a round of two, its first count written. */
const WRITTEN = ["<1>0 s 4", "<1>1 m 1", "<1>2 l 2"];

const body = (a: Made) => ({
  variant_id: a.v[0],
  sku: `${a.p}new`,
  // The first entry names the variant's old SKU, the second its values: the variant is renamed
  // first, so the first entry is a new variant with the same combination as the second's.
  variants: { sync: [size("s", { sku: `${a.p}0` }), size("s")] },
});

describe("a selected variant given a SKU beside a sync, refused", () => {
  it.each<[string, (made: Made[]) => unknown, number, string[], string[][]]>([
    [
      "one item",
      ([a]) => body(a),
      409,
      ["variants.sync[1]: option combination (s) is also used by variants.sync[0]"],
      [SIZES(0)],
    ],
    [
      "in a round of two",
      ([a, b]) => [body(a), { product_id: b.id, variants: { update: [{ variant_id: b.v[0], qty: 4 }] } }],
      200,
      ["[0].variants.sync[1]: option combination (s) is also used by variants.sync[0]"],
      [SIZES(0), WRITTEN],
    ],
  ])("%s: worded from the plan's read", async (name, sent, status, errors, stored) => {
    const sql = await answered({ count: name === "one item" ? 1 : 2, body: sent });
    expect(sql.status, JSON.stringify(sql.raw)).toBe(status);
    expect(sql.json.errors).toEqual(errors);
    expect(sql.after.map(kept)).toEqual(stored);
  });
});

describe("a selected variant given a SKU an update after it frees", () => {
  // SKUs are checked as the lists leave the product, as for any swap within one request
  // (docs/products.md, "Updating products"): the other variant holds a placeholder until the
  // update renames it (src/products/update/plan.ts).
  const freed = (a: Made) => ({
    variant_id: a.v[0],
    sku: `${a.p}1`,
    variants: { update: [{ variant_id: a.v[1], sku: `${a.p}x` }] },
  });

  const renamed = ["<0>1 s 0", "<0>x m 1", "<0>2 l 2"];
  it.each<[string, (made: Made[]) => unknown, string[][]]>([
    ["one item", ([a]) => freed(a), [renamed]],
    [
      "in a round of two",
      ([a, b]) => [freed(a), { product_id: b.id, variants: { update: [{ variant_id: b.v[0], qty: 4 }] } }],
      [renamed, WRITTEN],
    ],
  ])("%s: written", async (name, sent, stored) => {
    const sql = await answered({ count: name === "one item" ? 1 : 2, body: sent });
    expect(sql.status, JSON.stringify(sql.raw)).toBe(200);
    expect(sql.json.errors).toEqual([]);
    expect(sql.after.map(kept)).toEqual(stored);
    // The plan's read of the selection and its one batch.
    expect(sql.calls).toBeLessThanOrEqual(2);
  });
});
