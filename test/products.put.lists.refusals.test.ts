import { describe, expect, it } from "vitest";
import { wrapD1 } from "./d1-wrap";
import { bigProduct, imaged, type Json, product, size } from "./fixtures/sizes";
import { get, post, put, uid } from "./helpers";

// A list the plan refuses (src/products/update/plan.ts) is worded from one more read
// batch that runs the same plan (src/products/update/plan.ts), not matched again in the Worker:
// the refused write, then that read, and nothing else (a third call records the answer under an
// Idempotency-Key). The read has only the columns the checks read; when it finds nothing refused
// but the answer size could be, a full read follows, which finds the size refused, or nothing (a
// concurrent writer changed the product in between): then the write is tried again. test/products.variants.refusal-words.test.ts pins the words.

/** What a case's list and errors name: the SKU prefix, the variants, another product and its SKU. */
type Case = { p: string; v: number[]; other: string; otherId: number; id: number };

describe("a variant list the plan refuses", () => {
  it.each<[string, (c: Case) => Json, number, (c: Case) => string[]]>([
    [
      "another product's SKU",
      (c) => ({ sync: [size("s", { sku: c.other })] }),
      409,
      (c) => [`variants.sync[0].sku: SKU ${c.other} is already used by product ${c.otherId}`],
    ],
    [
      "a SKU used twice as the list leaves the product",
      (c) => ({ update: [{ variant_id: c.v[1], sku: `${c.p}0` }] }),
      409,
      (c) => [`variants.update[0].sku: SKU ${c.p}0 is also used by variant ${c.v[0]}`],
    ],
    [
      "a combination repeated as the list leaves the product",
      (c) => ({ update: [{ variant_id: c.v[2], variant_option1_value: "s" }] }),
      409,
      (c) => [`variants.update[0]: option combination (s) is also used by variant ${c.v[0]}`],
    ],
    [
      "two entries on one variant and a missing value",
      (c) => ({ sync: [size("s"), { sku: `${c.p}0`, qty: 1 }, { variant_option1_name: "Size" }] }),
      409,
      (c) => [
        `variants.sync[1].sku: matches variant ${c.v[0]} (SKU ${c.p}0), already matched by variants.sync[0]`,
        `variants.sync[2].variant_option1_value: is required (option "Size")`,
      ],
    ],
    [
      "an unknown variant and an expected_qty that is not the stored one",
      (c) => ({
        update: [
          { variant_id: 2_000_000_000, qty: 1 },
          { variant_id: c.v[1], expected_qty: 5, adjust: 1 },
        ],
      }),
      404,
      (c) => [
        `variants.update[0].variant_id: variant 2000000000 is not a variant of product ${c.id}`,
        `variants.update[1].expected_qty: variant ${c.v[1]} has qty 1, not 5`,
      ],
    ],
  ])("words %s from the plan's read, in two round trips", async (_name, list, status, errors) => {
    const p = `${uid("W")}-`;
    const other = uid("OTHER");
    const otherId = (await post("/v1/products", { title: "Other", price: 1, sku: other })).json.products[0].product_id;
    const made = await product(p);
    const c: Case = { p, v: (made.variants as Json[]).map((v) => v.variant_id), other, otherId, id: made.product_id };
    const before = (await get(`/v1/products/${c.id}`)).json;
    const w = wrapD1();
    const r = await put(
      "/v1/products",
      { product_id: c.id, title: "Not written", variants: list(c) },
      { env: { DB: w.db } },
    );
    expect(r.status, r.text).toBe(status);
    expect(r.json.errors).toEqual(errors(c));
    expect(w.counts.calls).toBeLessThanOrEqual(2);
    expect((await get(`/v1/products/${c.id}`)).json).toEqual(before);
  });

  // A sync's or update's read has only what a check can refuse (src/products/update/plan.ts):
  // the sound entries beside the refused ones must not change the words, pinned here; the same
  // body under `If-Match: *` (which any version meets) answers the same.
  it.each<[string, (p: string, v: number[]) => Json, (p: string, v: number[]) => [number, string[]]]>([
    [
      "an entry taking the product's own SKU, among sound ones",
      (p) => ({
        variants: { sync: ["s", "m", "l", "xl"].map((v, i) => size(v, { sku: i === 2 ? `${p}P` : `${p}${v}` })) },
      }),
      (p) => [409, [`variants.sync[2].sku: SKU ${p}P is the product's own SKU`]],
    ],
    [
      "the SKU the body gives the product on an entry",
      (p) => ({
        sku: `${p}N`,
        variants: { sync: ["s", "m", "l"].map((v) => size(v, { sku: v === "m" ? `${p}N` : `${p}${v}` })) },
      }),
      (p) => [409, [`variants.sync[1].sku: SKU ${p}N is also used by sku`]],
    ],
    [
      "a combination repeated, a SKU repeated and a negative qty, in a list of 40",
      (p) => ({
        disable_minusqty: 1,
        variants: {
          sync: Array.from({ length: 40 }, (_, i) =>
            size(i === 30 ? "v3" : `v${i}`, { sku: `${p}${i === 20 ? 10 : i}`, qty: i === 35 ? -1 : i }),
          ),
        },
      }),
      (p) => [
        400,
        [
          "variants.sync[35].qty: must not be negative while disable_minusqty is on",
          `variants.sync[20].sku: SKU ${p}10 is also used by variants.sync[10].sku`,
        ],
      ],
    ],
    [
      "an update's SKU repeated and an expected_qty that is not the stored one",
      (p, v) => ({
        variants: {
          update: [
            { variant_id: v[0], sku: `${p}1` },
            { variant_id: v[2], expected_qty: 7, adjust: 1 },
          ],
        },
      }),
      (p, v) => [
        409,
        [
          `variants.update[1].expected_qty: variant ${v[2]} has qty 2, not 7`,
          `variant ${v[1]}: SKU ${p}1 is also used by variants.update[0].sku`,
        ],
      ],
    ],
    [
      "an update taking the product's own SKU and a negative qty under disable_minusqty",
      (p, v) => ({
        disable_minusqty: 1,
        variants: {
          update: [
            { variant_id: v[1], sku: `${p}P` },
            { variant_id: v[2], qty: -3 },
          ],
        },
      }),
      (p) => [
        400,
        [
          "variants.update[1].qty: must not be negative while disable_minusqty is on",
          `variants.update[0].sku: SKU ${p}P is the product's own SKU`,
        ],
      ],
    ],
    [
      "an update repeating a combination, past a sound entry",
      (_p, v) => ({
        variants: {
          update: [
            { variant_id: v[0], qty: 4 },
            { variant_id: v[2], variant_option1_value: "m" },
          ],
        },
      }),
      (_p, v) => [409, [`variants.update[1]: option combination (m) is also used by variant ${v[1]}`]],
    ],
  ])("words %s, the same under If-Match: *", async (_name, body, words) => {
    const p = `${uid("L")}-`;
    const made = await product(p, { sku: `${p}P` });
    const v = (made.variants as Json[]).map((x) => x.variant_id as number);
    const sent = { product_id: made.product_id, ...body(p, v) };
    const w = wrapD1();
    const r = await put("/v1/products", sent, { env: { DB: w.db } });
    const js = await put("/v1/products", sent, { headers: { "if-match": "*" } });
    const [status, errors] = words(p, v);
    expect([r.status, r.json.errors]).toEqual([status, errors]);
    expect([js.status, js.json]).toEqual([r.status, r.json]);
    expect(w.counts.calls).toBeLessThanOrEqual(2);
  });

  it("words an answer that would pass 2 MiB from the plan's read (413)", async () => {
    // 25 variants of 50 long image URLs each: about 0.8 MB a list, each one bound value.
    const id = await bigProduct();
    const w = wrapD1();
    const r = await put("/v1/products", { product_id: id, variants: { add: imaged(50) } }, { env: { DB: w.db } });
    expect(r.status, r.text.slice(0, 300)).toBe(413);
    expect(r.json.errors).toEqual([
      expect.stringMatching(new RegExp(`^product ${id}: this change would make its answer`)),
    ]);
    // The lean read, then the full one (the answer size reads every column).
    expect(w.counts.calls).toBeLessThanOrEqual(3);
    expect((await get(`/v1/products/${id}`)).json.variants).toHaveLength(50);
  });

  it("records the refusal under an Idempotency-Key in a third call, and a retry answers it", async () => {
    const prefix = `${uid("K")}-`;
    const p = await product(prefix);
    const key = uid("key");
    const body = { product_id: p.product_id, variants: { add: [size("m")] } };
    const w = wrapD1();
    const r = await put("/v1/products", body, { env: { DB: w.db }, headers: { "idempotency-key": key } });
    expect(r.status, r.text).toBe(409);
    expect(r.json.errors).toEqual([
      `variants.add[0]: option combination (m) already exists (variant ${p.variants[1].variant_id})`,
    ]);
    expect(w.counts.calls).toBeLessThanOrEqual(3);
    const replay = await put("/v1/products", body, { headers: { "idempotency-key": key } });
    expect([replay.status, replay.json]).toEqual([409, r.json]);
  });

  it("answers an If-Match tag the product no longer has with 412 from one version read, and words other refusals under a tag", async () => {
    const p = await product(`${uid("T")}-`);
    const etag = String((await get(`/v1/products/${p.product_id}`)).headers.get("etag"));
    expect((await put("/v1/products", { product_id: p.product_id, title: "Moved on" })).status).toBe(200);
    const body = { product_id: p.product_id, variants: { update: [{ variant_id: p.variants[0].variant_id, qty: 4 }] } };
    const w = wrapD1();
    const stale = await put("/v1/products", body, { env: { DB: w.db }, headers: { "if-match": etag } });
    expect(stale.status, stale.text).toBe(412);
    expect(stale.json.errors).toEqual([
      `If-Match: product ${p.product_id} changed since that ETag; products holds it as it is now, with its ETag in the ETag header`,
    ]);
    const now = await get(`/v1/products/${p.product_id}`);
    expect(stale.headers.get("etag")).toBe(now.headers.get("etag"));
    // The read (the version), then the product as it is now: no write.
    expect(w.counts.calls).toBeLessThanOrEqual(2);
    expect(w.counts.queries[1][0]).toMatch(/^SELECT p\.\* FROM products AS p WHERE p\.id = \?1/);
    // With the product's own tag, a refusal is worded from the plan's read as without one.
    const w2 = wrapD1();
    const refused = await put(
      "/v1/products",
      { product_id: p.product_id, variants: { add: [size("s")] } },
      { env: { DB: w2.db }, headers: { "if-match": String(now.headers.get("etag")) } },
    );
    expect(refused.status, refused.text).toBe(409);
    expect(refused.json.errors).toEqual([
      `variants.add[0]: option combination (s) already exists (variant ${p.variants[0].variant_id})`,
    ]);
    // Worded from the read alone: nothing is written.
    expect(w2.counts.calls).toBe(1);
  });
});
