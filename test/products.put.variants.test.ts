import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MAX_VARIANTS } from "../src/products/schema";
import { createProduct, get, put, uid } from "./helpers";

// PUT /v1/products, variants.sync / add / update (docs/products.md, "Updating products").

const colour = (value: string, extra: Record<string, unknown> = {}) => ({
  variant_option1_name: "Colour",
  variant_option1_value: value,
  ...extra,
});

async function withVariants(values = ["Red", "Blue"], body: Record<string, unknown> = {}) {
  return createProduct({
    sku: uid("P"),
    variants: { add: values.map((v) => colour(v, { sku: uid("V"), qty: 3 })) },
    ...body,
  });
}

const read = async (id: number) => (await get(`/v1/products/${id}`)).json;

/** A product as stored, without the timestamp that every write moves. */
const state = async (id: number) => {
  const { updated_at: _, ...rest } = await read(id);
  return rest;
};

describe("variants.sync", () => {
  it("updates matched variants, creates unmatched entries and deletes the rest", async () => {
    const p = await withVariants(["Red", "Blue", "Green"]);
    const [red, blue, green] = p.variants;
    const newSku = uid("NEW");
    const r = await put("/v1/products", {
      product_id: p.product_id,
      variants: {
        sync: [
          { sku: red.sku, variant_option1_value: "Red", qty: 9 }, // matched by sku
          colour("Blue", { price: 80 }), // matched by option values
          colour("Black", { sku: newSku, qty: 1 }), // created
        ],
      },
    });
    expect(r.status).toBe(200);
    const vs = r.json.products[0].variants;
    expect(vs).toHaveLength(3);
    expect(vs[0]).toMatchObject({ variant_id: red.variant_id, sku: red.sku, qty: 9, price: 100 });
    expect(vs[1]).toMatchObject({ variant_id: blue.variant_id, sku: blue.sku, qty: 3, price: 80 });
    expect(vs[2]).toMatchObject({ sku: newSku, variant_option1_value: "Black", qty: 1, price: 100 });
    expect([red.variant_id, blue.variant_id, green.variant_id]).not.toContain(vs[2].variant_id);
    // The deleted variant's SKU is free again.
    expect((await get(`/v1/products?sku=${green.sku}`)).status).toBe(404);
    expect((await createProduct({ sku: green.sku })).sku).toBe(green.sku);
  });

  it("renames options: its entries set the names for all variants", async () => {
    const p = await withVariants();
    const [red, blue] = p.variants;
    const entry = (v: typeof red, value: string, size: string) => ({
      sku: v.sku,
      variant_option1_name: "Color",
      variant_option1_value: value,
      variant_option2_name: "Size",
      variant_option2_value: size,
    });
    const r = await put("/v1/products", {
      product_id: p.product_id,
      variants: { sync: [entry(red, "Red", "M"), entry(blue, "Blue", "M")] },
    });
    expect(r.status).toBe(200);
    for (const v of r.json.products[0].variants) {
      expect(v).toMatchObject({
        variant_option1_name: "Color",
        variant_option2_name: "Size",
        variant_option2_value: "M",
      });
    }
    expect(r.json.products[0].variants.map((v: any) => v.variant_id)).toEqual([red.variant_id, blue.variant_id]);
  });

  it("an empty sync deletes every variant; the product then has its own stock", async () => {
    const p = await withVariants();
    const r = await put("/v1/products", { product_id: p.product_id, stock: 4, variants: { sync: [] } });
    expect(r.status).toBe(200);
    expect(r.json.products[0]).toMatchObject({ variants: [], stock: 4 });
    // No variants, no option names: the next add may name new ones.
    const again = await put("/v1/products", {
      product_id: p.product_id,
      variants: { add: [{ variant_option1_name: "Size", variant_option1_value: "L" }] },
    });
    expect(again.status).toBe(200);
    expect(again.json.products[0].variants[0]).toMatchObject({ variant_option1_name: "Size", price: 100 });
  });

  it("two entries with the same option values are 409 and change nothing", async () => {
    const p = await withVariants();
    const before = await state(p.product_id);
    const r = await put("/v1/products", {
      product_id: p.product_id,
      variants: { sync: [colour("Red"), colour("Red")] },
    });
    expect(r.status).toBe(409);
    expect(r.json.errors).toEqual(["variants.sync[1]: same option values as variants.sync[0]"]);
    expect(await state(p.product_id)).toEqual(before);
  });

  it("an entry with another product's SKU is 409", async () => {
    const other = await createProduct({ sku: uid() });
    const p = await withVariants();
    const r = await put("/v1/products", {
      product_id: p.product_id,
      variants: { sync: [colour("Red", { sku: other.sku })] },
    });
    expect(r.status).toBe(409);
    expect(r.json.errors).toEqual([
      `variants.sync[0].sku: SKU ${other.sku} is already used by product ${other.product_id}`,
    ]);
  });

  it("entries of one request that disagree on option names are 400", async () => {
    const p = await withVariants();
    const r = await put("/v1/products", {
      product_id: p.product_id,
      variants: { sync: [colour("Red")], add: [{ variant_option1_name: "Size", variant_option1_value: "L" }] },
    });
    expect(r.status).toBe(400);
    expect(r.json.errors[0]).toMatch(/^variants\.add\[0\]\.variant_option1_name: option names differ/);
  });

  it("with disable_minusqty on, a negative qty is 400 naming the entry", async () => {
    const p = await withVariants(["Red"], { disable_minusqty: 1 });
    const r = await put("/v1/products", { product_id: p.product_id, variants: { sync: [colour("Red", { qty: -1 })] } });
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual(["variants.sync[0].qty: must not be negative while disable_minusqty is on"]);
  });
});

describe("variants.add", () => {
  it("creates variants; one without price takes the product's new price", async () => {
    const p = await withVariants(["Red"]);
    const sku = uid("ADD");
    const r = await put("/v1/products", {
      product_id: p.product_id,
      price: 250,
      variants: { add: [colour("Blue", { sku, qty: 2 }), { variant_option1_value: "Green", price: 1.5 }] },
    });
    expect(r.status).toBe(200);
    const vs = r.json.products[0].variants;
    expect(vs.map((v: any) => [v.variant_option1_value, v.price, v.sku])).toEqual([
      ["Red", 100, p.variants[0].sku],
      ["Blue", 250, sku],
      ["Green", 1.5, null],
    ]);
  });

  it("an existing option combination is 409 and nothing changes", async () => {
    const p = await withVariants();
    const before = await state(p.product_id);
    const r = await put("/v1/products", {
      product_id: p.product_id,
      title: "Should not stick",
      variants: { add: [colour("Green"), colour("Red", { sku: uid() })] },
    });
    expect(r.status).toBe(409);
    expect(r.json.errors).toEqual([
      `variants.add[1]: option combination (Red) already exists (variant ${p.variants[0].variant_id})`,
    ]);
    expect(await state(p.product_id)).toEqual(before);
  });

  it("an existing SKU is 409, of this product or another", async () => {
    const p = await withVariants();
    const other = await createProduct({ sku: uid() });
    const own = await put("/v1/products", {
      product_id: p.product_id,
      variants: { add: [colour("Green", { sku: p.variants[1].sku })] },
    });
    expect(own.status).toBe(409);
    expect(own.json.errors[0]).toMatch(/^variants\.add\[0\]\.sku: SKU .* already exists/);
    const theirs = await put("/v1/products", {
      product_id: p.product_id,
      variants: { add: [colour("Green", { sku: other.sku })] },
    });
    expect(theirs.status).toBe(409);
    expect(theirs.json.errors[0]).toBe(
      `variants.add[0].sku: SKU ${other.sku} is already used by product ${other.product_id}`,
    );
  });

  it("may not rename options", async () => {
    const p = await withVariants();
    const r = await put("/v1/products", {
      product_id: p.product_id,
      variants: { add: [{ variant_option1_name: "Size", variant_option1_value: "L" }] },
    });
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual([
      "variants.add[0].variant_option1_name: option names differ from the product's (Colour); rename options with variants.sync",
    ]);
  });

  it("the first entry names the options of a product that has none", async () => {
    const p = await createProduct({ sku: uid(), price: 42 });
    const r = await put("/v1/products", {
      product_id: p.product_id,
      variants: { add: [colour("Red"), { variant_option1_value: "Blue" }] },
    });
    expect(r.status).toBe(200);
    expect(
      r.json.products[0].variants.map((v: any) => [v.variant_option1_name, v.variant_option1_value, v.price]),
    ).toEqual([
      ["Colour", "Red", 42],
      ["Colour", "Blue", 42],
    ]);
  });

  it(`past ${MAX_VARIANTS} variants is 400`, async () => {
    const p = await createProduct({
      sku: uid(),
      variants: { add: Array.from({ length: MAX_VARIANTS }, (_, i) => colour(`c${i}`)) },
    });
    const r = await put("/v1/products", { product_id: p.product_id, variants: { add: [colour("one more")] } });
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual([
      `variants: a product has at most ${MAX_VARIANTS} variants; this request would leave ${MAX_VARIANTS + 1}`,
    ]);
    const sync = await put("/v1/products", {
      product_id: p.product_id,
      variants: { sync: Array.from({ length: MAX_VARIANTS + 1 }, (_, i) => colour(`c${i}`)) },
    });
    expect(sync.status).toBe(400);
    expect(sync.json.errors).toEqual([`variants.sync: must have at most ${MAX_VARIANTS} entries`]);
  });
});

describe("variants.update", () => {
  it("changes only the given fields", async () => {
    const p = await withVariants();
    const [red, blue] = p.variants;
    const r = await put("/v1/products", {
      product_id: p.product_id,
      variants: { update: [{ variant_id: String(blue.variant_id), qty: 11, gtin: "g", before_price: 150 }] },
    });
    expect(r.status).toBe(200);
    const vs = r.json.products[0].variants;
    expect(vs[0]).toEqual(red);
    expect(vs[1]).toEqual({ ...blue, qty: 11, gtin: "g", before_price: 150 });
  });

  it("a variant of another product is 404 and nothing changes", async () => {
    const p = await withVariants();
    const other = await withVariants();
    const before = await state(p.product_id);
    const otherBefore = await state(other.product_id);
    const r = await put("/v1/products", {
      product_id: p.product_id,
      variants: { update: [{ variant_id: other.variants[0].variant_id, qty: 1 }] },
    });
    expect(r.status).toBe(404);
    expect(r.json.errors).toEqual([
      `variants.update[0].variant_id: variant ${other.variants[0].variant_id} is not a variant of product ${p.product_id}`,
    ]);
    expect(await state(p.product_id)).toEqual(before);
    expect(await state(other.product_id)).toEqual(otherBefore);
  });

  it("swaps SKUs and option values between variants in one request", async () => {
    const p = await withVariants();
    const [red, blue] = p.variants;
    const r = await put("/v1/products", {
      product_id: p.product_id,
      variants: {
        update: [
          { variant_id: red.variant_id, sku: blue.sku, variant_option1_value: "Blue" },
          { variant_id: blue.variant_id, sku: red.sku, variant_option1_value: "Red" },
        ],
      },
    });
    expect(r.status).toBe(200);
    const vs = r.json.products[0].variants;
    expect(vs.map((v: any) => [v.variant_id, v.sku, v.variant_option1_value])).toEqual([
      [red.variant_id, blue.sku, "Blue"],
      [blue.variant_id, red.sku, "Red"],
    ]);
    expect((await get(`/v1/products?sku=${red.sku}`)).json.id).toBe(String(p.product_id));
  });

  it("moves a SKU from a variant to its product", async () => {
    const p = await withVariants();
    const [red] = p.variants;
    const r = await put("/v1/products", {
      product_id: p.product_id,
      sku: red.sku,
      variants: { update: [{ variant_id: red.variant_id, sku: null }] },
    });
    expect(r.status).toBe(200);
    expect(r.json.products[0].sku).toBe(red.sku);
    expect(r.json.products[0].variants[0].sku).toBeNull();
  });

  it("changing options into an existing combination is 409", async () => {
    const p = await withVariants();
    const r = await put("/v1/products", {
      product_id: p.product_id,
      variants: { update: [{ variant_id: p.variants[1].variant_id, variant_option1_value: "Red" }] },
    });
    expect(r.status).toBe(409);
    expect(r.json.errors[0]).toMatch(/option combination \(Red\) is also used by/);
  });
});

describe("one atomic step", () => {
  it("a batch whose last change is invalid changes nothing", async () => {
    const p = await withVariants(["Red", "Blue", "Green"]);
    const before = await state(p.product_id);
    const r = await put("/v1/products", {
      product_id: p.product_id,
      title: "New title",
      disable_minusqty: 1,
      variants: {
        sync: [colour("Red", { qty: 50 }), colour("Blue"), colour("White", { sku: uid() })],
        add: [colour("Black", { sku: uid() })],
        update: [
          { variant_id: p.variants[0].variant_id, price: 10 },
          { variant_id: p.variants[2].variant_id, qty: 1 }, // Green was deleted by the sync
        ],
      },
    });
    expect(r.status).toBe(404);
    expect(r.json.errors).toEqual([
      `variants.update[1].variant_id: variant ${p.variants[2].variant_id} is not a variant of product ${p.product_id}`,
    ]);
    expect(await state(p.product_id)).toEqual(before);
  });

  it("changing disable_minusqty updates no_minus of every variant in the same batch", async () => {
    const p = await withVariants(["Red", "Blue", "Green"]);
    const flags = async () =>
      (
        await env.DB.prepare("SELECT no_minus FROM variants WHERE product_id = ? ORDER BY id")
          .bind(p.product_id)
          .all<{ no_minus: number }>()
      ).results.map((r) => r.no_minus);
    expect(await flags()).toEqual([0, 0, 0]);
    await put("/v1/products", { variant_id: p.variants[0].variant_id, disable_minusqty: "1" });
    expect(await flags()).toEqual([1, 1, 1]);
    await put("/v1/products", { product_id: p.product_id, disable_minusqty: 0 });
    expect(await flags()).toEqual([0, 0, 0]);
  });
});

describe("sync matching", () => {
  it("a variant matched twice (by values, then by SKU) is 409", async () => {
    const p = await withVariants();
    const [red] = p.variants;
    const r = await put("/v1/products", {
      product_id: p.product_id,
      variants: { sync: [colour("Red"), colour("Green", { sku: red.sku })] },
    });
    expect(r.status).toBe(409);
    expect(r.json.errors).toEqual([
      `variants.sync[1].sku: matches variant ${red.variant_id} (SKU ${red.sku}), already matched by variants.sync[0]`,
    ]);
  });

  it("an entry with a SKU no variant has is created, not matched by its values", async () => {
    const p = await withVariants(["Red"]);
    const sku = uid("S");
    const r = await put("/v1/products", { product_id: p.product_id, variants: { sync: [colour("Red", { sku })] } });
    expect(r.status).toBe(200);
    const [v] = r.json.products[0].variants;
    expect(v.sku).toBe(sku);
    expect(v.variant_id).not.toBe(p.variants[0].variant_id);
  });
});
