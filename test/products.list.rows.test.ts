import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { PublicView } from "../src/keys/public";
import { get, post, uid } from "./helpers";
import { modelledProduct, modelledProductDetails, publicProducts, type Row } from "./modelled-reference";

// GET /v1/products answers the JSON text SQLite builds (src/products/modelled-json.ts), never parsed
// by the Worker (for CPU). It must be exactly what the reference presenters (modelled-reference.ts)
// make of D1's own rows, for a secret key and for each storefront view: checked here on random
// products, with the values that could travel differently (nulls, decimals, money, non-ASCII and
// escaped text, tildes and backticks, JSON texts, hidden variants, five options).

const text = fc.oneof(
  fc.constant(""),
  fc.string({ maxLength: 12 }),
  // Tildes and backticks: the markers and quotes of a keyed, carried answer (src/platform/d1.ts).
  fc.constantFrom('quote " and \\ backslash', "åäö ✓ 𝄞", "line\nbreak", "null", "0", "[]", "~A~,~}", "`~`"),
);
const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });

const productArb = fc.record({
  price: fc.integer({ min: 0, max: 99_999_999 }),
  before: maybe(fc.integer({ min: 0, max: 9_999_999 })),
  weight: maybe(fc.oneof(fc.integer({ min: 0, max: 5000 }), fc.constantFrom(0.5, 1.25, 2.125))),
  description: maybe(text),
  gtin: maybe(text),
  images: fc.array(fc.record({ url: fc.constantFrom("https://img.example.com/a.jpg"), alttext: maybe(text) }), {
    maxLength: 2,
  }),
  purchase: maybe(fc.integer({ min: 0, max: 9_999_999 })),
  visible: fc.boolean(),
  options: fc.integer({ min: 1, max: 5 }),
  categories: fc.array(
    fc.array(fc.constantFrom("Kläder", 'quote " and \\ backslash', "åäö ✓ 𝄞", "null", "0", "[]", "~B~}"), {
      minLength: 1,
      maxLength: 3,
    }),
    { maxLength: 2 },
  ),
  variants: fc.array(
    fc.record({
      value: text,
      qty: fc.integer({ min: -5, max: 50 }),
      sku: fc.boolean(),
      image: fc.boolean(),
      price: maybe(fc.integer({ min: 0, max: 9_999_999 })),
      visible: fc.boolean(),
    }),
    { maxLength: 4 },
  ),
});

// The storefront views a publishable key can have (docs/keys.md, "Publishable keys").
const VIEWS: [PublicView, string[]][] = [
  [{ stock: false, datafields: false }, []],
  [{ stock: true, datafields: false }, ["stock"]],
  [{ stock: false, datafields: true }, ["datafields"]],
  [{ stock: true, datafields: true }, ["stock", "datafields"]],
];

/** The reference: the presenters applied to D1's own row objects. */
async function fromD1Rows(id: number) {
  const [ps, vs] = await env.DB.batch<Row>([
    env.DB.prepare(
      `SELECT p.*, (SELECT count(*) FROM variants AS v WHERE v.product_id = p.id) AS variant_count,
         (SELECT total(v.qty) FROM variants AS v WHERE v.product_id = p.id) AS variant_qty,
         (SELECT total(v.qty) FROM variants AS v WHERE v.product_id = p.id AND v.visible = 1) AS visible_qty
       FROM products AS p WHERE p.id = ?1`,
    ).bind(id),
    env.DB.prepare("SELECT * FROM variants WHERE product_id = ?1 ORDER BY position, id").bind(id),
  ]);
  const p = ps.results[0];
  return {
    details: modelledProductDetails(p, vs.results),
    plain: modelledProduct(p),
    // What a storefront counts: the stock of the variants it sees.
    plainShown: modelledProduct({ ...p, variant_qty: p.visible_qty }),
  };
}

describe("GET /v1/products: rows read as SQLite-built JSON", () => {
  it("present exactly as D1's row objects do (differential)", async () => {
    const storefronts: [PublicView, string][] = [];
    for (const [view, scopes] of VIEWS) {
      const k = await post("/v1/keys", { name: `view ${scopes.join("+")}`, type: "publishable", scopes });
      expect(k.status, k.text).toBe(201);
      storefronts.push([view, k.json.key]);
    }
    await fc.assert(
      fc.asyncProperty(productArb, async (spec) => {
        const tag = uid("RJ");
        const body = {
          title: `Rows ${tag}`,
          sku: tag,
          price: spec.price / 100,
          before_price: spec.before === undefined ? undefined : spec.before / 100,
          weight: spec.weight,
          purchase_price: spec.purchase === undefined ? undefined : spec.purchase / 100,
          visible: spec.visible ? 1 : 0,
          datafield_1: spec.description,
          description: spec.description,
          gtin: spec.gtin,
          images: spec.images,
          categories: spec.categories,
          ...(spec.variants.length
            ? {
                variants: {
                  add: spec.variants.map((v, i) => ({
                    ...Object.fromEntries(
                      Array.from({ length: spec.options }, (_, o) => [
                        [`variant_option${o + 1}_name`, `Option ${o + 1}`],
                        [`variant_option${o + 1}_value`, o ? `${v.value}~${o}` : `${v.value}-${i}`],
                      ]).flat(),
                    ),
                    price: v.price === undefined ? undefined : v.price / 100,
                    visible: v.visible ? 1 : 0,
                    sku: v.sku ? `${tag}-${i}` : undefined,
                    qty: v.qty,
                    images: v.image ? [{ url: "https://img.example.com/v.jpg", alttext: v.value }] : undefined,
                  })),
                },
              }
            : {}),
        };
        const created = await post("/v1/products", body);
        expect(created.status, created.text).toBe(200);
        const id = created.json.products[0].product_id as number;
        const want = await fromD1Rows(id);
        const details = await get(`/v1/products?product_id=${id}&include_details=true`);
        expect(details.status).toBe(200);
        expect(details.json).toEqual(want.details);
        const plain = await get(`/v1/products?product_id=${id}`);
        expect(plain.json).toEqual(want.plain);
        for (const [view, scopes] of storefronts) {
          const headers = { authorization: "", "x-publishable-key": scopes };
          const shown = await get(`/v1/products?search=${tag}&include_details=true`, { headers });
          expect(shown.json).toEqual(publicProducts([want.details], view));
          const list = await get(`/v1/products?search=${tag}`, { headers });
          expect(list.json).toEqual(publicProducts([want.plainShown], view));
        }
      }),
      { numRuns: 60 },
    );
  }, 180_000); // hundreds of requests: 30 s alone, over a minute on a loaded 2-core machine
});
