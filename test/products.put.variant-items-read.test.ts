import { describe, expect, it } from "vitest";
import { wrapD1 } from "./d1-wrap";
import { type Json, twoSizes } from "./fixtures/sizes";
import { get, put, uid } from "./helpers";

// Items of a PUT of several that need the stored product read first (a selection by SKU or
// variant id, a head category or slug derived from what is stored), carry a selected variant's own
// fields, or are refused as they are: the plan's rounds take them
// (src/products/update/plan.ts) after one read of one statement for every item
// (src/products/update/plan.ts), with the same statements for 2 items or 8. Each
// journey pins its status, errors and what its products keep; each product answered is the one
// stored, and a body refused whole writes nothing.

type Made = { product_id: number; variants: { variant_id: number; sku: string }[] };

const product = (prefix: string, extra: Record<string, unknown> = {}): Promise<Made> =>
  twoSizes(prefix, { title: "Read first", categories: [["Shoes"], ["Sale", "Summer"]], ...extra });

/** The body's answer and products, with the run's SKU prefixes and ids taken out. */
async function run(
  count: number,
  body: (prefixes: string[], made: Made[]) => unknown[],
): Promise<{ status: number; json: Json; after: Json[]; calls: number[] }> {
  const prefixes = Array.from({ length: count }, () => `${uid("R")}-`);
  const made: Made[] = [];
  for (const p of prefixes) made.push(await product(p));
  const before = [];
  for (const m of made) before.push((await get(`/v1/products/${m.product_id}`)).json);
  const w = wrapD1();
  const r = await put("/v1/products", body(prefixes, made), { env: { DB: w.db } });
  const plain = (json: unknown) => {
    let text = JSON.stringify(json);
    prefixes.forEach((p, i) => {
      text = text
        .replaceAll(p, `<${i}>`)
        .replaceAll(p.toLowerCase(), `<${i}l>`)
        .replaceAll(`product ${made[i].product_id}`, `product <${i}>`);
    });
    return JSON.parse(
      text
        .replace(/"(variant_id|product_id)":\d+/g, '"$1":0')
        .replace(/variant \d+/g, "variant <v>")
        .replace(/"(created_at|updated_at)":"[^"]+"/g, '"$1":""')
        .replace(/"(slug|url)":"([^"]*?)(-\d+)?"/g, '"$1":"$2"'),
    );
  };
  const stored = [];
  for (const m of made) stored.push((await get(`/v1/products/${m.product_id}`)).json);
  if (r.status >= 400) expect(stored).toEqual(before);
  for (const p of r.json.products) expect(stored).toContainEqual(p);
  const out = { status: r.status, json: plain(r.json), after: plain(stored), calls: w.counts.statementsPerCall };
  return out;
}

const HAS_VARIANTS = "the product has variants, whose qty is its stock: select a variant or use variants.update";
/** 0 to n - 1. */
const upTo = (n: number) => Array.from({ length: n }, (_, i) => i);
/** What a product keeps that these bodies change: its title, its SKU and each variant's SKU and count. */
const kept = (p: Json) => `${p.title} ${p.sku}: ${p.variants.map((v: Json) => `${v.sku} ${v.qty}`).join(", ")}`;

describe("several items selected by SKU or variant id", () => {
  it("a stock tool selecting variants by SKU: one read, one batch, the same statements for 2 or 8", async () => {
    const body = (prefixes: string[], made: Made[]) =>
      prefixes.map((p, i) => ({
        sku: `${p}s`,
        stock: 10 + i,
        price: 150,
        variants: { update: [{ variant_id: made[i].variants[1].variant_id, adjust: -1 }] },
      }));
    const counts = [];
    for (const n of [2, 8]) {
      const r = await run(n, body);
      expect(r.json).toMatchObject({ success: n, errors: [] });
      expect((r.json as { products: unknown[] }).products[1]).toMatchObject({
        variants: [
          { sku: "<1>s", qty: 11, price: 150 },
          { sku: "<1>m", qty: 0 },
        ],
      });
      // The read, then the batch.
      expect(r.calls).toHaveLength(2);
      counts.push(r.calls);
    }
    expect(counts[1]).toEqual(counts[0]);
  });

  it("answers the 404 of a SKU no one has, and writes the others in the same batch", async () => {
    const r = await run(3, (p, made) => [
      { sku: `${p[0]}m`, variants: { update: [{ variant_id: made[0].variants[0].variant_id, qty: 5 }] } },
      { sku: `${p[1]}gone`, variants: { update: [{ variant_id: made[1].variants[0].variant_id, qty: 5 }] } },
      { variant_id: made[2].variants[1].variant_id, visible: 0, variants: { sync: [{ sku: `${p[2]}m` }] } },
    ]);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ success: 2, errors: ["[1].sku: no product or variant has SKU <1>gone"] });
    expect(r.calls).toHaveLength(2);
    expect(r.after[2]).toMatchObject({ variants: [{ sku: "<2>m", visible: 0 }] });
    expect(r.after.map(kept)).toEqual([
      "Read first null: <0>s 5, <0>m 1",
      "Read first null: <1>s 1, <1>m 1",
      "Read first null: <2>m 1",
    ]);
  });

  it("applies items selecting one product in order, each round reading what the one before left", async () => {
    const r = await run(2, (p, made) => [
      { product_id: made[0].product_id, title: "Renamed", variants: { sync: [{ sku: `${p[0]}s` }] } },
      // The SKU the first item synced away: not found when the second item's round reads.
      { sku: `${p[0]}m`, variants: { update: [{ variant_id: made[0].variants[0].variant_id, qty: 3 }] } },
      // The slug derived from the title the first item gave.
      { sku: `${p[0]}s`, slug: null, variants: { update: [{ variant_id: made[0].variants[0].variant_id, qty: 4 }] } },
      { sku: `${p[1]}s`, variants: { add: [{ variant_option1_value: "l", sku: `${p[1]}l` }] } },
    ]);
    expect([r.status, r.json]).toMatchObject([
      200,
      { success: 3, errors: ["[1].sku: no product or variant has SKU <0>m"] },
    ]);
    expect(r.after.map(kept)).toEqual(["Renamed null: <0>s 4", "Read first null: <1>s 1, <1>m 1, <1>l 0"]);
    expect(r.after[0]).toMatchObject({ title: "Renamed", slug: "renamed", variants: [{ sku: "<0>s", qty: 4 }] });
  });
});

describe("the statements of a body of these forms", () => {
  it("are the same for 2 items of each form or 8", async () => {
    // Per product: selected by variant id with its own fields, a head category merged into the
    // stored paths, and the product's own stock beside a list (refused as it is).
    const forms = (p: string, m: Made, i: number) =>
      [
        { variant_id: m.variants[0].variant_id, price: 90, variants: { sync: [{ sku: `${p}s` }, { sku: `${p}m` }] } },
        {
          product_id: m.product_id,
          headcategory_name: "Sale",
          variants: { update: [{ variant_id: m.variants[1].variant_id, qty: i }] },
        },
        { product_id: m.product_id, stock: 1, variants: { add: [{ variant_option1_value: "xl" }] } },
      ][i % 3];
    const counts = [];
    for (const n of [2, 8]) {
      const r = await run(n * 3, (p, made) => made.map((m, i) => forms(p[i], m, i)));
      expect([r.status, r.json.success]).toEqual([200, 2 * n]);
      // The product's own stock beside a list refused as it is; the others written.
      const third = upTo(n * 3).filter((i) => i % 3 === 2);
      expect(r.json.errors).toEqual(third.map((i) => `[${i}].stock: ${HAS_VARIANTS}`));
      expect(r.after.map(kept)).toEqual(
        upTo(n * 3).map((i) => `Read first null: <${i}>s 1, <${i}>m ${i % 3 === 1 ? i : 1}`),
      );
      counts.push(r.calls);
    }
    // The read, which words the refused items, and the batch of the others.
    expect(counts[0]).toHaveLength(2);
    expect(counts[1]).toEqual(counts[0]);
  });
});

describe("the guards before the lists of a round of several", () => {
  it("are one statement each for 2 items or 8: empty syncs, own counts expected, counts on the way", async () => {
    const forms = (m: Made, i: number) => {
      const [v0] = m.variants.map((v) => v.variant_id);
      return i % 2
        ? { product_id: m.product_id, stock: 5, expected_stock: 0, variants: { sync: [] } }
        : {
            product_id: m.product_id,
            variants: {
              update: [
                { variant_id: v0, adjust: 2 },
                { variant_id: v0, adjust: -1 },
              ],
            },
          };
    };
    const counts = [];
    for (const n of [2, 8]) {
      const r = await run(n * 2, (_p, made) => made.map((m, i) => forms(m, i)));
      expect([r.status, r.json.errors]).toEqual([200, []]);
      // An empty sync leaves no variant; two adjusts of one variant add up.
      expect(r.after.map(kept)).toEqual(
        upTo(n * 2).map((i) => `Read first null: ${i % 2 ? "" : `<${i}>s 2, <${i}>m 1`}`),
      );
      counts.push(r.calls);
    }
    // The read and the batch: the counts are conditions of the guard, not statements of their own.
    expect(counts[0]).toHaveLength(2);
    expect(counts[1]).toEqual(counts[0]);
  });
});

describe("several items deriving fields from the stored product", () => {
  it("merges a head category into the stored paths and derives a slug from the stored title", async () => {
    const r = await run(3, (p, made) => [
      { product_id: made[0].product_id, headcategory_name: "Sale", variants: { sync: [{ sku: `${p[0]}m` }] } },
      {
        product_id: made[1].product_id,
        headcategory_name: "New",
        slug: null,
        variants: { add: [{ variant_option1_value: "l" }] },
      },
      {
        product_id: made[2].product_id,
        title: "Given",
        slug: null,
        variants: { update: [{ variant_id: made[2].variants[0].variant_id, qty: 0 }] },
      },
    ]);
    expect(r.json).toMatchObject({ success: 3, errors: [] });
    expect(r.after.map(kept)).toEqual([
      "Read first null: <0>m 1",
      "Read first null: <1>s 1, <1>m 1, null 0",
      "Given null: <2>s 0, <2>m 1",
    ]);
    expect(r.after[0]).toMatchObject({ categories: [["Sale", "Summer"], ["Shoes"]] });
    expect(r.after[1]).toMatchObject({ slug: "read-first", categories: [["New"], ["Shoes"], ["Sale", "Summer"]] });
    expect(r.after[2]).toMatchObject({ slug: "given" });
    expect(r.calls).toHaveLength(2);
  });
});

describe("several items, one refused as it is", () => {
  it("words it from one read and writes the other in the batch after it", async () => {
    const r = await run(2, (p, made) => [
      { product_id: made[0].product_id, stock: 4, variants: { sync: [{ sku: `${p[0]}s` }] } },
      { product_id: made[1].product_id, variants: { sync: [{ sku: `${p[1]}s`, qty: 6 }] } },
    ]);
    expect(r.json).toMatchObject({
      success: 1,
      errors: [`[0].stock: ${HAS_VARIANTS}`],
    });
    expect(r.after[0]).toMatchObject({ variants: [{ sku: "<0>s" }, { sku: "<0>m" }] });
    expect(r.after.map(kept)).toEqual(["Read first null: <0>s 1, <0>m 1", "Read first null: <1>s 6"]);
    // The read that words the refused item, then the batch of the other.
    expect(r.calls).toHaveLength(2);
  });

  it("words entries that disagree on option names beside a selection, with no write when all are refused", async () => {
    const r = await run(2, (p, made) => [
      {
        sku: `${p[0]}s`,
        variants: {
          add: [
            { variant_option1_name: "Size", variant_option1_value: "l" },
            { variant_option1_name: "Colour", variant_option1_value: "red" },
          ],
        },
      },
      {
        product_id: made[1].product_id,
        adjust: 1,
        variants: { update: [{ variant_id: made[1].variants[0].variant_id, qty: 2 }] },
      },
    ]);
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual([
      "[0].variants.add[1].variant_option1_name: option names differ from those of variants.add[0]",
      `[1].adjust: ${HAS_VARIANTS}`,
    ]);
    // The read alone: nothing to write.
    expect(r.calls).toHaveLength(1);
  });
});

// A body with an item without a list takes the rounds too, that item planned by the general plan's
// planner in the round it falls in: its products change in one batch a round, never the rounds'
// batch and another after it.
describe("a body with items without a list", () => {
  it("applies an item naming a product an item with a list names, after it, in order", async () => {
    const r = await run(2, (p, made) => [
      { sku: `${p[0]}s`, variants: { sync: [{ sku: `${p[0]}s`, qty: 2 }] } },
      {
        product_id: made[1].product_id,
        variants: { update: [{ variant_id: made[1].variants[0].variant_id, qty: 3 }] },
      },
      { product_id: made[0].product_id, title: "After the sync", price: 120 },
    ]);
    expect(r.json).toMatchObject({ success: 3, errors: [] });
    expect(r.after[0]).toMatchObject({ title: "After the sync", price: 120, variants: [{ qty: 2 }] });
    expect(r.after.map(kept)).toEqual(["After the sync null: <0>s 2", "Read first null: <1>s 3, <1>m 1"]);
    // Two rounds (the first product is named twice), a read and a batch each.
    expect(r.calls).toHaveLength(4);
  });

  it("writes an item giving a SKU or slug beside a list's item in one batch", async () => {
    const r = await run(2, (p, made) => [
      { product_id: made[0].product_id, variants: { sync: [{ sku: `${p[0]}s` }] } },
      { product_id: made[1].product_id, sku: `${p[1]}p`, slug: `${p[1].toLowerCase()}slug` },
    ]);
    expect(r.json).toMatchObject({ success: 2, errors: [] });
    expect(r.after[1]).toMatchObject({ sku: "<1>p", slug: "<1l>slug" });
    expect(r.after.map(kept)).toEqual(["Read first null: <0>s 1", "Read first <1>p: <1>s 1, <1>m 1"]);
    // The read of the item without a list and the round's one batch.
    expect(r.calls).toHaveLength(2);
  });

  it("refuses an item giving a SKU another item's list syncs away (the catalog as read)", async () => {
    const r = await run(2, (p, made) => [
      { product_id: made[0].product_id, variants: { sync: [{ sku: `${p[0]}s` }] } },
      // The SKU the first item syncs away: taken as the round reads it.
      { product_id: made[1].product_id, sku: `${p[0]}m` },
    ]);
    expect(r.json).toMatchObject({ success: 1, errors: ["[1].sku: SKU <0>m is already used by product <0>"] });
    expect(r.after.map(kept)).toEqual(["Read first null: <0>s 1", "Read first null: <1>s 1, <1>m 1"]);
  });

  it("lets a later round take a SKU an item of the first round frees", async () => {
    const r = await run(2, (p, made) => [
      { product_id: made[0].product_id, variants: { sync: [{ sku: `${p[0]}s` }] } },
      // Frees <1>s ...
      {
        product_id: made[1].product_id,
        variants: { sync: [], add: [{ variant_option1_name: "Size", variant_option1_value: "xl" }] },
      },
      // ... which the second item naming the first product takes, in a later round.
      { product_id: made[0].product_id, variants: { add: [{ variant_option1_value: "l", sku: `${p[1]}s` }] } },
    ]);
    expect(r.json).toMatchObject({ success: 3, errors: [] });
    expect(r.after.map(kept)).toEqual(["Read first null: <0>s 1, <1>s 0", "Read first null: null 0"]);
  });
});
