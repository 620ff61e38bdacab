import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CATEGORIES_SQL, HEAD_SQL } from "../src/products/categories";
import { IMAGES_SQL } from "../src/products/list";
import { modelledProduct, modelledProductDetails, type Row } from "../src/products/modelled";
import { get, post, uid } from "./helpers";

// GET /v1/products reads a page as one JSON text per statement built by SQLite, instead of D1's
// row objects (src/products/list.ts, for CPU). The presenters are the same, so the page must be
// exactly what they make of D1's own rows: checked here on random products, with the values that
// could travel differently through JSON (nulls, decimals, non-ASCII and escaped text, JSON texts).

const text = fc.oneof(
  fc.constant(""),
  fc.string({ maxLength: 12 }),
  fc.constantFrom('quote " and \\ backslash', "åäö ✓ 𝄞", "line\nbreak", "null", "0", "[]"),
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
  categories: fc.array(
    fc.array(fc.constantFrom("Kläder", 'quote " and \\ backslash', "åäö ✓ 𝄞", "null", "0", "[]"), {
      minLength: 1,
      maxLength: 3,
    }),
    { maxLength: 2 },
  ),
  variants: fc.array(
    fc.record({ value: text, qty: fc.integer({ min: -5, max: 50 }), sku: fc.boolean(), image: fc.boolean() }),
    { maxLength: 3 },
  ),
});

/**
 * The reference: the presenters applied to D1's own row objects, with the columns SQLite builds as
 * JSON (images, categories) parsed here, and no STORE_URL (url "").
 */
async function fromD1Rows(id: number) {
  const [ps, vs] = await env.DB.batch<Row>([
    env.DB.prepare(
      `SELECT p.*, (SELECT count(*) FROM variants AS v WHERE v.product_id = p.id) AS variant_count,
         (SELECT total(v.qty) FROM variants AS v WHERE v.product_id = p.id) AS variant_qty,
         ${IMAGES_SQL} AS images_object, '' AS url, ${HEAD_SQL} AS headcategory_name,
         ${CATEGORIES_SQL} AS category_paths
       FROM products AS p WHERE p.id = ?1`,
    ).bind(id),
    env.DB.prepare("SELECT * FROM variants WHERE product_id = ?1 ORDER BY position, id").bind(id),
  ]);
  const row = ps.results[0];
  const p = {
    ...row,
    images: JSON.parse(row.images_object as string),
    categories: JSON.parse(row.category_paths as string),
  };
  const plain = { ...p, images: {} };
  return { details: modelledProductDetails(p, vs.results), plain: modelledProduct(plain) };
}

describe("GET /v1/products: rows read as SQLite-built JSON", () => {
  it("present exactly as D1's row objects do (differential)", async () => {
    await fc.assert(
      fc.asyncProperty(productArb, async (spec) => {
        const tag = uid("RJ");
        const body = {
          title: `Rows ${tag}`,
          sku: tag,
          price: spec.price / 100,
          before_price: spec.before === undefined ? undefined : spec.before / 100,
          weight: spec.weight,
          description: spec.description,
          gtin: spec.gtin,
          images: spec.images,
          categories: spec.categories,
          ...(spec.variants.length
            ? {
                variants: {
                  add: spec.variants.map((v, i) => ({
                    variant_option1_name: "Size",
                    variant_option1_value: `${v.value}-${i}`,
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
      }),
      { numRuns: 60 },
    );
  });
});
