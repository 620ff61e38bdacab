import { describe, expect, it } from "vitest";
import { wrapD1 } from "./d1-wrap";
import { type Json, product, size } from "./fixtures/sizes";
import { get, post, put, uid } from "./helpers";

// Bodies refused whatever is stored (src/products/update/plan.ts): the
// product's own `stock`, `adjust` or `expected_stock` beside a non-empty variant list, and entries
// that disagree on option names. They are not written: one read batch words them
// (src/products/update/plan.ts); each case pins the status and the errors in order.

type Case = { id: number; v: number[]; p: string };

describe("a body refused whatever is stored", () => {
  it.each<[string, (c: Case) => Json, number, (c: Case) => string[]]>([
    [
      "stock beside a sync",
      () => ({ stock: 4, variants: { sync: [size("s")] } }),
      400,
      () => ["stock: the product has variants, whose qty is its stock: select a variant or use variants.update"],
    ],
    [
      "stock and adjust beside an add (the body's own errors stop the plan)",
      () => ({ stock: 1, adjust: 2, variants: { add: [size("xl")] } }),
      400,
      () => ["adjust: give stock (the new count) or adjust (the change), not both"],
    ],
    [
      "adjust and expected_stock beside an add",
      () => ({ adjust: 2, expected_stock: 0, variants: { add: [size("xl")] } }),
      400,
      () => [
        "adjust: the product has variants, whose qty is its stock: select a variant or use variants.update",
        "expected_stock: the product has variants, whose qty is its stock: select a variant or use variants.update",
      ],
    ],
    [
      "expected_qty and expected_stock beside an update",
      (c) => ({ expected_qty: 1, expected_stock: 1, variants: { update: [{ variant_id: c.v[0], expected_qty: 9 }] } }),
      400,
      () => ["expected_stock: give expected_qty or expected_stock, not both"],
    ],
    [
      "stock beside a sync whose entry matches a variant twice",
      (c) => ({ stock: 2, variants: { sync: [size("s"), { sku: `${c.p}0` }] } }),
      409,
      (c) => [
        `variants.sync[1].sku: matches variant ${c.v[0]} (SKU ${c.p}0), already matched by variants.sync[0]`,
        "stock: the product has variants, whose qty is its stock: select a variant or use variants.update",
      ],
    ],
    [
      "entries that disagree on option names",
      () => ({ variants: { sync: [size("s"), { variant_option1_name: "Colour", variant_option1_value: "red" }] } }),
      400,
      () => ["variants.sync[1].variant_option1_name: option names differ from those of variants.sync[0]"],
    ],
    [
      "names out of order in a second list, with stock",
      (c) => ({
        stock: 1,
        variants: { add: [size("xl")], update: [{ variant_id: c.v[0], variant_option2_name: "Fit" }] },
      }),
      400,
      () => ["variants.update[0].variant_option1_name: option names must be given in order from option 1"],
    ],
  ])("words %s from one read", async (_name, body, status, errors) => {
    const prefix = `${uid("R")}-`;
    const made = await product(prefix);
    const c: Case = { id: made.product_id, v: (made.variants as Json[]).map((v) => v.variant_id), p: prefix };
    const before = (await get(`/v1/products/${c.id}`)).json;
    const w = wrapD1();
    const r = await put("/v1/products", { product_id: c.id, title: "Not written", ...body(c) }, { env: { DB: w.db } });
    expect(r.status, r.text).toBe(status);
    expect(r.json.errors).toEqual(errors(c));
    // Nothing written: one read batch (no write batch).
    expect(w.counts.calls).toBeLessThanOrEqual(2);
    expect((await get(`/v1/products/${c.id}`)).json).toEqual(before);
  });

  it("words them under an If-Match naming the product's tag, and records them under an Idempotency-Key", async () => {
    const made = await product(`${uid("I")}-`);
    const id = made.product_id;
    const etag = String((await get(`/v1/products/${id}`)).headers.get("etag"));
    const key = uid("key");
    const body = {
      product_id: id,
      adjust: -1,
      variants: { update: [{ variant_id: made.variants[1].variant_id, qty: 3 }] },
    };
    const w = wrapD1();
    const headers = { "if-match": etag, "idempotency-key": key };
    const r = await put("/v1/products", body, { env: { DB: w.db }, headers });
    expect(r.status, r.text).toBe(400);
    expect(r.json.errors).toEqual([
      "adjust: the product has variants, whose qty is its stock: select a variant or use variants.update",
    ]);
    // The If-Match's read, the wording read, the record.
    expect(w.counts.calls).toBeLessThanOrEqual(3);
    const replay = await put("/v1/products", body, { headers });
    expect([replay.status, replay.json]).toEqual([400, r.json]);
    // A tag the product no longer has is still the 412.
    const stale = await put("/v1/products", body, { headers: { "if-match": '"0123456789abcdef"' } });
    expect(stale.status).toBe(412);
  });

  it("words an update of a product without variants, with its expected_stock, from the reads", async () => {
    const id = (await post("/v1/products", { title: "Bare", price: 1, stock: 2 })).json.products[0].product_id;
    const body = { product_id: id, expected_stock: 3, variants: { update: [{ variant_id: 2_000_000_000, qty: 1 }] } };
    const w = wrapD1();
    const r = await put("/v1/products", body, { env: { DB: w.db } });
    expect(r.status, r.text).toBe(404);
    expect(r.json.errors).toEqual([
      `variants.update[0].variant_id: variant 2000000000 is not a variant of product ${id}`,
      `expected_stock: product ${id} has stock 2, not 3`,
    ]);
    // A product without option names plans no rows, so the lean read cannot tell: the full one words it.
    expect(w.counts.calls).toBeLessThanOrEqual(2);
    expect((await get(`/v1/products/${id}`)).json.stock).toBe(2);
  });
});
