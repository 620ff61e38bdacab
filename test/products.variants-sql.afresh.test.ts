import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { wrapD1 } from "./d1-wrap";
import { watched } from "./fixtures/one-path";
import { type Json, product, size } from "./fixtures/sizes";
import { jsPlanReads, type Made, run, type Twin } from "./fixtures/twins";
import { get, post, put, uid } from "./helpers";

// A batch of the SQL plan refused, then a concurrent writer changes the catalog before the read
// that words the refusal finds anything refused (or before the batch re-checks what was read
// first): the body is planned again from the catalog as it is now, and written, as for any write
// a concurrent change refused (docs/products.md, "Updating products": planned again from a fresh
// read). Of two lists (a selected variant's fields are one), a head category merged into paths as
// read, and a round of several items, in its first round or a later one, with an
// Idempotency-Key's record as the request leaves it. The SQL plan routes and resolves the item
// again and writes it (src/products/update/variants-rounds.ts), as it does for one list.

/** Another product holding a SKU the body takes; `free` gives it up (the concurrent writer). */
async function holder() {
  const sku = uid("MOVING");
  const id = (await post("/v1/products", { title: "Holder", price: 1, sku })).json.products[0].product_id;
  return { sku, free: async () => expect((await put("/v1/products", { product_id: id, sku: null })).status).toBe(200) };
}

type Case = {
  /** The body, with the SKU another product gives up. */
  body: (made: Made[], sku: string) => unknown;
  /** The call before which the other product gives it up (the read after the refused batch). */
  at: number;
  /** Something else the concurrent writer does instead, before that call (`free`: the holder's SKU given up). */
  change?: (made: Made[], free: () => Promise<void>) => Promise<void>;
  /** What happens to the products before the request. */
  prepare?: (made: Made[]) => Promise<void>;
  count: number;
  /** The calls of the request: the refused batch, its read, and the write again (with `resolve`'s reads). */
  calls: number;
  /** The stored products' variants as [SKU, qty], and what else is checked of them. */
  check: (after: Json[], made: Made[], sku: string) => void;
};

const skus = (p: Json) => p.variants.map((v: Json) => [v.sku, v.qty]);

const cases: [string, Case][] = [
  [
    "two lists of one item",
    {
      count: 1,
      calls: 3,
      at: 2,
      body: ([a], sku) => ({
        product_id: a.id,
        variants: { add: [size("xl", { sku, qty: 9 })], update: [{ variant_id: a.v[0], qty: 3 }] },
      }),
      check: ([a], [m], sku) =>
        expect(skus(a)).toEqual([
          [`${m.p}0`, 3],
          [`${m.p}1`, 1],
          [`${m.p}2`, 2],
          [sku, 9],
        ]),
    },
  ],
  [
    "a selected variant's fields and a list",
    {
      count: 1,
      calls: 5,
      at: 3,
      body: ([a], sku) => ({ variant_id: a.v[1], price: 7, variants: { add: [size("xl", { sku, qty: 9 })] } }),
      check: ([a], [m], sku) => {
        expect(skus(a)).toEqual([
          [`${m.p}0`, 0],
          [`${m.p}1`, 1],
          [`${m.p}2`, 2],
          [sku, 9],
        ]);
        expect(a.variants.map((v: Json) => v.price)).toEqual([100, 7, 100, 100]);
      },
    },
  ],
  [
    "a head category merged into the paths as read",
    {
      count: 1,
      calls: 6,
      at: 2,
      // Between the read of the paths and the batch, another write changes them.
      change: async ([a]) => {
        await env.DB.prepare(`UPDATE products SET categories = '[["Other"]]' WHERE id = ?`).bind(a.id).run();
      },
      body: ([a]) => ({
        product_id: a.id,
        headcategory_name: "New",
        variants: { update: [{ variant_id: a.v[0], qty: 3 }] },
      }),
      check: ([a], [m]) => {
        expect(a.categories).toEqual([["New"], ["Other"]]);
        expect(skus(a)[0]).toEqual([`${m.p}0`, 3]);
      },
    },
  ],
  [
    "a round of two items",
    {
      count: 2,
      calls: 3,
      at: 2,
      body: ([a, b], sku) => [
        { product_id: a.id, variants: { update: [{ variant_id: a.v[0], qty: 5 }] } },
        { product_id: b.id, variants: { add: [size("xl", { sku, qty: 9 })] } },
      ],
      check: ([a, b], _made, sku) => {
        expect(skus(a)[0][1]).toBe(5);
        expect(skus(b).at(-1)).toEqual([sku, 9]);
      },
    },
  ],
  [
    "the second round of items naming a product twice",
    {
      count: 2,
      calls: 4,
      // The first round's batch, the second round's refused batch, then its read.
      at: 3,
      body: ([a, b], sku) => [
        { product_id: a.id, variants: { update: [{ variant_id: a.v[0], qty: 5 }] } },
        { product_id: b.id, variants: { update: [{ variant_id: b.v[0], qty: 6 }] } },
        { product_id: a.id, variants: { add: [size("xl", { sku, qty: 9 })] } },
      ],
      check: ([a, b], _made, sku) => {
        expect(skus(a)[0][1]).toBe(5);
        expect(skus(a).at(-1)).toEqual([sku, 9]);
        expect(skus(b)[0][1]).toBe(6);
      },
    },
  ],
  [
    "a product without a slug in a round, given one before the batch that writes the slug derived",
    {
      count: 2,
      // The batch, the read that derives the slug, then the batch with it, which finds one given.
      calls: 5,
      at: 3,
      prepare: async ([a]) => {
        await env.DB.prepare("UPDATE products SET slug = NULL WHERE id = ?").bind(a.id).run();
      },
      change: async ([a]) => {
        await env.DB.prepare("UPDATE products SET slug = ? WHERE id = ?").bind(`given-${a.id}`, a.id).run();
      },
      body: ([a, b]) => [
        { product_id: a.id, variants: { update: [{ variant_id: a.v[0], qty: 5 }] } },
        { product_id: b.id, variants: { update: [{ variant_id: b.v[0], qty: 6 }] } },
      ],
      check: ([a, b], [m]) => {
        expect([a.slug, skus(a)[0][1], skus(b)[0][1]]).toEqual([`given-${m.id}`, 5, 6]);
      },
    },
  ],
  [
    "a selection by SKU whose variant another product has by the batch",
    {
      count: 3,
      // The read of the selection, the batch its guard refuses, the read that finds the SKU on
      // another product, the read again and the batch.
      calls: 5,
      at: 2,
      change: async ([a, , c]) => {
        expect((await put("/v1/products", { variant_id: a.v[0], sku: null })).status).toBe(200);
        expect((await put("/v1/products", { variant_id: c.v[0], sku: `${a.p}0` })).status).toBe(200);
      },
      body: ([a, b]) => [
        { sku: `${a.p}0`, price: 5, variants: { add: [size("xl", { qty: 9 })] } },
        { product_id: b.id, variants: { update: [{ variant_id: b.v[0], qty: 6 }] } },
      ],
      check: ([a, b, c], [m]) => {
        expect(skus(a)).toEqual([
          [null, 0],
          [`${m.p}1`, 1],
          [`${m.p}2`, 2],
        ]);
        expect(skus(c)).toEqual([
          [`${m.p}0`, 0],
          [expect.any(String), 1],
          [expect.any(String), 2],
          [null, 9],
        ]);
        expect(c.variants[0].price).toBe(5);
        expect(skus(b)[0][1]).toBe(6);
      },
    },
  ],
  [
    "an item without a list selecting by SKU, the SKU moved to another product before the read",
    {
      count: 3,
      // The round's read (the selection and the item without a list), the batch the holder's SKU
      // refuses, the read that finds nothing refused and the selection on another product, the
      // round's read again and its batch.
      calls: 5,
      at: 3,
      change: async ([a, , c], free) => {
        await free();
        expect((await put("/v1/products", { variant_id: a.v[0], sku: null })).status).toBe(200);
        expect((await put("/v1/products", { variant_id: c.v[0], sku: `${a.p}0` })).status).toBe(200);
      },
      body: ([a, b], sku) => [
        { sku: `${a.p}0`, price: 5 },
        { product_id: b.id, variants: { add: [size("xl", { sku, qty: 9 })] } },
      ],
      check: ([a, b, c], [m], sku) => {
        expect(a.variants.map((v: Json) => [v.sku, v.price])).toEqual([
          [null, 100],
          [`${m.p}1`, 100],
          [`${m.p}2`, 100],
        ]);
        expect(c.variants[0].sku).toBe(`${m.p}0`);
        expect(c.variants[0].price).toBe(5);
        expect(skus(b).at(-1)).toEqual([sku, 9]);
      },
    },
  ],
];

describe("a refused batch a concurrent writer lifts before the read that words it", () => {
  it.each(cases)("%s: planned again from the catalog as it is, and written", async (_name, c) => {
    const h = await holder();
    const twin: Twin = {
      count: c.count,
      prepare: c.prepare,
      body: (made) => c.body(made, h.sku),
      before: async (call, made) => {
        if (call === c.at) await (c.change ? c.change(made, h.free) : h.free());
      },
    };
    const [r, seen] = await watched(() => run(twin));
    expect(r.status, JSON.stringify(r.raw)).toBe(200);
    expect(r.json.errors).toEqual([]);
    const after = [];
    for (const m of r.made) after.push((await get(`/v1/products/${m.id}`)).json);
    c.check(after, r.made, h.sku);
    // The answer is the products as stored.
    for (const p of r.raw.products) expect(p).toEqual(after.find((a) => a.product_id === p.product_id));
    // Written again by the SQL plan: no item with a list reaches the general planner.
    expect(seen).toEqual([]);
    expect(r.calls).toBe(c.calls);
  });

  it.each(cases)("%s: the answer recorded under the Idempotency-Key, replayed", async (_name, c) => {
    const h = await holder();
    const key = uid("key");
    const twin: Twin = {
      count: c.count,
      prepare: c.prepare,
      body: (made) => c.body(made, h.sku),
      headers: { "idempotency-key": key },
      before: async (call, made) => {
        if (call === c.at) await (c.change ? c.change(made, h.free) : h.free());
      },
    };
    const [r, seen] = await watched(() => run(twin));
    expect(r.status, JSON.stringify(r.raw)).toBe(200);
    expect(seen).toEqual([]);
    const again = await put("/v1/products", twin.body(r.made), { headers: { "idempotency-key": key } });
    expect([again.status, again.json]).toEqual([200, r.raw]);
    // Nothing was applied twice.
    for (const p of r.raw.products) expect((await get(`/v1/products/${p.product_id}`)).json).toEqual(p);
  });
});

describe("a later round written again after a concurrent writer", () => {
  it("leaves the key's record stopped partway when D1 fails before it is written again", async () => {
    const h = await holder();
    const [a, b] = [`${uid("F")}-`, `${uid("F")}-`];
    const [pa, pb] = [await product(a), await product(b)];
    const body = [
      { product_id: pa.product_id, variants: { update: [{ variant_id: pa.variants[0].variant_id, qty: 5 }] } },
      { product_id: pb.product_id, variants: { update: [{ variant_id: pb.variants[0].variant_id, qty: 6 }] } },
      { product_id: pa.product_id, variants: { add: [size("xl", { sku: h.sku, qty: 9 })] } },
    ];
    const headers = { "idempotency-key": uid("key") };
    // The first round's batch, the second's refused batch, its read (the SKU freed before it),
    // then the second round's batch again, which fails.
    const w = wrapD1({ failCall: 4, before: async (call) => (call === 3 ? h.free() : undefined) });
    const r = await put("/v1/products", body, { env: { DB: w.db }, headers });
    expect(r.status, r.text).toBe(503);
    const retry = await put("/v1/products", body, { headers });
    expect(retry.status).toBe(409);
    expect(retry.json.error).toMatch(/^a request with this Idempotency-Key stopped partway/);
    // The first round applied once, the second not at all.
    const stored = (await get(`/v1/products/${pa.product_id}`)).json;
    expect(skus(stored)).toEqual([
      [`${a}0`, 5],
      [`${a}1`, 1],
      [`${a}2`, 2],
    ]);
    expect(skus((await get(`/v1/products/${pb.product_id}`)).json)[0]).toEqual([`${b}0`, 6]);
  });
});

describe("one item under an If-Match, refused, then lifted by another product's write", () => {
  it("is written again under the same tag, with the ETag the write leaves", async () => {
    const h = await holder();
    const p = `${uid("M")}-`;
    const made = await product(p);
    const etag = String((await get(`/v1/products/${made.product_id}`)).headers.get("etag"));
    // The tag's read, the refused batch, then the read of the product's version (still the tag's),
    // before which the other product gives the SKU up.
    const w = wrapD1({ before: async (call) => (call === 3 ? h.free() : undefined) });
    const r = await put(
      "/v1/products",
      { product_id: made.product_id, variants: { update: [{ variant_id: made.variants[0].variant_id, sku: h.sku }] } },
      { env: { DB: w.db }, headers: { "if-match": etag } },
    );
    expect(r.status, r.text).toBe(200);
    const now = await get(`/v1/products/${made.product_id}`);
    expect(r.json.products[0]).toEqual(now.json);
    expect(now.json.variants[0].sku).toBe(h.sku);
    expect(r.headers.get("etag")).toBe(now.headers.get("etag"));
    expect(jsPlanReads(w.counts.queries)).toBe(0);
  });
});
