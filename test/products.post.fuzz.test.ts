import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { wrapD1 } from "./d1-wrap";
import { get, post, uid } from "./helpers";

// POST /v1/products on random bodies of one product with variants, many of them refused: missing
// or extra option values, repeated combinations, repeated or taken SKUs, negative qty under
// disable_minusqty, names that differ, stock beside variants. The one plan (src/products/create.ts)
// must answer a create the same with or without an Idempotency-Key, answer what GET then shows,
// write nothing when it refuses, and take one round trip when it accepts.

const NAMES = ["Size", "Colour", "Fit"];
const PICKED = ["a", "b", "c", "d", "e", "f", "g"];

const entry = fc.record(
  {
    sku: fc.oneof(
      { weight: 6, arbitrary: fc.constant("none" as const) },
      { weight: 10, arbitrary: fc.constant("own" as const) },
      { weight: 1, arbitrary: fc.constant("repeat" as const) },
      { weight: 1, arbitrary: fc.constant("foreign" as const) },
    ),
    values: fc.oneof(
      { weight: 30, arbitrary: fc.constant("all" as const) },
      { weight: 1, arbitrary: fc.constant("missing" as const) },
      { weight: 1, arbitrary: fc.constant("extra" as const) },
    ),
    picked: fc.array(fc.constantFrom(...PICKED), { minLength: 4, maxLength: 4 }),
    names: fc.oneof(
      { weight: 12, arbitrary: fc.constant("same" as const) },
      { weight: 12, arbitrary: fc.constant("none" as const) },
      { weight: 1, arbitrary: fc.constant("renamed" as const) },
    ),
    qty: fc.option(fc.integer({ min: -1, max: 40 }), { nil: undefined }),
    price: fc.option(fc.constantFrom(0, 15, "12.50", 999.99), { nil: undefined }),
    more: fc.record(
      {
        gtin: fc.oneof(fc.nat(99_999_999), fc.constant("00012345")),
        weight: fc.constantFrom(0, 0.25, 12),
        visible: fc.constantFrom(0, 1, "1", true),
        before_price: fc.constantFrom(0, 99.5, "120.00"),
        qty_location: fc.constantFrom("A-1", "Lager ö"),
        images: fc.constantFrom(["https://img.example/a.png"], [{ url: "https://img.example/b.png", alttext: "b" }]),
      },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: ["sku", "values", "picked", "names", "more"] },
);

const body = fc.record({
  k: fc.integer({ min: 1, max: 3 }),
  noMinus: fc.boolean(),
  stock: fc.oneof({ weight: 20, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constant(5) }),
  price: fc.constantFrom(100, "19.90"),
  entries: fc.array(entry, { minLength: 1, maxLength: 8 }),
});
type Body = typeof body extends fc.Arbitrary<infer T> ? T : never;

function bodyOf(b: Body, prefix: string, foreign: string) {
  const add = b.entries.map((e, i) => {
    const out: Record<string, unknown> = {};
    if (e.sku === "own") out.sku = `${prefix}${i}`;
    else if (e.sku === "repeat") out.sku = `${prefix}0`;
    else if (e.sku === "foreign") out.sku = foreign;
    const slots = e.values === "all" ? b.k : e.values === "missing" ? b.k - 1 : b.k + 1;
    for (let n = 0; n < slots; n++) out[`variant_option${n + 1}_value`] = e.picked[n];
    // The first entry names the options unless the draw says otherwise for it too.
    if (e.names !== "none" || i === 0) {
      for (let n = 0; n < b.k; n++) {
        out[`variant_option${n + 1}_name`] = e.names === "renamed" ? `${NAMES[n]}!` : NAMES[n];
      }
    }
    if (e.qty !== undefined) out.qty = e.qty;
    if (e.price !== undefined) out.price = e.price;
    return { ...out, ...e.more };
  });
  return {
    title: "Created",
    price: b.price,
    sku: `${prefix}p`,
    disable_minusqty: b.noMinus ? 1 : 0,
    ...(b.stock === undefined ? {} : { stock: b.stock }),
    variants: { add },
  };
}

/** What two creates must share: ids, SKU prefixes, slugs and times taken out. */
function normal(json: unknown, prefix: string) {
  return JSON.parse(
    JSON.stringify(json)
      .replaceAll(prefix, "<p>")
      .replace(/"(variant_id|product_id)":\d+/g, '"$1":0')
      .replace(/product \d+/g, "product <id>")
      .replace(/"(created_at|updated_at)":"[^"]+"/g, '"$1":""')
      .replace(/"(slug|url)":"[^"]+"/g, '"$1":""'),
  );
}

describe("POST /v1/products of random bodies", () => {
  it("answers alike with and without an Idempotency-Key, as GET shows, and writes nothing when it refuses", async () => {
    const foreign = uid("FOREIGN");
    await post("/v1/products", { title: "Other", price: 1, sku: foreign });
    let accepted = 0;
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(body, async (b) => {
        runs++;
        const [a, c] = [`${uid("A")}-`, `${uid("C")}-`];
        const w = wrapD1();
        const ra = await post("/v1/products", bodyOf(b, a, foreign), { env: { DB: w.db } });
        const rc = await post("/v1/products", bodyOf(b, c, foreign), { headers: { "idempotency-key": uid("k") } });
        expect(ra.status, `${ra.text}\n${rc.text}`).toBe(rc.status);
        expect(normal(ra.json, a)).toEqual(normal(rc.json, c));
        if (ra.status === 200) {
          accepted++;
          expect(w.counts.calls).toBe(1);
          const got = await get(`/v1/products/${ra.json.products[0].product_id}`);
          expect(got.json).toEqual(ra.json.products[0]);
        } else {
          // Refused whole: the product's own SKU was never taken.
          expect((await get(`/v1/products?sku=${encodeURIComponent(`${a}p`)}`)).status).toBe(404);
        }
      }),
      { numRuns: 150 },
    );
    // Enough of them must have been accepted, or the comparison proved little.
    expect(accepted).toBeGreaterThan(runs / 4);
  }, 120_000);
});
