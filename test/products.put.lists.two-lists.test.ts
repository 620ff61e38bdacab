import { describe, expect, it } from "vitest";
import { wrapD1 } from "./d1-wrap";
import { bigProduct, imaged, type Json, product, size } from "./fixtures/sizes";
import { get, put, uid } from "./helpers";

// Refusals the plan words from its own read (src/products/update/plan.ts, refusals.ts): an
// item with two or three lists (sync, add, update applied in that
// order; a selected variant's fields are a leading list), and in a round of several items a SKU or
// slug two items claim, or a round that would be refused again. Each case pins the status, the
// errors word for word and in order, and the plan's read that words them; nothing refused is
// written.

/** What a case's body and errors name: the SKU prefix, the product and its variants (s, m, l). */
type Case = { p: string; id: number; v: number[] };

async function made(): Promise<Case> {
  const p = `${uid("T")}-`;
  const made = await product(p);
  return { p, id: made.product_id, v: (made.variants as Json[]).map((v) => v.variant_id) };
}

/** The body sent to a fresh product: the answer, the reads and the product before. */
async function sent(body: (c: Case) => Json) {
  const c = await made();
  const before = (await get(`/v1/products/${c.id}`)).json;
  const w = wrapD1();
  const r = await put("/v1/products", body(c), { env: { DB: w.db } });
  return { c, r, w, before };
}

describe("an item with two or three lists, refused", () => {
  it.each<[string, (c: Case) => Json, number, (c: Case) => string[]]>([
    [
      "an update naming a variant the sync deletes",
      (c) => ({ sync: [{ sku: `${c.p}0` }, { sku: `${c.p}1` }], update: [{ variant_id: c.v[2], qty: 5 }] }),
      404,
      (c) => [`variants.update[0].variant_id: variant ${c.v[2]} is not a variant of product ${c.id}`],
    ],
    [
      "an add taking a SKU a new variant of the sync takes",
      (c) => ({ sync: [{ sku: `${c.p}0` }, size("xl", { sku: `${c.p}n` })], add: [size("xxl", { sku: `${c.p}n` })] }),
      409,
      (c) => [
        `variants.add[0].sku: SKU ${c.p}n already exists (variants.sync[1])`,
        `variants.add[0].sku: SKU ${c.p}n is also used by variants.sync[1].sku`,
      ],
    ],
    [
      "an add repeating a combination a variant the sync keeps has",
      (c) => ({ sync: [{ sku: `${c.p}0` }, size("m")], add: [size("m", { sku: `${c.p}n` })] }),
      409,
      (c) => [`variants.add[0]: option combination (m) already exists (variant ${c.v[1]})`],
    ],
    [
      "an adjust of a variant the sync keeps below 0 under disable_minusqty",
      (c) => ({ sync: [{ sku: `${c.p}0` }, { sku: `${c.p}1` }], update: [{ variant_id: c.v[1], adjust: -3 }] }),
      409,
      (c) => [
        `variants.update[0].adjust: would take the qty of variant ${c.v[1]} from 1 to -2; it cannot go below 0 while disable_minusqty is on`,
      ],
    ],
    [
      "three lists leaving one SKU on two variants",
      (c) => ({
        sync: [{ sku: `${c.p}0` }],
        add: [size("xl", { sku: `${c.p}x` })],
        update: [{ variant_id: c.v[0], sku: `${c.p}x` }],
      }),
      409,
      (c) => [`variants.add[0].sku: SKU ${c.p}x is also used by variants.update[0].sku`],
    ],
    [
      "an update giving a variant the combination an add gives",
      (c) => ({ add: [size("xl")], update: [{ variant_id: c.v[0], variant_option1_value: "xl" }] }),
      409,
      (c) => [`variants.add[0]: option combination (xl) is also used by variant ${c.v[0]}`],
    ],
  ])("words %s from the plan's read", async (_name, list, status, errors) => {
    const flag = (c: Case) => ({ product_id: c.id, title: "Not written", disable_minusqty: 1, variants: list(c) });
    const { c, r, w, before } = await sent(flag);
    expect(r.status, r.text).toBe(status);
    expect(r.json.errors).toEqual(errors(c));
    expect((await get(`/v1/products/${c.id}`)).json).toEqual(before);
    // The refused batch, then the read that words it.
    expect(w.counts.calls).toBeLessThanOrEqual(2);
  });

  it("writes an add whose combination only a variant the sync deletes had", async () => {
    const { c, r, w } = await sent((c) => ({
      product_id: c.id,
      variants: { sync: [{ sku: `${c.p}0` }], add: [size("l", { sku: `${c.p}n` })] },
    }));
    expect(r.status, r.text).toBe(200);
    expect(w.counts.calls).toBeLessThanOrEqual(2);
    expect(r.json.products[0].variants.map((v: Json) => v.sku)).toEqual([`${c.p}0`, `${c.p}n`]);
  });

  it.each<[string, (c: Case) => Json, number, (c: Case) => string[]]>([
    [
      "an expected count of the selected variant that is not its qty, beside an update",
      (c) => ({ variant_id: c.v[0], expected_stock: 9, variants: { update: [{ variant_id: c.v[1], qty: 3 }] } }),
      409,
      (c) => [`expected_stock: variant ${c.v[0]} has qty 0, not 9`],
    ],
    [
      "two sync entries on one variant, beside the selected variant's price",
      (c) => ({ variant_id: c.v[0], price: 5, variants: { sync: [size("s"), size("s")] } }),
      409,
      () => ["variants.sync[1]: same option values as variants.sync[0]"],
    ],
    [
      "the selected variant's count and an update's adjust taking it below 0 under disable_minusqty",
      (c) => ({
        variant_id: c.v[1],
        stock: 0,
        disable_minusqty: 1,
        variants: { update: [{ variant_id: c.v[1], adjust: -1 }] },
      }),
      400,
      () => ["variants.update[0].adjust: must not be negative while disable_minusqty is on"],
    ],
    [
      "a sync keeping the selected variant and an add taking a kept SKU",
      (c) => ({
        sku: `${c.p}2`,
        qty_location: "B-2",
        variants: { sync: [{ sku: `${c.p}2` }, size("s")], add: [size("xl", { sku: `${c.p}2` })] },
      }),
      409,
      (c) => [
        `variants.add[0].sku: SKU ${c.p}2 already exists (variant ${c.v[2]})`,
        `variants.add[0].sku: SKU ${c.p}2 is also used by variants.sync[0].sku`,
      ],
    ],
  ])("words %s (a leading entry and a list) from the plan's read", async (_name, body, status, errors) => {
    const { c, r, w, before } = await sent(body);
    expect(r.status, r.text).toBe(status);
    expect(r.json.errors).toEqual(errors(c));
    expect((await get(`/v1/products/${c.id}`)).json).toEqual(before);
    // The selected variant's read, the refused batch, then the read that words it.
    expect(w.counts.calls).toBeLessThanOrEqual(3);
  });

  it("words a selected variant's adjust past the largest count before the lists' checks", async () => {
    const c = await made();
    const top = { product_id: c.id, variants: { update: [{ variant_id: c.v[0], qty: 999_999_999 }] } };
    expect((await put("/v1/products", top)).status).toBe(200);
    const before = (await get(`/v1/products/${c.id}`)).json;
    const w = wrapD1();
    const body = { variant_id: c.v[0], adjust: 5, variants: { sync: [size("s"), size("s")] } };
    const r = await put("/v1/products", body, { env: { DB: w.db } });
    expect(r.status, r.text).toBe(400);
    expect(r.json.errors).toEqual(["adjust: would take qty to 1000000004, past 1000000000"]);
    expect((await get(`/v1/products/${c.id}`)).json).toEqual(before);
  });

  it("refuses an expected count of a selected variant that is not its qty though the sync deletes the variant", async () => {
    // The count is expected as stored, before the lists, as every expected count is (docs/stock.md):
    // a sync deleting the variant does not drop the condition.
    const body = (c: Case) => ({
      sku: `${c.p}0`,
      expected_stock: 5,
      qty_location: "B-2",
      variants: { sync: [size("xl", { sku: `${c.p}n` })] },
    });
    const { c, r, w, before } = await sent(body);
    expect(r.status, r.text).toBe(409);
    expect(r.json.errors).toEqual([`expected_stock: variant ${c.v[0]} has qty ${before.variants[0].qty}, not 5`]);
    expect((await get(`/v1/products/${c.id}`)).json).toEqual(before);
    // The selected variant's read, the refused batch, the read that words it.
    expect(w.counts.calls).toBeLessThanOrEqual(3);
  });

  it("words more than 2,048 variants after a sync and an add", async () => {
    const body = (c: Case) => ({
      product_id: c.id,
      variants: {
        sync: Array.from({ length: 2048 }, (_, i) => size(`v${i}`)),
        add: [size("one more")],
      },
    });
    const { c, r, w, before } = await sent(body);
    expect(r.status, r.text.slice(0, 300)).toBe(400);
    expect(r.json.errors).toEqual(["variants: a product has at most 2048 variants; this request would leave 2049"]);
    expect((await get(`/v1/products/${c.id}`)).json).toEqual(before);
    expect(w.counts.calls).toBeLessThanOrEqual(2);
  });

  it("words an answer past 2 MiB after a sync and an add (413)", async () => {
    // 50 variants of 50 long image URLs each, kept by the sync: about 1.6 MB; 25 more pass 2 MiB.
    const id = await bigProduct();
    const sync = Array.from({ length: 50 }, (_, i) => size(`v${i}`));
    const w = wrapD1();
    const r = await put("/v1/products", { product_id: id, variants: { sync, add: imaged(50) } }, { env: { DB: w.db } });
    expect(r.status, r.text.slice(0, 300)).toBe(413);
    expect(r.json.errors).toEqual([
      expect.stringMatching(new RegExp(`^product ${id}: this change would make its answer`)),
    ]);
    expect(w.counts.calls).toBeLessThanOrEqual(2);
    expect((await get(`/v1/products/${id}`)).json.variants).toHaveLength(50);
  });
});

/** A round's body on three products (s, m, l each). */
async function round(body: (c: Case[]) => Json[]) {
  const cs = [await made(), await made(), await made()];
  const before = await Promise.all(cs.map(async (c) => (await get(`/v1/products/${c.id}`)).json));
  const w = wrapD1();
  const r = await put("/v1/products", body(cs), { env: { DB: w.db } });
  const after = await Promise.all(cs.map(async (c) => (await get(`/v1/products/${c.id}`)).json));
  return { cs, r, w, before, after };
}

describe("a round of several items, refused", () => {
  // n: a SKU and a slug no product has yet, new for each run.
  it.each<[string, (cs: Case[], n: string) => Json[], (cs: Case[], n: string) => string[], boolean[]]>([
    [
      "two items claiming one new SKU",
      (cs, n) => [
        { product_id: cs[0].id, variants: { add: [size("xl", { sku: n })] } },
        { product_id: cs[1].id, variants: { add: [size("xl", { sku: n })] } },
      ],
      (_cs, n) => [`[1].variants.add[0].sku: SKU ${n} is also claimed by item [0] of this request`],
      [true, false, false],
    ],
    [
      "two items claiming one new slug, and a third its SKU",
      (cs, n) => [
        { product_id: cs[0].id, slug: n.toLowerCase(), sku: n, variants: { sync: [{ sku: `${cs[0].p}0` }] } },
        { product_id: cs[1].id, slug: n.toLowerCase(), variants: { update: [{ variant_id: cs[1].v[0], qty: 4 }] } },
        { product_id: cs[2].id, variants: { update: [{ variant_id: cs[2].v[0], sku: n }] } },
      ],
      (_cs, n) => [
        `[1].slug: ${n.toLowerCase()} is also claimed by item [0] of this request`,
        `[2].variants.update[0].sku: SKU ${n} is also claimed by item [0] of this request`,
      ],
      [true, false, false],
    ],
    [
      "an item refused on its own and two claiming one new SKU (refused again when written without the first)",
      (cs, n) => [
        { product_id: cs[0].id, variants: { sync: [size("s"), size("s")] } },
        { product_id: cs[1].id, variants: { add: [size("xl", { sku: n })] } },
        { product_id: cs[2].id, sku: n, variants: { update: [{ variant_id: cs[2].v[0], qty: 4 }] } },
      ],
      (_cs, n) => [
        "[0].variants.sync[1]: same option values as variants.sync[0]",
        `[2].sku: SKU ${n} is also claimed by item [1] of this request`,
      ],
      [false, true, false],
    ],
    [
      "a refused item's new SKU, which a later item then takes",
      (cs, n) => [
        { product_id: cs[0].id, variants: { add: [size("s"), size("xl", { sku: n })] } },
        { product_id: cs[1].id, variants: { add: [size("xl", { sku: n })] } },
      ],
      (cs) => [`[0].variants.add[0]: option combination (s) already exists (variant ${cs[0].v[0]})`],
      [false, true, false],
    ],
    [
      "an item with two lists whose update names a variant its sync deletes",
      (cs) => [
        { product_id: cs[0].id, variants: { update: [{ variant_id: cs[0].v[1], qty: 8 }] } },
        {
          product_id: cs[1].id,
          variants: { sync: [{ sku: `${cs[1].p}0` }], update: [{ variant_id: cs[1].v[2], qty: 5 }] },
        },
        { product_id: cs[2].id, variants: { sync: [{ sku: `${cs[2].p}1` }], add: [size("xl")] } },
      ],
      (cs) => [`[1].variants.update[0].variant_id: variant ${cs[1].v[2]} is not a variant of product ${cs[1].id}`],
      [true, false, true],
    ],
  ])("words %s from one read, and writes the others", async (_name, body, errors, written) => {
    const n = uid("NEW");
    const { cs, r, w, before, after } = await round((cs) => body(cs, n));
    expect(r.status, r.text).toBe(200);
    expect(r.json.errors).toEqual(errors(cs, n));
    expect(r.json.success).toBe(written.filter(Boolean).length);
    // Each product written or left as it was.
    for (const [i, was] of written.entries()) {
      if (was) expect(after[i]).not.toEqual(before[i]);
      else expect(after[i]).toEqual(before[i]);
    }
    // The refused batch, the read that words it, the batch without the refused items.
    expect(w.counts.calls).toBeLessThanOrEqual(3);
  });
});
