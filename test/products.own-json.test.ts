import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { getDb } from "../src/platform/d1";
import { minimalJson, ownJson, productRead, useStoreUrl } from "../src/products/present";
import { getProduct } from "../src/products/read";
import { textsOf } from "./carried";
import { post, uid } from "./helpers";
import { isHidden, publicFields } from "./modelled-reference";

// The product answer built by SQLite (src/products/present.ts; GET /v1/products/{id}, for secret
// and publishable keys, and the writes answer it, carried) must be, once parsed, exactly what
// the JavaScript presenter (present.ts, which the other writes use) makes of the same rows, and
// for a storefront what the reference filter (./modelled-reference.ts) leaves of that:
// on random products of every field's forms, with and without a store URL, alone and several in
// one statement.

// Quotes and backticks: what JSON escapes, and a carried answer's quotes (src/platform/d1.ts).
const text = fc.oneof(
  fc.constant("plain"),
  fc.string({ maxLength: 12 }),
  fc.constantFrom('quote " back \\ é 😀 `tick`', "~A~,~}", "`~`"),
);
const optional = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });

const product = fc.record({
  title: text.filter((t) => t.trim() !== ""),
  price: fc.constantFrom(0, 1, 19.9, 199.5, 1234567.89, "12.30"),
  before_price: optional(fc.constantFrom(0, 99.99, 150)),
  purchase_price: optional(fc.constantFrom(0.01, 10)),
  tax_rate: optional(fc.constantFrom(0, 6, 12, 25)),
  stock: optional(fc.integer({ min: -50, max: 50 })),
  description: optional(text.filter((t) => t.trim() !== "")),
  brand: optional(text.filter((t) => t.trim() !== "")),
  gtin: optional(fc.oneof(fc.nat(), fc.constant("0001234"))),
  weight: optional(fc.constantFrom(0, 0.5, 12)),
  visible: optional(fc.constantFrom(0, 1)),
  images: optional(
    fc.constantFrom([], ["https://img.example/a.png"], [{ url: "https://img.example/b.png", alttext: "B" }]),
  ),
  categories: optional(fc.constantFrom([], [["Clothes", "Shirts"]], [["A"], ["B", "C"]])),
  metadata: optional(fc.constantFrom({ a: 1 }, { nested: { x: [1, "two"] } })),
  k: fc.integer({ min: 0, max: 5 }),
  variants: fc.array(
    fc.record({
      qty: fc.integer({ min: -5, max: 100 }),
      price: optional(fc.constantFrom(0, 5, 19.99)),
      gtin: optional(fc.constantFrom("123", 456)),
      weight: optional(fc.constantFrom(0.25, 3)),
      visible: optional(fc.constantFrom(0, 1)),
      images: optional(fc.constantFrom(["https://img.example/v.png"])),
      sku: fc.boolean(),
    }),
    { maxLength: 12 },
  ),
});
type Product = typeof product extends fc.Arbitrary<infer T> ? T : never;

const NAMES = ["Size", "Colour", "Material", "Fit", "Edition"];

async function create(p: Product) {
  const { k, variants, ...fields } = p;
  const add = k
    ? variants.map((v, i) => {
        const { sku, ...rest } = v;
        const e: Record<string, unknown> = { ...rest, ...(sku ? { sku: uid("OJ") } : {}) };
        for (let n = 0; n < k; n++) {
          e[`variant_option${n + 1}_name`] = NAMES[n];
          e[`variant_option${n + 1}_value`] = n === 0 ? `v${i}` : `x${n}`;
        }
        return e;
      })
    : [];
  const body = { ...fields, ...(add.length ? { variants: { add }, stock: undefined } : {}) };
  const r = await post("/v1/products", body);
  expect(r.status, r.text).toBe(200);
  return r.json.products[0].product_id as number;
}

describe("the product answer built by SQLite", () => {
  it.each(["", "https://shop.example/p/"])(
    "equals the presenter's on random products (STORE_URL %j)",
    async (store) => {
      const db = getDb(env.DB);
      await fc.assert(
        fc.asyncProperty(fc.array(product, { minLength: 1, maxLength: 3 }), async (ps) => {
          const ids: number[] = [];
          for (const p of ps) ids.push(await create(p));
          useStoreUrl(store);
          const texts = textsOf(
            await ownJson(db, "p.id IN (SELECT value FROM json_each(?1))", JSON.stringify(ids)).all(),
          );
          const minimal = textsOf(
            await minimalJson(db, "p.id IN (SELECT value FROM json_each(?1))", JSON.stringify(ids)).all(),
          );
          // GET's read: the same answer, not carried (its backticks are not escaped).
          const read = await productRead(
            db,
            undefined,
            "p.id IN (SELECT value FROM json_each(?1))",
            JSON.stringify(ids),
          ).all();
          expect(read.results.map((row) => JSON.parse(row.json as string))).toEqual(texts.map((t) => JSON.parse(t)));
          // Newest first, as every list of written products.
          const want = [...ids].sort((a, b) => b - a);
          for (const [i, id] of want.entries()) {
            const shown = JSON.parse(JSON.stringify(await getProduct(db, id)));
            expect(JSON.parse(texts[i])).toEqual(shown);
            expect(JSON.parse(minimal[i])).toEqual({
              product_id: shown.product_id,
              sku: shown.sku,
              updated_at: shown.updated_at,
              variants: shown.variants.map((v: { variant_id: number; sku: string | null }) => ({
                variant_id: v.variant_id,
                sku: v.sku,
              })),
            });
          }
        }),
        { numRuns: 40 },
      );
    },
  );

  it("as a storefront sees it, equals the presenter's filtered for each view", async () => {
    const db = getDb(env.DB);
    const views = [false, true].flatMap((stock) => [false, true].map((datafields) => ({ stock, datafields })));
    useStoreUrl("https://shop.example/p/");
    await fc.assert(
      fc.asyncProperty(fc.array(product, { minLength: 1, maxLength: 3 }), async (ps) => {
        const ids: number[] = [];
        for (const p of ps) ids.push(await create(p));
        const shown = new Map<number, Record<string, unknown>>();
        for (const id of ids) shown.set(id, JSON.parse(JSON.stringify(await getProduct(db, id))));
        for (const view of views) {
          const rows = await productRead(
            db,
            view,
            "p.id IN (SELECT value FROM json_each(?1))",
            JSON.stringify(ids),
          ).all();
          // A hidden product yields no row: a storefront gets 404 for it.
          const want = [...ids]
            .sort((a, b) => b - a)
            .filter((id) => !isHidden(shown.get(id) as Record<string, unknown>));
          expect(rows.results.map((r) => r.id)).toEqual(want);
          for (const [i, row] of rows.results.entries()) {
            expect(JSON.parse(row.json as string)).toEqual(
              publicFields(shown.get(want[i]) as Record<string, unknown>, view),
            );
          }
        }
      }),
      { numRuns: 30 },
    );
  });

  it("equals the presenter's for a product of 2,048 variants over five options", async () => {
    const add = Array.from({ length: 2048 }, (_, i) => ({
      ...Object.fromEntries(NAMES.map((n, k) => [`variant_option${k + 1}_name`, n])),
      variant_option1_value: `S${i % 8}`,
      variant_option2_value: `C${(i >> 3) % 8}`,
      variant_option3_value: `M${(i >> 6) % 8}`,
      variant_option4_value: `F${(i >> 9) % 4}`,
      variant_option5_value: "E",
      sku: uid("OJ2048"),
      qty: i % 13,
      price: 10 + (i % 100) / 100,
    }));
    const r = await post("/v1/products", { title: "Big", price: 10, variants: { add } });
    const id = r.json.products[0].product_id;
    useStoreUrl("");
    const [text] = textsOf(await ownJson(getDb(env.DB), "p.id = ?1", id).all());
    expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(await getProduct(getDb(env.DB), id))));
  });
});
