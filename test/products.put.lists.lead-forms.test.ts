import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { answers, type Case, type Form } from "./fixtures/forms";
import { type Json, size } from "./fixtures/sizes";

// One-item forms of a PUT with a variant list around a selected variant's fields (the "leading
// entry", src/products/update/plan.ts), which the plan takes:
// - its count below 0 under disable_minusqty, which a list after it may lift (the floor is
//   checked on the product as the last list leaves it);
// - an empty sync after it;
// - its expected_qty beside an update entry naming the same variant (the first expected count
//   holds);
// - a new SKU before a sync that names SKUs (matched as the leading entry leaves them).
// Each pins its status, errors in order, what it writes (./fixtures/forms.ts; nothing when
// refused) and `calls`, the plan's round trips (a resolve read for a selection, the batch, a read wording a
// refusal). test/products.put.lists.given-forms.test.ts has the refusals as given beside
// several lists, test/products.put.lists.lead-several.test.ts these forms in bodies of several
// items and drawn at random.

const noMinus = () => ({ disable_minusqty: 1 });
const qtys = (p: Json) => p.variants.map((v: Json) => v.qty);

const floor: [string, Form][] = [
  [
    "a stock below 0 that an update of the same variant lifts",
    {
      extra: noMinus,
      body: (c) => ({ variant_id: c.v[1], stock: -1, variants: { update: [{ variant_id: c.v[1], adjust: 3 }] } }),
      status: 200,
      written: (p) => expect(qtys(p)).toEqual([0, 2, 2]),
      calls: 2,
    },
  ],
  [
    "a stock below 0 that an update only moves, still below 0",
    {
      extra: noMinus,
      body: (c) => ({ variant_id: c.v[1], stock: -3, variants: { update: [{ variant_id: c.v[1], adjust: 1 }] } }),
      status: 400,
      errors: () => ["variants.update[0].adjust: must not be negative while disable_minusqty is on"],
      calls: 3,
    },
  ],
  [
    "a stock below 0 beside an update of another variant",
    {
      extra: noMinus,
      body: (c) => ({ variant_id: c.v[1], stock: -1, variants: { update: [{ variant_id: c.v[2], qty: 7 }] } }),
      status: 400,
      errors: () => ["stock: must not be negative while disable_minusqty is on"],
      calls: 3,
    },
  ],
  [
    "an adjust below 0 by SKU that a sync entry's qty lifts",
    {
      extra: noMinus,
      body: (c) => ({ sku: `${c.p}2`, adjust: -5, variants: { sync: [size("s"), size("l", { qty: 4 })] } }),
      status: 200,
      written: (p) => expect(qtys(p)).toEqual([0, 4]),
      calls: 2,
    },
  ],
  [
    "an adjust below 0 by SKU that the sync keeps as it is",
    {
      extra: noMinus,
      body: (c) => ({ sku: `${c.p}2`, adjust: -5, variants: { sync: [size("s"), size("l")] } }),
      status: 409,
      errors: (c) => [
        `adjust: would take the qty of variant ${c.v[2]} from 2 to -3; it cannot go below 0 while disable_minusqty is on`,
      ],
      calls: 3,
    },
  ],
  [
    "a stock below 0 on a variant the sync deletes",
    {
      extra: noMinus,
      body: (c) => ({ variant_id: c.v[2], stock: -2, price: 5, variants: { sync: [size("s"), size("m")] } }),
      status: 200,
      written: (p) => expect(qtys(p)).toEqual([0, 1]),
      calls: 2,
    },
  ],
  [
    "a stock below 0 that a sync keeps and an update after it lifts",
    {
      extra: noMinus,
      body: (c) => ({
        variant_id: c.v[0],
        stock: -1,
        variants: { sync: [size("s"), size("m")], update: [{ variant_id: c.v[0], adjust: 2 }] },
      }),
      status: 200,
      written: (p) => expect(qtys(p)).toEqual([1, 1]),
      calls: 2,
    },
  ],
  [
    "disable_minusqty turned on beside a stock below 0 that an update lifts",
    {
      body: (c) => ({
        variant_id: c.v[0],
        disable_minusqty: 1,
        stock: -4,
        variants: {
          update: [
            { variant_id: c.v[0], adjust: 4 },
            { variant_id: c.v[1], qty: 3 },
          ],
        },
      }),
      status: 200,
      written: (p) => expect([Number(p.disable_minusqty), ...qtys(p)]).toEqual([1, 0, 3, 2]),
      calls: 2,
    },
  ],
  [
    "disable_minusqty turned on beside a stock below 0 left so",
    {
      body: (c) => ({
        variant_id: c.v[0],
        disable_minusqty: 1,
        stock: -4,
        variants: { add: [size("xl", { qty: 1 })] },
      }),
      status: 400,
      errors: () => ["stock: must not be negative while disable_minusqty is on"],
      calls: 3,
    },
  ],
];

const emptied: [string, Form][] = [
  [
    "a selected variant's fields, then an empty sync",
    {
      body: (c) => ({ variant_id: c.v[1], price: 5, weight: 2, title: "Emptied", variants: { sync: [] } }),
      status: 200,
      written: (p) => expect([p.title, p.variants]).toEqual(["Emptied", []]),
      calls: 2,
    },
  ],
  [
    "a selected variant's expected count, an empty sync, then an add taking its SKU",
    {
      body: (c) => ({
        sku: `${c.p}1`,
        expected_stock: 1,
        variants: { sync: [], add: [size("xl", { sku: `${c.p}1` })] },
      }),
      status: 200,
      written: (p, c) => expect(p.variants.map((v: Json) => [v.sku, v.qty])).toEqual([[`${c.p}1`, 0]]),
      calls: 2,
    },
  ],
  [
    "a selected variant's expected count the stored one is not, then an empty sync",
    {
      body: (c) => ({ variant_id: c.v[1], expected_qty: 5, variants: { sync: [] } }),
      status: 409,
      errors: (c) => [`expected_qty: variant ${c.v[1]} has qty 1, not 5`],
      calls: 3,
    },
  ],
  [
    "a selected variant's stock below 0 under disable_minusqty, then an empty sync",
    {
      extra: noMinus,
      body: (c) => ({ variant_id: c.v[1], stock: -1, variants: { sync: [] } }),
      status: 200,
      written: (p) => expect(p.variants).toEqual([]),
      calls: 2,
    },
  ],
  [
    "a selected variant's stock, an empty sync, then an update of a variant it deleted",
    {
      body: (c) => ({ variant_id: c.v[2], stock: 3, variants: { sync: [], update: [{ variant_id: c.v[0], qty: 1 }] } }),
      status: 404,
      errors: (c) => [`variants.update[0].variant_id: variant ${c.v[0]} is not a variant of product ${c.id}`],
      calls: 3,
    },
  ],
];

/** The product's own stock below 0 (from before its variants; it has no use while it has them). */
const ownBelowZero = async (c: Case) => {
  await env.DB.prepare("UPDATE products SET stock = -3 WHERE id = ?").bind(c.id).run();
};

emptied.push(
  [
    "disable_minusqty turned on beside the product's own stock below 0, a selected variant, then an empty sync",
    {
      before: ownBelowZero,
      body: (c) => ({ variant_id: c.v[0], disable_minusqty: 1, price: 3, variants: { sync: [] } }),
      status: 409,
      errors: (c) => [`disable_minusqty: stock is negative for product ${c.id}; set their stock first`],
      calls: 3,
    },
  ],
  [
    "disable_minusqty turned on beside the product's own stock below 0, a selected variant, an empty sync, then an add",
    {
      before: ownBelowZero,
      body: (c) => ({ variant_id: c.v[0], disable_minusqty: 1, weight: 2, variants: { sync: [], add: [size("xl")] } }),
      status: 200,
      written: (p) => expect([p.stock, p.variants.length]).toEqual([0, 1]),
      calls: 2,
    },
  ],
  [
    "disable_minusqty turned on beside the product's own stock below 0, an empty sync, then an add",
    {
      // The product's own stock is cleared as the add leaves it with variants.
      before: ownBelowZero,
      body: (c) => ({ product_id: c.id, disable_minusqty: 1, variants: { sync: [], add: [size("xl")] } }),
      status: 200,
      written: (p) => expect([p.stock, p.variants.length]).toEqual([0, 1]),
      calls: 1,
    },
  ],
);

const twice: [string, Form][] = [
  [
    "the leading entry's expected count holds over the update's (the update's is not checked)",
    {
      body: (c) => ({
        variant_id: c.v[1],
        expected_qty: 1,
        variants: { update: [{ variant_id: c.v[1], expected_qty: 7, qty: 3 }] },
      }),
      status: 200,
      written: (p) => expect(qtys(p)).toEqual([0, 3, 2]),
      calls: 2,
    },
  ],
  [
    "the leading entry's expected count the stored one is not, the update's right",
    {
      body: (c) => ({
        variant_id: c.v[1],
        expected_qty: 4,
        variants: { update: [{ variant_id: c.v[1], expected_qty: 1, qty: 3 }] },
      }),
      status: 409,
      errors: (c) => [`expected_qty: variant ${c.v[1]} has qty 1, not 4`],
      calls: 3,
    },
  ],
  [
    "by SKU: the leading entry's count holds, another variant's is checked",
    {
      body: (c) => ({
        sku: `${c.p}2`,
        expected_stock: 2,
        price: 7,
        variants: {
          update: [
            { variant_id: c.v[0], expected_qty: 0, qty: 5 },
            { variant_id: c.v[2], expected_qty: 9, adjust: 1 },
          ],
        },
      }),
      status: 200,
      written: (p) =>
        expect(p.variants.map((v: Json) => [v.qty, v.price])).toEqual([
          [5, 100],
          [1, 100],
          [3, 7],
        ]),
      calls: 2,
    },
  ],
  [
    "by SKU: another variant's expected count the stored one is not",
    {
      body: (c) => ({
        sku: `${c.p}2`,
        expected_stock: 2,
        variants: {
          update: [
            { variant_id: c.v[0], expected_qty: 3, qty: 5 },
            { variant_id: c.v[2], expected_qty: 9 },
          ],
        },
      }),
      status: 409,
      errors: (c) => [`variants.update[0].expected_qty: variant ${c.v[0]} has qty 0, not 3`],
      calls: 3,
    },
  ],
  [
    "beside a sync, the leading entry's count holds over the update's",
    {
      body: (c) => ({
        variant_id: c.v[0],
        expected_qty: 0,
        variants: { sync: [size("s"), size("m")], update: [{ variant_id: c.v[0], expected_qty: 3, adjust: 2 }] },
      }),
      status: 200,
      written: (p) => expect(qtys(p)).toEqual([2, 1]),
      calls: 2,
    },
  ],
];

/** A variant selected by id taking a new SKU, before a sync that names SKUs: the sync matches what the leading entry left. */
const renamed: [string, Form][] = [
  [
    "two sync entries naming the SKU the leading entry took away (both new variants)",
    {
      body: (c) => ({
        variant_id: c.v[0],
        sku: `${c.p}x`,
        variants: { sync: [size("s", { sku: `${c.p}0` }), size("s", { sku: `${c.p}0` })] },
      }),
      status: 409,
      errors: (c) => [
        "variants.sync[1]: option combination (s) is also used by variants.sync[0]",
        `variants.sync[1].sku: SKU ${c.p}0 is also used by variants.sync[0].sku`,
      ],
      calls: 3,
    },
  ],
  [
    "two sync entries naming the SKU the leading entry gave",
    {
      body: (c) => ({
        variant_id: c.v[0],
        sku: `${c.p}x`,
        variants: {
          sync: [
            { sku: `${c.p}x`, qty: 3 },
            { sku: `${c.p}x`, qty: 4 },
          ],
        },
      }),
      status: 409,
      errors: (c) => [
        `variants.sync[1].sku: matches variant ${c.v[0]} (SKU ${c.p}x), already matched by variants.sync[0]`,
      ],
      calls: 3,
    },
  ],
  [
    "a sync entry naming the SKU the leading entry cleared, beside another's",
    {
      body: (c) => ({
        variant_id: c.v[1],
        sku: null,
        variants: { sync: [{ sku: `${c.p}1`, qty: 3 }, { sku: `${c.p}2`, qty: 4 }, size("s", { sku: `${c.p}2` })] },
      }),
      status: 400,
      errors: (c) => [
        'variants.sync[0].variant_option1_value: is required (option "Size")',
        `variants.sync[2].sku: matches variant ${c.v[2]} (SKU ${c.p}2), already matched by variants.sync[1]`,
      ],
      calls: 3,
    },
  ],
];

describe("a leading entry's forms, by the one path", () => {
  describe.each([
    ["a count below 0 under disable_minusqty", floor],
    ["an empty sync after a selected variant", emptied],
    ["expected counts twice", twice],
    ["a new SKU of the leading entry before a sync", renamed],
  ])("%s", (_kind, forms) => {
    it.each(forms)("%s", async (_name, form) => {
      await answers(form);
    });
  });
});
