import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { type D1Counts, wrapD1 } from "./d1-wrap";
import { normal } from "./fixtures/normal";
import { type Json, twoSizes } from "./fixtures/sizes";
import { get, put, subscribeAll, uid } from "./helpers";

// A PUT of several items, some with a variant list and some without, takes the plan's rounds
// (src/products/update/plan.ts): the items without a list are planned by the general
// plan's planner (src/products/update/plan.ts) from a read in the round's first call and written in
// the round's one batch. Each body is answered whole by the rounds (the general plan's entry is not
// reached); each case pins its status, errors in order, what its products keep, and where it
// matters the events and D1 calls.

// Events are recorded only while an endpoint subscribes (docs/webhooks.md, "Webhooks").
beforeAll(subscribeAll);

type Product = Awaited<ReturnType<typeof twoSizes>>;

/** A product of sizes s and m (SKUs `${prefix}s`, `${prefix}m`) with its own SKU `${prefix}p`. */
const product = (prefix: string) => twoSizes(prefix, { title: "Mixed", sku: `${prefix}p` });

const sync = (p: Product, prefix: string, qty: number) => ({
  product_id: p.product_id,
  variants: {
    sync: [
      { sku: `${prefix}s`, qty },
      { variant_option1_value: "l", sku: `${prefix}l` },
    ],
  },
});

async function eventsOf(ids: number[]) {
  const { results } = await env.DB.prepare(
    "SELECT type, product_id FROM events WHERE product_id IN (SELECT value FROM json_each(?)) ORDER BY rowid",
  )
    .bind(JSON.stringify(ids))
    .all<{ type: string; product_id: number }>();
  return results.map((e) => [e.type, ids.indexOf(e.product_id)]);
}

type Body = (ps: Product[], prefixes: string[]) => unknown;

/** What a product keeps that these bodies change: its title, its SKU and each variant's SKU and count. */
const kept = (p: Json) => `${p.title} ${p.sku}: ${p.variants.map((v: Json) => `${v.sku} ${v.qty}`).join(", ")}`;

/**
 * The body sent to `n` fresh products: the rounds answer it whole (the general plan's entry,
 * `toJsPlan`, is not reached), each product answered is the stored one, and a keyed retry answers
 * the same without writing again. The outcome with prefixes, ids and times taken out, with the
 * events and D1 calls.
 */
async function rounds(
  n: number,
  body: Body,
  keyed = false,
  given: Record<string, string> = {},
): Promise<{ status: number; answer: Json; stored: Json[]; events: unknown[][]; calls: D1Counts }> {
  const prefixes = Array.from({ length: n }, () => `${uid("X")}-`);
  const ps: Product[] = [];
  for (const p of prefixes) ps.push(await product(p));
  const w = wrapD1();
  const headers: Record<string, string> = keyed ? { ...given, "idempotency-key": uid("key") } : given;
  const r = await put("/v1/products", body(ps, prefixes), { env: { DB: w.db }, headers });
  if (keyed) {
    // A retry with the key answers what the request did, without writing again.
    const replay = await put("/v1/products", body(ps, prefixes), { headers });
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect([replay.status, replay.json]).toEqual([r.status, r.json]);
  }
  const stored = [];
  for (const p of ps) stored.push((await get(`/v1/products/${p.product_id}`)).json);
  if (!given.prefer) for (const p of r.json.products) expect(stored).toContainEqual(p);
  let text = JSON.stringify({ status: r.status, answer: r.json, stored });
  prefixes.forEach((prefix, i) => {
    text = text
      .replaceAll(prefix, `<${i}>`)
      .replaceAll(prefix.toLowerCase(), `<${i}>`)
      .replace(new RegExp(`product ${ps[i].product_id}\\b`, "g"), `product <${i}>`);
  });
  const events = await eventsOf(ps.map((p) => p.product_id));
  return { ...normal(JSON.parse(text), "\u0000", -1), events, calls: w.counts };
}

describe("PUT /v1/products with items with and without variant lists", () => {
  it("writes a body of items with and without lists in one read and one batch", async () => {
    const r = await rounds(4, (ps, x) => [
      sync(ps[0], x[0], 3),
      { product_id: ps[1].product_id, title: "Plain", price: 5 },
      { variant_id: ps[2].variants[0].variant_id, stock: 4, price: 9 },
      { sku: `${x[3]}m`, stock: 2, title: "By SKU" },
    ]);
    expect(r.status).toBe(200);
    expect(r.answer.success).toBe(4);
    expect(r.answer.products.map((p: Json) => [p.title, p.price, p.variants.map((v: Json) => v.qty)])).toEqual([
      ["Mixed", 100, [3, 0]],
      ["Plain", 5, [1, 1]],
      ["Mixed", 100, [4, 1]],
      ["By SKU", 100, [1, 2]],
    ]);
    expect(r.answer.products[2].variants[0].price).toBe(9);
    expect(r.stored.map(kept)).toEqual([
      "Mixed <0>p: <0>s 3, <0>l 0",
      "Plain <1>p: <1>s 1, <1>m 1",
      "Mixed <2>p: <2>s 4, <2>m 1",
      "By SKU <3>p: <3>s 1, <3>m 2",
    ]);
    // One product.update per item, in the body's order, written with the change.
    expect(r.events.filter(([type]) => type === "product.update")).toEqual(
      [0, 1, 2, 3].map((i) => ["product.update", i]),
    );
    // The read of the items without a list (the general plan's four statements), then the one batch.
    expect(r.calls.statementsPerCall.map((n) => n > 1)).toEqual([true, true]);
    expect(r.calls.queries[0][0]).toMatch(/answer_size/);
  });

  it("answers a minimal product for each item under Prefer: return=minimal", async () => {
    const r = await rounds(
      3,
      (ps, x) => [
        sync(ps[0], x[0], 3),
        { product_id: ps[1].product_id, title: "Plain" },
        { sku: `${x[2]}s`, stock: 6 },
      ],
      false,
      { prefer: "return=minimal" },
    );
    expect(r.answer.success).toBe(3);
    // Ids, SKUs and updated_at: what a client needs to address what it wrote.
    expect(
      r.answer.products.map((p: Json) => [Object.keys(p).sort(), p.sku, p.variants.map((v: Json) => v.sku)]),
    ).toEqual([
      [["product_id", "sku", "updated_at", "variants"], "<0>p", ["<0>s", "<0>l"]],
      [["product_id", "sku", "updated_at", "variants"], "<1>p", ["<1>s", "<1>m"]],
      [["product_id", "sku", "updated_at", "variants"], "<2>p", ["<2>s", "<2>m"]],
    ]);
    expect(r.stored.map(kept)).toEqual([
      "Mixed <0>p: <0>s 3, <0>l 0",
      "Plain <1>p: <1>s 1, <1>m 1",
      "Mixed <2>p: <2>s 6, <2>m 1",
    ]);
  });

  it("refuses an item without a list (404, another product's SKU) and writes the others", async () => {
    const r = await rounds(3, (ps, x) => [
      sync(ps[0], x[0], 2),
      { product_id: 2_000_000_000, title: "Nobody" },
      { product_id: ps[1].product_id, sku: `${x[0]}p` },
      { variant_id: 2_000_000_001, stock: 1 },
      { product_id: ps[2].product_id, title: "Written" },
    ]);
    expect(r.status).toBe(200);
    expect(r.answer.success).toBe(2);
    expect(r.answer.errors).toEqual([
      "[1].product_id: product 2000000000 not found",
      expect.stringMatching(/^\[2\]\.sku: SKU <0>p /),
      "[3].variant_id: variant <v> not found",
    ]);
    expect(r.stored.map((p: Json) => [p.title, p.sku, p.variants.length])).toEqual([
      ["Mixed", "<0>p", 2],
      ["Mixed", "<1>p", 2],
      ["Written", "<2>p", 2],
    ]);
    // Refused as read: no call more than the accepted body's.
    expect(r.calls.calls).toBe(2);
  });

  it.each<[string, Body, string[], string[]]>([
    // A SKU an item without a list frees is another product's as read: an item taking it is refused.
    [
      "a list taking a SKU an item without a list frees",
      (ps, x) => [
        { product_id: ps[1].product_id, sku: `${x[1]}p2` },
        { product_id: ps[0].product_id, variants: { add: [{ variant_option1_value: "xl", sku: `${x[1]}p` }] } },
      ],
      ["[1].variants.add[0].sku: SKU <1>p is already used by product <1>"],
      ["Mixed <0>p: <0>s 1, <0>m 1", "Mixed <1>p2: <1>s 1, <1>m 1", "Mixed <2>p: <2>s 1, <2>m 1"],
    ],
    [
      "an item without a list taking a SKU a list frees",
      (ps, x) => [
        { product_id: ps[0].product_id, variants: { sync: [{ sku: `${x[0]}s` }] } },
        { product_id: ps[1].product_id, sku: `${x[0]}m` },
      ],
      ["[1].sku: SKU <0>m is already used by product <0>"],
      ["Mixed <0>p: <0>s 1", "Mixed <1>p: <1>s 1, <1>m 1", "Mixed <2>p: <2>s 1, <2>m 1"],
    ],
    // Two items claiming one new SKU or slug: the later ones are refused, naming the first.
    [
      "a list and then items without one claiming one new SKU",
      (ps, x) => [
        { product_id: ps[0].product_id, variants: { add: [{ variant_option1_value: "xl", sku: `${x[0]}new` }] } },
        { product_id: ps[1].product_id, sku: `${x[0]}new` },
        { variant_id: ps[2].variants[1].variant_id, sku: `${x[0]}new`, stock: 5 },
      ],
      [
        "[1].sku: SKU <0>new is also claimed by item [0] of this request",
        "[2].sku: SKU <0>new is also claimed by item [0] of this request",
      ],
      ["Mixed <0>p: <0>s 1, <0>m 1, <0>new 0", "Mixed <1>p: <1>s 1, <1>m 1", "Mixed <2>p: <2>s 1, <2>m 1"],
    ],
    [
      "an item without a list and then a list claiming one new SKU",
      (ps, x) => [
        { product_id: ps[1].product_id, sku: `${x[0]}new`, title: "First" },
        { product_id: ps[0].product_id, variants: { add: [{ variant_option1_value: "xl", sku: `${x[0]}new` }] } },
        sync(ps[2], x[2], 6),
      ],
      ["[1].variants.add[0].sku: SKU <0>new is also claimed by item [0] of this request"],
      ["Mixed <0>p: <0>s 1, <0>m 1", "First <0>new: <1>s 1, <1>m 1", "Mixed <2>p: <2>s 6, <2>l 0"],
    ],
    [
      "one new slug",
      (ps, x) => [
        { product_id: ps[1].product_id, slug: `${x[0]}slug`.toLowerCase() },
        { ...sync(ps[0], x[0], 1), slug: `${x[0]}slug`.toLowerCase() },
        { product_id: ps[2].product_id, slug: `${x[0]}slug`.toLowerCase(), title: "Third" },
      ],
      [
        "[1].slug: <0>slug is also claimed by item [0] of this request",
        "[2].slug: <0>slug is also claimed by item [0] of this request",
      ],
      ["Mixed <0>p: <0>s 1, <0>m 1", "Mixed <1>p: <1>s 1, <1>m 1", "Mixed <2>p: <2>s 1, <2>m 1"],
    ],
    // The round's only list refused as it is: the item without a list is the batch's only write.
    [
      "a list refused as it is beside an item without one",
      (ps) => [
        {
          product_id: ps[0].product_id,
          variants: {
            add: [
              { variant_option1_name: "Size", variant_option1_value: "xl" },
              { variant_option1_name: "Fit", variant_option1_value: "slim" },
            ],
          },
        },
        { product_id: ps[1].product_id, title: "Written alone" },
      ],
      ["[0].variants.add[1].variant_option1_name: option names differ from those of variants.add[0]"],
      ["Mixed <0>p: <0>s 1, <0>m 1", "Written alone <1>p: <1>s 1, <1>m 1", "Mixed <2>p: <2>s 1, <2>m 1"],
    ],
  ])("words %s", async (_, body, errors, stored) => {
    const r = await rounds(3, body);
    expect(r.status).toBe(200);
    expect(r.answer.errors).toEqual(errors);
    expect(r.stored.map(kept)).toEqual(stored);
  });

  it("applies items naming one product in order, with and without lists, a round each", async () => {
    const r = await rounds(2, (ps, x) => [
      { product_id: ps[0].product_id, title: "First", sku: `${x[0]}p2` },
      sync(ps[0], x[0], 5),
      { product_id: ps[1].product_id, sku: `${x[0]}p` },
      { product_id: ps[0].product_id, variants: { update: [{ variant_id: ps[0].variants[0].variant_id, adjust: 2 }] } },
      { variant_id: ps[0].variants[0].variant_id, price: 7 },
      { product_id: ps[1].product_id, sku: `${x[0]}p`, title: "Took it" },
    ]);
    expect(r.status).toBe(200);
    // The third item is of the first round, which reads the SKU as the first product's; the last, of
    // the second round, finds it free.
    expect(r.answer.errors).toEqual(["[2].sku: SKU <0>p is already used by product <0>"]);
    expect(r.calls.calls).toBe(8);
    expect(r.stored.map((p: Json) => [p.title, p.sku, p.variants.map((v: Json) => [v.qty, v.price])])).toEqual([
      [
        "First",
        "<0>p2",
        [
          [7, 7],
          [0, 100],
        ],
      ],
      [
        "Took it",
        "<0>p",
        [
          [1, 100],
          [1, 100],
        ],
      ],
    ]);
  });

  it("replays a keyed body whole, of one round or several", async () => {
    const one = await rounds(
      2,
      (ps, x) => [sync(ps[0], x[0], 1), { product_id: ps[1].product_id, title: "Keyed" }],
      true,
    );
    expect(one.answer.success).toBe(2);
    expect(one.stored.map(kept)).toEqual(["Mixed <0>p: <0>s 1, <0>l 0", "Keyed <1>p: <1>s 1, <1>m 1"]);
    const several = await rounds(
      2,
      (ps, x) => [
        sync(ps[0], x[0], 1),
        { product_id: ps[0].product_id, title: "Again" },
        { product_id: ps[1].product_id, sku: `${x[0]}p` },
      ],
      true,
    );
    expect(several.answer.errors).toEqual([expect.stringMatching(/^\[2\]\.sku: SKU <0>p /)]);
    expect(several.stored.map(kept)).toEqual(["Again <0>p: <0>s 1, <0>l 0", "Mixed <1>p: <1>s 1, <1>m 1"]);
  });

  it("takes the same calls of the same statements for 2 items or 8", async () => {
    const counts = [];
    for (const n of [2, 8]) {
      const prefixes = Array.from({ length: n }, () => `${uid("N")}-`);
      const ps: Product[] = [];
      for (const p of prefixes) ps.push(await product(p));
      const body = ps.map((p, i) =>
        i % 2
          ? { variant_id: p.variants[0].variant_id, stock: i, title: `Plain ${i}` }
          : {
              sku: `${prefixes[i]}p`,
              title: `Listed ${i}`,
              variants: { update: [{ variant_id: p.variants[1].variant_id, qty: i }] },
            },
      );
      const w = wrapD1();
      const r = await put("/v1/products", body, { env: { DB: w.db } });
      expect(r.status, r.text).toBe(200);
      expect(r.json.success).toBe(n);
      expect(r.json.products.map((p: Json) => p.title)).toEqual(body.map((b) => b.title));
      // The lists planned, in the same batch as the items without one.
      counts.push(w.counts.statementsPerCall);
    }
    // The read (the selections by SKU and the items without a list), then the round's batch.
    expect(counts[0]).toHaveLength(2);
    expect(counts[1]).toEqual(counts[0]);
  });
});

const TABLES = ["products", "variants", "skus", "events", "idempotency_keys"] as const;

async function tables() {
  const rs = await env.DB.batch(TABLES.map((t) => env.DB.prepare(`SELECT * FROM ${t} ORDER BY rowid`)));
  return rs.map((r) => r.results);
}

describe("a body of items with and without lists when D1 fails", () => {
  // The accepted body, and one whose first batch is refused (a SKU two items claim): read, batch,
  // the read that words it, the batch again.
  it.each<[string, (ps: Product[], x: string[]) => unknown[]]>([
    [
      "accepted",
      (ps, x) => [
        {
          sku: `${x[0]}p`,
          title: "After",
          variants: { sync: [{ sku: `${x[0]}s`, qty: 9 }, { variant_option1_value: "xl" }] },
        },
        { product_id: ps[1].product_id, stock: 2, sku: `${x[1]}new` },
        { variant_id: ps[2].variants[0].variant_id, stock: 3 },
      ],
    ],
    [
      "refused in part",
      (ps, x) => [
        { product_id: ps[0].product_id, variants: { add: [{ variant_option1_value: "xl", sku: `${x[0]}new` }] } },
        { product_id: ps[1].product_id, sku: `${x[0]}new` },
        { product_id: ps[2].product_id, title: "Written" },
      ],
    ],
  ])("writes nothing of a body %s at any failing call, and a keyed retry applies it once", async (_, body) => {
    const fresh = async () => {
      const x = [`${uid("F")}-`, `${uid("F")}-`, `${uid("F")}-`];
      const ps: Product[] = [];
      for (const p of x) ps.push(await product(p));
      return body(ps, x);
    };
    const healthy = wrapD1();
    const ok = await put("/v1/products", await fresh(), { env: { DB: healthy.db } });
    expect(ok.status, ok.text).toBe(200);
    for (let n = 1; n <= healthy.counts.calls; n++) {
      const b = await fresh();
      const headers = { "idempotency-key": uid("key") };
      const before = await tables();
      const r = await put("/v1/products", b, { env: { DB: wrapD1({ failCall: n }).db }, headers });
      expect(r.status, r.text).toBe(503);
      expect(await tables(), `call ${n} of ${healthy.counts.calls}`).toEqual(before);
      const retry = await put("/v1/products", b, { headers });
      expect(retry.json.success).toBe(ok.json.success);
      const replay = await put("/v1/products", b, { headers });
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(replay.json).toEqual(retry.json);
    }
  });
});
