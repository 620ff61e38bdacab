import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MAX_VARIANTS } from "../src/products/schema";
import { wrapD1 } from "./d1-wrap";
import { call, get, post, uid } from "./helpers";

const count = async (table: string) =>
  ((await env.DB.prepare(`SELECT count(*) AS n FROM ${table}`).first<{ n: number }>()) as { n: number }).n;

const variant = (colour: string, size: string, extra: Record<string, unknown> = {}) => ({
  variant_option1_name: "Colour",
  variant_option1_value: colour,
  variant_option2_name: "Size",
  variant_option2_value: size,
  ...extra,
});

describe("POST /v1/products", () => {
  it("creates a product without variants and answers with it as GET does", async () => {
    const sku = uid();
    const r = await post("/v1/products", {
      sku,
      title: "Linen towel",
      price: 199.5,
      before_price: 249,
      purchase_price: "80.25",
      tax_rate: 12,
      stock: 30,
      qty_location: "A1",
      disable_minusqty: "1",
      visible: 1,
      description: "Soft",
      gtin: "7350000000000",
      supplier_name: "Weaver",
      supplier_sku: "W-1",
      datafield_1: "d1",
      seo_title: "Towel",
      weight: 350,
      images: { "2": { url: "https://img/2.jpg" }, "1": { url: "https://img/1.jpg", alttext: "front" } },
      metadata: { origin: "SE", __proto__: { admin: true } },
    });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ success: 1, errors: [], notices: [] });
    const p = r.json.products[0];
    expect(p).toMatchObject({
      sku,
      title: "Linen towel",
      price: 199.5,
      before_price: 249,
      purchase_price: 80.25,
      tax_rate: 12,
      stock: 30,
      disable_minusqty: "1",
      visible: 1,
      weight: 350,
      images: [{ url: "https://img/1.jpg", alttext: "front" }, { url: "https://img/2.jpg" }],
      variants: [],
    });
    expect(Number.isInteger(p.product_id)).toBe(true);
    const back = await get(`/v1/products/${p.product_id}`);
    expect(back.json).toEqual(p);
    // Money is stored in minor units.
    const row = await env.DB.prepare("SELECT price, purchase_price FROM products WHERE id = ?")
      .bind(p.product_id)
      .first();
    expect(row).toEqual({ price: 19950, purchase_price: 8025 });
  });

  it("stores __proto__ in metadata as plain data", async () => {
    const r = await call("POST", "/v1/products", {
      raw: '{"title":"P","price":1,"metadata":{"__proto__":{"polluted":true}}}',
    });
    expect(r.status).toBe(200);
    expect(Object.hasOwn(r.json.products[0].metadata, "__proto__")).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("creates a product with variants; variants without a price take the product's", async () => {
    const [a, b] = [uid("V"), uid("V")];
    const r = await post("/v1/products", {
      title: "T-shirt",
      price: 249,
      variants: {
        add: [variant("Red", "M", { sku: a, price: "259", qty: 3 }), variant("Red", "L", { sku: b, qty: "2" })],
      },
    });
    expect(r.status).toBe(200);
    const p = r.json.products[0];
    expect(p.stock).toBe(5);
    expect(p.variants).toHaveLength(2);
    expect(p.variants[0]).toMatchObject({
      sku: a,
      price: 259,
      qty: 3,
      variant_option1_name: "Colour",
      variant_option1_value: "Red",
      variant_option2_name: "Size",
      variant_option2_value: "M",
      variant_option3_name: null,
    });
    expect(p.variants[1]).toMatchObject({ sku: b, price: 249, qty: 2 });
    expect(Number.isInteger(p.variants[0].variant_id)).toBe(true);
  });

  it("finds a product by its own SKU and by a variant's SKU", async () => {
    const [ps, vs] = [uid("P"), uid("V")];
    const p = (
      await post("/v1/products", {
        sku: ps,
        title: "Cap",
        price: 99,
        variants: { add: [variant("Blue", "S", { sku: vs })] },
      })
    ).json.products[0];
    for (const sku of [ps, vs]) {
      const r = await get(`/v1/products?sku=${encodeURIComponent(sku)}`);
      expect(r.status).toBe(200);
      expect(r.json.id).toBe(String(p.product_id));
    }
    expect((await get(`/v1/products?sku=${uid("none")}`)).status).toBe(404);
  });

  it("refuses a duplicate SKU with 409 and writes nothing", async () => {
    const sku = uid();
    await post("/v1/products", { sku, title: "First", price: 1 });
    const before = [await count("products"), await count("variants")];
    for (const body of [
      { sku, title: "Second", price: 1 },
      {
        title: "Third",
        price: 1,
        variants: { add: [variant("Red", "S", { sku: uid() }), variant("Red", "M", { sku })] },
      },
    ]) {
      const r = await post("/v1/products", body);
      expect(r.status).toBe(409);
      expect(r.json.success).toBe(0);
      expect(r.json.errors[0]).toMatch(new RegExp(`sku: SKU ${sku} is already used by product \\d+`));
    }
    expect([await count("products"), await count("variants")]).toEqual(before);
  });

  it("handles array items on their own: one created, one duplicate, one invalid", async () => {
    const sku = uid();
    const r = await post("/v1/products", [
      { sku, title: "Ok", price: 10 },
      { sku, title: "Same SKU", price: 10 },
      { title: "No price" },
    ]);
    expect(r.status).toBe(200);
    expect(r.json.success).toBe(1);
    expect(r.json.errors).toEqual([`[1].sku: SKU ${sku} is used twice in this request`, "[2].price: is required"]);
  });

  it("creates the other items when one repeats an option combination (refused by the unique index, then worded)", async () => {
    const sku = uid();
    const before = await count("products");
    const r = await post("/v1/products", [
      { title: "Ok", price: 10, variants: { add: [variant("R", "S", { sku })] } },
      { title: "Twice", price: 10, variants: { add: [variant("R", "S"), variant("B", "S"), variant("R", "S")] } },
    ]);
    expect(r.status).toBe(200);
    expect(r.json.success).toBe(1);
    expect(r.json.errors).toEqual(["[1].variants.add[2]: same option values as variants.add[0]"]);
    expect(r.json.products.map((p: { variants: { sku: string }[] }) => p.variants[0].sku)).toEqual([sku]);
    expect(await count("products")).toBe(before + 1);
  });

  it("answers the status of the first failure when nothing was created", async () => {
    const sku = uid();
    await post("/v1/products", { sku, title: "x", price: 1 });
    const r = await post("/v1/products", [{ sku, title: "dup", price: 1 }, { title: "" }]);
    expect(r.status).toBe(409);
    expect(r.json.success).toBe(0);
  });

  it(`creates ${MAX_VARIANTS} variants in one request and refuses ${MAX_VARIANTS + 1}`, async () => {
    const make = (n: number) =>
      Array.from({ length: n }, (_, i) => ({
        variant_option1_name: "Number",
        variant_option1_value: String(i),
        sku: `BIG-${n}-${i}`,
        qty: 1,
      }));
    const ok = await post("/v1/products", { title: "Many", price: 5, variants: { add: make(MAX_VARIANTS) } });
    expect(ok.status).toBe(200);
    expect(ok.json.products[0].variants).toHaveLength(MAX_VARIANTS);
    expect(ok.json.products[0].stock).toBe(MAX_VARIANTS);
    const tooMany = await post("/v1/products", {
      title: "Too many",
      price: 5,
      variants: { add: make(MAX_VARIANTS + 1) },
    });
    expect(tooMany.status).toBe(400);
    expect(tooMany.json.errors).toEqual([`variants.add: must have at most ${MAX_VARIANTS} entries`]);
  });

  it.each([
    ["money with 3 decimals", { price: 1.005 }, "price: must have at most 2 decimals"],
    ["a negative price", { price: -1 }, "price: must not be negative"],
    ["a price above the limit", { price: 1_000_000_000.01 }, "price: must be at most 1000000000"],
    ["an exponent string", { price: "1e3" }, "price: must be an amount of money"],
    ["a plus sign", { price: "+5" }, "price: must be an amount of money"],
    ["hex", { price: "0x10" }, "price: must be an amount of money"],
    ["a boolean price", { price: true }, "price: must be an amount of money"],
    ["a missing title", { title: undefined }, "title: is required"],
    ["a blank title", { title: "   " }, "title: is required"],
    ["a long title", { title: "x".repeat(256) }, "title: must be at most 255 characters"],
    ["a control character", { title: "a\u0007b" }, "title: must not contain control characters"],
    ["a tax rate over 100", { tax_rate: 101 }, "tax_rate: must be a whole number from 0 to 100"],
    ["a fractional stock", { stock: 1.5 }, "stock: must be a whole number from -1000000000 to 1000000000"],
    ["visible 2", { visible: 2 }, "visible: must be 1, 0, true or false"],
    ["a flag 'yes'", { disable_minusqty: "yes" }, "disable_minusqty: must be 1, 0, true or false"],
    ["metadata as an array", { metadata: [1] }, "metadata: must be a JSON object"],
    ["metadata over 16 KiB", { metadata: { a: "x".repeat(16_400) } }, "metadata: must be at most 16 KiB serialised"],
    ["an image that is not an https URL", { images: ["a.jpg"] }, "images[0].url: must be an https URL"],
    [
      "negative stock with the flag on",
      { stock: -1, disable_minusqty: 1 },
      "stock: must not be negative while disable_minusqty is on",
    ],
    [
      "stock on a product with variants",
      { stock: 3, variants: { add: [variant("R", "S")] } },
      "stock: a product with variants has no stock of its own: give each variant its qty",
    ],
    [
      "a variant without options",
      { variants: { add: [{ sku: "x" }] } },
      "variants.add[0].variant_option1_name: is required (a variant is defined by its options)",
    ],
    [
      "a repeated option combination",
      { variants: { add: [variant("R", "S"), variant("R", "S")] } },
      "variants.add[1]: same option values as variants.add[0]",
    ],
    [
      "a missing option value",
      { variants: { add: [{ variant_option1_name: "Colour" }] } },
      'variants.add[0].variant_option1_value: is required (option "Colour")',
    ],
    [
      "entries naming different options",
      { variants: { add: [variant("R", "S"), { variant_option1_name: "Material", variant_option1_value: "Wool" }] } },
      "variants.add[1].variant_option1_name: option names differ from those of variants.add[0]",
    ],
  ])("refuses %s with 400 naming the field", async (_, fields, error) => {
    const before = await count("products");
    const r = await post("/v1/products", { title: "Valid", price: 10, ...fields });
    expect(r.status).toBe(400);
    expect(r.json.success).toBe(0);
    expect(r.json.errors).toContain(error);
    expect(await count("products")).toBe(before);
  });

  it.each([
    [
      "the product's SKU again on a variant",
      { sku: "SAME", variants: { add: [{ variant_option1_name: "S", variant_option1_value: "M", sku: "SAME" }] } },
      "variants.add[0].sku: SKU SAME is also given at sku",
    ],
    [
      "one SKU on two variants",
      {
        variants: {
          add: [
            { variant_option1_name: "S", variant_option1_value: "M", sku: "TWICE" },
            { variant_option1_name: "S", variant_option1_value: "L", sku: "TWICE" },
          ],
        },
      },
      "variants.add[1].sku: SKU TWICE is also given at variants.add[0]",
    ],
  ])("refuses %s with 409, not a retry loop", async (_, fields, error) => {
    const r = await post("/v1/products", { title: "Dup inside", price: 1, ...fields });
    expect(r.status).toBe(409);
    expect(r.json.errors).toEqual([error]);
  });

  it("accepts visible as a flag in all its forms, and money with leading zeros", async () => {
    const r = await post("/v1/products", [
      { title: "Hidden", price: "0001.50", visible: false },
      { title: "Shown", price: 1, visible: "1" },
    ]);
    expect(r.json.products.map((p: { visible: number; price: number }) => [p.visible, p.price])).toEqual([
      [0, 1.5],
      [1, 1],
    ]);
  });

  it("names the item when an array item is not an object", async () => {
    const r = await post("/v1/products", [{ title: "ok", price: 1 }, 5]);
    expect(r.json.errors).toEqual(["[1]: must be a product object"]);
  });

  it("counts metadata's 16 KiB in bytes, not characters", async () => {
    const r = await post("/v1/products", { title: "Bytes", price: 1, metadata: { a: "é".repeat(8200) } });
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual(["metadata: must be at most 16 KiB serialised"]);
  });

  it("accepts numeric strings, spaces around numbers, and blank strings as absent", async () => {
    const r = await post("/v1/products", {
      title: "Strings",
      price: " 12 ",
      stock: "7",
      tax_rate: "6",
      weight: "0.5",
      gtin: "  ",
    });
    expect(r.status).toBe(200);
    expect(r.json.products[0]).toMatchObject({ price: 12, stock: 7, tax_rate: 6, weight: 0.5, gtin: null });
  });
});

describe("GET /v1/products/{id}", () => {
  it("answers 404 for a product that does not exist and 400 for a non-numeric id", async () => {
    expect((await get("/v1/products/99999999")).json).toEqual({ code: 404, error: "product 99999999 not found" });
    const bad = await get("/v1/products/abc");
    expect(bad.status).toBe(400);
    expect(bad.json.errors).toEqual(["product_id: must be a positive whole number (an id)"]);
  });
});

describe("POST /v1/products D1 budget", () => {
  // Products, variants, the product.add events, the catalogue's version and the answer's read (one
  // text per product: src/products/present.ts): five statements with or without variants,
  // whatever their number.
  it.each([0, 100, MAX_VARIANTS])(
    "takes one round trip and a fixed number of statements with %i variants",
    async (n) => {
      const { db, counts } = wrapD1();
      const add = Array.from({ length: n }, (_, i) => ({
        variant_option1_name: "N",
        variant_option1_value: String(i),
        sku: uid(`B${n}`),
      }));
      const r = await post(
        "/v1/products",
        { title: "Budget", price: 1, sku: uid(), variants: { add } },
        { env: { DB: db } },
      );
      expect(r.status).toBe(200);
      // The products, their variants, the catalogue's version, the events and the answer.
      expect(counts).toMatchObject({ calls: 1, statements: 5 });
    },
  );

  it("takes a second round trip only to find out which SKU was taken", async () => {
    const sku = uid();
    await post("/v1/products", { title: "Owner", price: 1, sku });
    const { db, counts } = wrapD1();
    const r = await post(
      "/v1/products",
      [
        { title: "Dup", price: 1, sku },
        { title: "New", price: 1, sku: uid() },
      ],
      { env: { DB: db } },
    );
    expect(r.json.success).toBe(1);
    expect(counts.calls).toBe(3); // failed batch, read of taken SKUs, batch without the duplicate
  });
});

describe("POST /v1/products under concurrency", () => {
  it("lets exactly one of 10 concurrent creates take a SKU, product or variant", async () => {
    const sku = uid("RACE");
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        post(
          "/v1/products",
          i % 2
            ? { title: `P${i}`, price: 1, sku }
            : {
                title: `V${i}`,
                price: 1,
                variants: { add: [{ variant_option1_name: "S", variant_option1_value: "M", sku }] },
              },
        ),
      ),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 409)).toHaveLength(9);
    const owners = await env.DB.prepare(
      "SELECT (SELECT count(*) FROM products WHERE sku = ?1) + (SELECT count(*) FROM variants WHERE sku = ?1) AS n",
    )
      .bind(sku)
      .first();
    expect(owners).toEqual({ n: 1 });
  });
});

describe("identifiers sent as numbers (docs/api.md, Conventions)", () => {
  it("stores a numeric gtin, supplier_sku and sku as their digits, and text with its leading zeros", async () => {
    const n = Number(`${Date.now()}`.slice(-9)) * 1000 + Math.floor(Math.random() * 1000);
    const r = await post("/v1/products", {
      title: "EAN from a spreadsheet",
      price: 10,
      sku: n,
      gtin: 7350012345678,
      supplier_sku: 42,
      variants: {
        add: [
          { variant_option1_name: "Size", variant_option1_value: "S", sku: n + 1, gtin: "0012345678905" },
          { variant_option1_name: "Size", variant_option1_value: "M", sku: `00${n}`, gtin: 4006381333931 },
        ],
      },
    });
    expect(r.status, r.text).toBe(200);
    const p = r.json.products[0];
    expect(p).toMatchObject({ sku: String(n), gtin: "7350012345678", supplier_sku: "42" });
    expect(p.variants.map((v: { sku: string; gtin: string }) => [v.sku, v.gtin])).toEqual([
      [String(n + 1), "0012345678905"],
      [`00${n}`, "4006381333931"],
    ]);
    // Looked up by the same digits.
    expect((await get(`/v1/products?sku=${n}`)).json.id).toBe(String(p.product_id));
    const put = await call("PUT", "/v1/products", { body: { sku: n, gtin: 5901234123457 } });
    expect(put.status, put.text).toBe(200);
    expect(put.json.products[0].gtin).toBe("5901234123457");
  });

  it.each([
    ["a fraction", { gtin: 12.5 }, "gtin: must be a string"],
    ["a negative number", { gtin: -7 }, "gtin: must be a string"],
    ["a number past 2^53 (digits would be lost)", { gtin: 2 ** 60 }, "gtin: must be a string"],
    ["a numeric sku with a fraction", { sku: 1.5 }, "sku: must be a string"],
  ])("refuses %s", async (_, body, error) => {
    const r = await post("/v1/products", { title: "t", price: 1, ...body });
    expect(r.status).toBe(400);
    expect(r.json.errors.join("\n")).toContain(error);
  });
});
