import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { bodyItems, wrappedItems } from "../src/platform/body";
import { money, sku } from "../src/platform/fields";
import { MAX_VARIANTS } from "../src/products/schema";
import { MAX_ANSWER_BYTES, SIZE_SQL } from "../src/products/variants";
import { call, createProduct, get, post, put, uid } from "./helpers";

// Real clients' bodies (docs/products.md, "Updating products"): wrapped lists, decimal commas, SKUs with
// spaces, sync entries without option values, and the bounds on images and answer size.

const FIELDS = new Set(["product_id", "sku", "title", "price", "stock", "variants"]);

describe("wrapped bodies: bodyItems", () => {
  it("reads the C# SDK's class-name wrapper and a PHP list as their values, in order", () => {
    expect(bodyItems({ ProductUpdate: { sku: "A", stock: 1 } }, "product", true, FIELDS)).toEqual([
      { value: { sku: "A", stock: 1 }, prefix: "ProductUpdate" },
    ]);
    expect(bodyItems({ "1": { sku: "B" }, "0": { sku: "A" } }, "product", true, FIELDS)).toEqual([
      { value: { sku: "A" }, prefix: "0" },
      { value: { sku: "B" }, prefix: "1" },
    ]);
    // An order body: the same for routes that take only arrays.
    expect(bodyItems({ "0": { order_id: 1 } }, "order", false, new Set(["order_id"]))).toHaveLength(1);
  });

  it.each([
    ["a key that is a field", { sku: { x: 1 }, other: {} }],
    ["a value that is not an object", { ProductUpdate: { sku: "A" }, note: "x" }],
    ["an array value", { list: [{ sku: "A" }] }],
    ["a null value", { ProductUpdate: null }],
    ["no keys", {}],
  ])("keeps an object with %s as one item", (_, body) => {
    expect(wrappedItems(body, FIELDS)).toBeUndefined();
    expect(bodyItems(body, "product", true, FIELDS)).toEqual([{ value: body, prefix: "" }]);
  });

  it("refuses more than 100 wrapped items with 413", () => {
    const body = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [String(i), { sku: "A" }]));
    expect(() => bodyItems(body, "product", true, FIELDS)).toThrow(expect.objectContaining({ status: 413 }));
  });

  it("property: an object is unwrapped exactly when no key is a field and every value is an object", () => {
    const key = fc.oneof(fc.constantFrom(...FIELDS), fc.string({ maxLength: 8 }));
    const value = fc.oneof(
      fc.dictionary(fc.string({ maxLength: 4 }), fc.integer(), { maxKeys: 2 }),
      fc.constant(null),
      fc.integer(),
      fc.string(),
      fc.array(fc.integer(), { maxLength: 2 }),
    );
    fc.assert(
      fc.property(fc.dictionary(key, value, { maxKeys: 6 }), (body) => {
        const entries = Object.entries(body);
        const wraps =
          entries.length > 0 &&
          entries.every(([k, v]) => !FIELDS.has(k) && v !== null && typeof v === "object" && !Array.isArray(v));
        const items = bodyItems(body, "product", true, FIELDS);
        if (wraps) expect(items.map((i) => i.value)).toEqual(Object.values(body));
        else expect(items).toEqual([{ value: body, prefix: "" }]);
      }),
      { numRuns: 300 },
    );
  });

  it("property: an array body is never unwrapped, and its items keep their positions", () => {
    fc.assert(
      fc.property(
        fc.array(fc.dictionary(fc.string({ maxLength: 4 }), fc.integer()), { minLength: 1, maxLength: 20 }),
        (body) => {
          expect(bodyItems(body, "product", true, FIELDS).map((i) => i.prefix)).toEqual(body.map((_, i) => `[${i}]`));
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe("wrapped bodies on the products routes", () => {
  it('PUT takes {"ProductUpdate": {...}} and names errors by its key', async () => {
    const p = await createProduct({ sku: uid(), stock: 1 });
    const r = await put("/v1/products", { ProductUpdate: { product_id: p.product_id, title: "Wrapped", stock: 6 } });
    expect(r.status).toBe(200);
    expect(r.json.products[0]).toMatchObject({ title: "Wrapped", stock: 6 });
    const bad = await put("/v1/products", { ProductUpdate: { product_id: p.product_id, price: "x" } });
    expect(bad.status).toBe(400);
    expect(bad.json.errors).toEqual(["ProductUpdate.price: must be an amount of money"]);
  });

  it("PUT and POST take PHP lists", async () => {
    const a = uid("PHP");
    const b = uid("PHP");
    const made = await post("/v1/products", {
      "0": { title: "A", price: 1, sku: a },
      "1": { title: "B", price: 2, sku: b },
    });
    expect(made.json.success).toBe(2);
    const r = await put("/v1/products", { "0": { sku: a, stock: 3 }, "1": { sku: b, stock: 4 } });
    expect(r.json.products.map((p: any) => [p.sku, p.stock])).toEqual([
      [a, 3],
      [b, 4],
    ]);
  });
});

describe("decimal commas", () => {
  it.each([
    ["price", "199,50", '"199.50"'],
    ["before_price", "1,5", '"1.5"'],
    ["purchase_price", " 10,00 ", '"10.00"'],
  ])("refuses %s %j and says to use a point", async (field, value, hint) => {
    const p = await createProduct({ sku: uid() });
    const r = await put("/v1/products", { product_id: p.product_id, [field]: value });
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual([
      `${field}: must use a point as the decimal separator: ${hint}, not "${value.trim()}"`,
    ]);
    expect((await get(`/v1/products/${p.product_id}`)).json).toEqual(p);
  });

  it("says it on POST and in variants too", async () => {
    const r = await post("/v1/products", {
      title: "C",
      price: "2,5",
      variants: { add: [{ variant_option1_name: "S", variant_option1_value: "a", price: "3,25" }] },
    });
    expect(r.json.errors).toEqual([
      'price: must use a point as the decimal separator: "2.5", not "2,5"',
      'variants.add[0].price: must use a point as the decimal separator: "3.25", not "3,25"',
    ]);
  });

  it("property: any amount written with a decimal comma is refused with the same amount written with a point", () => {
    fc.assert(
      fc.property(fc.nat({ max: 1_000_000 }), fc.stringMatching(/^\d{1,2}$/), (whole, frac) => {
        const r = money.safeParse(`${whole},${frac}`);
        expect(r.success).toBe(false);
        expect(r.error?.issues[0].message).toBe(
          `must use a point as the decimal separator: "${whole}.${frac}", not "${whole},${frac}"`,
        );
        expect(money.parse(`${whole}.${frac}`)).toBe(whole * 100 + Number(frac.padEnd(2, "0")));
      }),
      { numRuns: 200 },
    );
  });

  it.each(["1,000,000", "1,", ",5", "abc"])("words %j as an amount of money, not a comma", async (value) => {
    const r = await post("/v1/products", { title: "C", price: value });
    expect(r.json.errors).toEqual(["price: must be an amount of money"]);
  });
});

describe("SKUs are trimmed on write and on lookup; case matters", () => {
  it("stores a SKU without its surrounding spaces, and finds it with or without them", async () => {
    const sku = uid("TRIM");
    const p = await createProduct({
      sku: `  ${sku} `,
      variants: { add: [{ variant_option1_name: "S", variant_option1_value: "a", sku: `\t${sku}-A ` }] },
    });
    expect(p.sku).toBe(sku);
    expect(p.variants[0].sku).toBe(`${sku}-A`);
    const r = await put("/v1/products", { sku: ` ${sku}-A`, stock: 3, title: "Found" });
    expect(r.status).toBe(200);
    expect(r.json.products[0]).toMatchObject({ title: "Found", variants: [{ qty: 3 }] });
    const renamed = await put("/v1/products", { product_id: p.product_id, sku: ` ${sku}-NEW ` });
    expect(renamed.json.products[0].sku).toBe(`${sku}-NEW`);
    const lower = await put("/v1/products", { sku: `${sku}-new`, title: "x" });
    expect(lower.status).toBe(404);
  });

  it("property: a SKU is stored as its text without surrounding spaces, case kept", () => {
    const text = fc
      .string({ minLength: 1, maxLength: 40 })
      // biome-ignore lint/suspicious/noControlCharactersInRegex: SKUs with them are refused, not trimmed
      .filter((x) => x.trim() !== "" && !/[\u0000-\u001f\u007f-\u009f]/.test(x));
    const spaces = fc.stringMatching(/^[ \t]{0,3}$/);
    fc.assert(
      fc.property(spaces, text, spaces, (before, x, after) => {
        expect(sku.parse(`${before}${x}${after}`)).toBe(x.trim());
      }),
      { numRuns: 200 },
    );
  });

  it("a SKU that differs only in spaces is taken", async () => {
    const sku = uid("DUP");
    await createProduct({ sku });
    const r = await post("/v1/products", { title: "D", price: 1, sku: ` ${sku} ` });
    expect(r.status).toBe(409);
  });
});

describe("variants.sync by SKU without option values", () => {
  it("updates the existing variant and keeps its options; values are needed only to create", async () => {
    const p = await createProduct({
      variants: {
        add: ["S", "M"].map((v) => ({ variant_option1_name: "Size", variant_option1_value: v, sku: uid(v), qty: 1 })),
      },
    });
    const [s, m] = p.variants;
    const r = await put("/v1/products", {
      product_id: p.product_id,
      variants: {
        sync: [
          { sku: m.sku, qty: 7 },
          { sku: ` ${s.sku} `, qty: 8 },
        ],
      },
    });
    expect(r.status).toBe(200);
    expect(r.json.products[0].variants.map((v: any) => [v.variant_id, v.variant_option1_value, v.qty])).toEqual([
      [m.variant_id, "M", 7],
      [s.variant_id, "S", 8],
    ]);
    const create = await put("/v1/products", {
      product_id: p.product_id,
      variants: { sync: [{ sku: m.sku }, { sku: uid("NEW"), qty: 1 }] },
    });
    expect(create.status).toBe(400);
    expect(create.json.errors).toEqual(['variants.sync[1].variant_option1_value: is required (option "Size")']);
  });
});

const image = (i: number, url = `https://img.example.com/${i}.jpg`) => ({ url, alttext: `image ${i}` });

describe("images and the size of a product's answer", () => {
  it.each([
    [
      "product images as an array",
      (n: number) => ({ images: Array.from({ length: n }, (_, i) => image(i)) }),
      "images",
    ],
    [
      "product images keyed by position",
      (n: number) => ({ images: Object.fromEntries(Array.from({ length: n }, (_, i) => [String(i + 1), image(i)])) }),
      "images",
    ],
    [
      "variant images",
      (n: number) => ({
        variants: {
          sync: [
            {
              variant_option1_name: "S",
              variant_option1_value: "a",
              images: Array.from({ length: n }, (_, i) => image(i)),
            },
          ],
        },
      }),
      "variants.sync[0].images",
    ],
  ])("takes 50 %s and refuses 51 with 400", async (_, body, path) => {
    const p = await createProduct({ sku: uid() });
    expect((await put("/v1/products", { product_id: p.product_id, ...body(50) })).status).toBe(200);
    const r = await put("/v1/products", { product_id: p.product_id, ...body(51) });
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual([`${path}: must have at most 50 images`]);
  });

  it("refuses with 413 naming the product a write that would pass 2 MiB, and writes nothing", async () => {
    // Each request stays under the 1 MiB body limit; together they would pass 2 MiB.
    const url = (v: string, i: number) => `https://img.example.com/${v}/${i}/${"x".repeat(560)}.jpg`;
    const variants = (from: number) =>
      Array.from({ length: 30 }, (_, k) => ({
        variant_option1_name: "N",
        variant_option1_value: `v${from + k}`,
        images: Array.from({ length: 50 }, (_, i) => ({ url: url(`v${from + k}`, i) })),
      }));
    const p = await createProduct({ sku: uid() });
    for (const from of [0, 30]) {
      const r = await put("/v1/products", { product_id: p.product_id, variants: { add: variants(from) } });
      expect(r.status).toBe(200);
    }
    const before = (await get(`/v1/products/${p.product_id}`)).text;
    expect(before.length).toBeGreaterThan(1.5 * 1024 * 1024);
    const r = await put("/v1/products", { product_id: p.product_id, variants: { add: variants(60) } });
    expect(r.status).toBe(413);
    expect(r.json.errors[0]).toMatch(new RegExp(`^product ${p.product_id}: this change would make its answer`));
    expect((await get(`/v1/products/${p.product_id}`)).text).toBe(before);
    // Shrinking is always allowed, and a stock-tool change of a big product goes through.
    const sku = (JSON.parse(before).variants[0] as { variant_id: number }).variant_id;
    expect((await put("/v1/products", { variant_id: sku, stock: 2 })).status).toBe(200);
  });

  it("refuses a stock-tool qty_location that would pass 2 MiB, naming the product", async () => {
    const url = (v: number, i: number) => `https://img.example.com/${v}/${i}/${"y".repeat(650)}.jpg`;
    const sku = uid("BIG");
    const add = (from: number) =>
      Array.from({ length: 29 }, (_, k) => ({
        variant_option1_name: "N",
        variant_option1_value: `v${from + k}`,
        sku: `${sku}-${from + k}`,
        images: Array.from({ length: 50 }, (_, i) => ({ url: url(from + k, i) })),
      }));
    const p = await createProduct({ sku });
    for (const from of [0, 29]) {
      expect((await put("/v1/products", { product_id: p.product_id, variants: { add: add(from) } })).status).toBe(200);
    }
    // Fill the estimate up to 1,000 bytes under the bound with the description.
    const estimate = async () =>
      (
        await env.DB.prepare(`SELECT ${SIZE_SQL} AS n FROM products AS p WHERE p.id = ?`)
          .bind(p.product_id)
          .first<{ n: number }>()
      )?.n as number;
    const room = MAX_ANSWER_BYTES - 1000 - (await estimate());
    expect(room).toBeGreaterThan(0);
    expect(room).toBeLessThanOrEqual(100_000);
    expect((await put("/v1/products", { product_id: p.product_id, description: "d".repeat(room) })).status).toBe(200);
    expect(await estimate()).toBe(MAX_ANSWER_BYTES - 1000);
    // 255 bytes each: three fit in the 1,000 left, the fourth and fifth do not.
    const items = Array.from({ length: 5 }, (_, i) => ({ sku: `${sku}-${i}`, qty_location: "L".repeat(255) }));
    const r = await put("/v1/products", items);
    expect(r.status).toBe(200);
    expect(r.json.success).toBe(3);
    expect(r.json.errors).toEqual([
      expect.stringMatching(new RegExp(`^\\[3\\]: product ${p.product_id}: this change would make its answer`)),
      expect.stringMatching(new RegExp(`^\\[4\\]: product ${p.product_id}: this change would make its answer`)),
    ]);
    const answer = (await get(`/v1/products/${p.product_id}`)).text;
    expect(new TextEncoder().encode(answer).length).toBeLessThanOrEqual(MAX_ANSWER_BYTES);
    expect(
      JSON.parse(answer)
        .variants.map((v: any) => v.qty_location)
        .filter(Boolean),
    ).toHaveLength(3);
    // Stock and price at their widest cannot pass the bound (the estimate's allowance holds them),
    // so a stock-tool batch without qty_location is not size-checked, and stays within it.
    const widest = Array.from({ length: 58 }, (_, i) => ({
      sku: `${sku}-${i}`,
      stock: -999_999_999,
      price: 9_999_999.99,
    }));
    expect((await put("/v1/products", widest)).json.success).toBe(58);
    const after = (await get(`/v1/products/${p.product_id}`)).text;
    expect(new TextEncoder().encode(after).length).toBeLessThanOrEqual(MAX_ANSWER_BYTES);
  });

  it("POST of a product whose answer would pass 2 MiB is 413 and writes nothing; one just under it is created", async () => {
    // Option names repeat in every variant of the answer: with MAX_VARIANTS variants a body far
    // below 1 MiB can make an answer past 2 MiB (docs/products.md, "Limits").
    const body = (width: number, title: string) => ({
      title,
      price: 1,
      variants: {
        add: Array.from({ length: MAX_VARIANTS }, (_, i) => ({
          ...(i === 0
            ? Object.fromEntries([1, 2, 3, 4, 5].map((n) => [`variant_option${n}_name`, `${n}${"n".repeat(width)}`]))
            : {}),
          variant_option1_value: String(i),
          variant_option2_value: "b",
          variant_option3_value: "c",
          variant_option4_value: "d",
          variant_option5_value: "e",
        })),
      },
    });
    const title = uid("Huge");
    const refused = await call("POST", "/v1/products", { body: body(250, title) });
    expect(refused.status).toBe(413);
    expect(refused.json.errors[0]).toMatch(new RegExp(`^product "${title}": this change would make its answer`));
    const kept = await env.DB.prepare("SELECT count(*) AS n FROM products WHERE title = ?").bind(title).first("n");
    expect(kept).toBe(0);
    const r = await call("POST", "/v1/products", { body: body(40, uid("Large")) });
    expect(r.status, r.text).toBe(200);
    const answer = (await get(`/v1/products/${r.json.products[0].product_id}`)).text;
    const bytes = new TextEncoder().encode(answer).length;
    expect(bytes).toBeGreaterThan(1_000_000);
    expect(bytes).toBeLessThanOrEqual(MAX_ANSWER_BYTES);
  });
});
