import { describe, expect, it } from "vitest";
import { wrapD1 } from "./d1-wrap";
import { twoSizes } from "./fixtures/sizes";
import { get, put, uid } from "./helpers";

// A PUT of several items carrying variant lists takes the plan's rounds
// (src/products/update/plan.ts): one batch for the first item of each product named,
// its statements the same for 2 items or 8; a refused item worded from one read and the round
// written again without it; items naming one product in later rounds, in order.

const product = (prefix: string) => twoSizes(prefix, { title: "Rounds" });

const sync = (id: number, prefix: string, qty: number) => ({
  product_id: id,
  variants: {
    sync: [
      { sku: `${prefix}s`, qty },
      { variant_option1_value: "l", sku: `${prefix}l` },
    ],
  },
});

describe("PUT /v1/products with several variant lists", () => {
  it("takes one round trip of the same statements for 2 items or 8", async () => {
    const counts = [];
    for (const n of [2, 8]) {
      const prefixes = Array.from({ length: n }, () => `${uid("I")}-`);
      const ids = [];
      for (const p of prefixes) ids.push((await product(p)).product_id);
      const w = wrapD1();
      const r = await put(
        "/v1/products",
        ids.map((id, i) => sync(id, prefixes[i], i)),
        { env: { DB: w.db } },
      );
      expect(r.status, r.text).toBe(200);
      expect(r.json.success).toBe(n);
      expect(r.json.products.map((p: { variants: { sku: string; qty: number }[] }) => p.variants)).toEqual(
        prefixes.map((p, i) => [
          expect.objectContaining({ sku: `${p}s`, qty: i }),
          expect.objectContaining({ sku: `${p}l`, qty: 0 }),
        ]),
      );
      counts.push(w.counts.statementsPerCall);
    }
    // A read and a write, of the same statements for 2 items or 8.
    expect(counts[0]).toHaveLength(2);
    expect(counts[1]).toEqual(counts[0]);
  });

  it("words a refused item from one read and writes the others in the batch after it", async () => {
    const [a, b, c] = [`${uid("J")}-`, `${uid("J")}-`, `${uid("J")}-`];
    const [pa, pb, pc] = [await product(a), await product(b), await product(c)];
    const w = wrapD1();
    const r = await put(
      "/v1/products",
      [
        sync(pa.product_id, a, 3),
        // Two entries with the same option values: refused, the others written.
        {
          product_id: pb.product_id,
          variants: { sync: [{ variant_option1_value: "s" }, { variant_option1_value: "s" }] },
        },
        sync(pc.product_id, c, 4),
      ],
      { env: { DB: w.db } },
    );
    expect(r.status, r.text).toBe(200);
    expect(r.json.success).toBe(2);
    expect(r.json.errors).toEqual(["[1].variants.sync[1]: same option values as variants.sync[0]"]);
    // The read that words the refused item, the batch of the others.
    expect(w.counts.calls).toBe(2);
    expect((await get(`/v1/products/${pb.product_id}`)).json.variants.map((v: { sku: string }) => v.sku)).toEqual([
      `${b}s`,
      `${b}m`,
    ]);
    expect((await get(`/v1/products/${pc.product_id}`)).json.variants[0].qty).toBe(4);
  });

  it("applies items naming one product in order, a round each, and replays them under one key", async () => {
    const [a, b] = [`${uid("K")}-`, `${uid("K")}-`];
    const [pa, pb] = [await product(a), await product(b)];
    const body = [
      sync(pa.product_id, a, 5),
      sync(pb.product_id, b, 6),
      { product_id: pa.product_id, variants: { update: [{ variant_id: pa.variants[0].variant_id, adjust: 2 }] } },
    ];
    const key = uid("key");
    const w = wrapD1();
    const r = await put("/v1/products", body, { env: { DB: w.db }, headers: { "idempotency-key": key } });
    expect(r.status, r.text).toBe(200);
    // A read and a write for each round: the item naming a product again after its list is the second.
    expect(w.counts.calls).toBe(4);
    // A product named again keeps its first place, in the state the last item left it.
    const qtys = r.json.products.map((p: { variants: { qty: number }[] }) => p.variants[0].qty);
    expect(qtys).toEqual([7, 6]);
    const replay = await put("/v1/products", body, { headers: { "idempotency-key": key } });
    expect(replay.status).toBe(200);
    expect(replay.json).toEqual(r.json);
    expect((await get(`/v1/products/${pa.product_id}`)).json.variants[0].qty).toBe(7);
  });
});

describe("items of one round are each planned against the catalog as read", () => {
  it("refuses a SKU or slug another item of the request frees", async () => {
    const [a, b] = [`${uid("L")}-`, `${uid("L")}-`];
    const [pa, pb] = [await product(a), await product(b)];
    const slug = uid("slug").toLowerCase();
    expect((await put("/v1/products", { product_id: pa.product_id, slug })).status).toBe(200);
    const r = await put("/v1/products", [
      // Frees SKU a-m (its variant is synced away) and its slug ...
      { product_id: pa.product_id, slug: `${slug}-x`, variants: { sync: [{ sku: `${a}s` }] } },
      // ... which other items take: a new variant's SKU, then the product's own SKU and the slug.
      { product_id: pb.product_id, variants: { add: [{ variant_option1_value: "xl", sku: `${a}m` }] } },
      {
        product_id: pb.product_id,
        sku: `${a}m`,
        slug,
        variants: { update: [{ variant_id: pb.variants[0].variant_id, qty: 9 }] },
      },
    ]);
    expect([r.status, r.json.success], r.text).toEqual([200, 2]);
    expect(r.json.errors).toEqual([`[1].variants.add[0].sku: SKU ${a}m is already used by product ${pa.product_id}`]);
    // The third item, in a round of its own, finds them free.
    const after = (await get(`/v1/products/${pb.product_id}`)).json;
    expect([after.sku, after.slug, after.variants.map((v: { qty: number }) => v.qty)]).toEqual([`${a}m`, slug, [9, 1]]);
    expect((await get(`/v1/products/${pa.product_id}`)).json.variants.map((v: { sku: string }) => v.sku)).toEqual([
      `${a}s`,
    ]);
  });
});

describe("a body of items with and without lists", () => {
  it("writes a body of items with and without lists in the rounds: its products change in one batch", async () => {
    const [a, b] = [`${uid("M")}-`, `${uid("M")}-`];
    const [pa, pb] = [await product(a), await product(b)];
    const body = [sync(pa.product_id, a, 3), { product_id: pb.product_id, title: "Plain" }];
    const key = uid("key");
    const w = wrapD1();
    const r = await put("/v1/products", body, { env: { DB: w.db }, headers: { "idempotency-key": key } });
    expect(r.status, r.text).toBe(200);
    expect(r.json.products.map((p: { title: string; variants: unknown[] }) => [p.title, p.variants.length])).toEqual([
      ["Rounds", 2],
      ["Plain", 2],
    ]);
    // The read of the item without a list, then the round's one batch for both (a batch for each
    // would leave the first item written should the second call fail).
    expect(w.counts.calls).toBe(2);
    const replay = await put("/v1/products", body, { headers: { "idempotency-key": key } });
    expect(replay.json).toEqual(r.json);
    // Items naming one product, with a list and without: applied in order, a round each.
    const w2 = wrapD1();
    const ordered = await put(
      "/v1/products",
      [sync(pa.product_id, a, 4), { product_id: pa.product_id, title: "Later" }],
      { env: { DB: w2.db } },
    );
    expect(ordered.json.products[0]).toMatchObject({ title: "Later", variants: [{ qty: 4 }, { qty: 0 }] });
    expect(w2.counts.calls).toBe(4);
  });
});
