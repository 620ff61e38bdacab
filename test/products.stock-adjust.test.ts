import { describe, expect, it } from "vitest";
import { createProduct, get, post, put, uid } from "./helpers";

// Changing stock safely (docs/stock.md): the merchant's two tabs
// and a sale in between. The page showed 11, an order took 2 (9 left), 5 more arrived: `adjust: 5`
// ends at 14; `expected_qty: 11` with the count 16 fails and changes nothing; If-Match with the
// ETag the page was loaded with is 412 with the product as it is now.

/** A product of one variant (qty 11) or without variants (stock 11), the page's GET, and a sale of 2. */
async function pageThenSale(variants: boolean, extra: Record<string, unknown> = {}) {
  const sku = uid("S");
  const p = await createProduct(
    variants
      ? { ...extra, variants: { add: [{ variant_option1_name: "Size", variant_option1_value: "M", sku, qty: 11 }] } }
      : { ...extra, sku, stock: 11 },
  );
  const page = await get(`/v1/products/${p.product_id}`);
  const sold = await post("/v1/orders", [{ order_id: "create", products: [{ sku, qty: 2 }] }]);
  expect(sold.json.results.create_1.success).toBe(true);
  return { p, sku, page, variantId: variants ? p.variants[0].variant_id : undefined };
}

const countOf = async (id: number) => {
  const r = (await get(`/v1/products/${id}`)).json;
  return r.variants.length ? r.variants[0].qty : r.stock;
};

// The forms that set stock: a selected variant's `stock`, a variants.update entry's `qty`, the
// product's own `stock`, and the stock tools' {sku, stock} items.
type Form = {
  name: string;
  variants: boolean;
  body: (t: Awaited<ReturnType<typeof pageThenSale>>, fields: Record<string, unknown>) => unknown;
  count: string;
  path: string;
};
const forms: Form[] = [
  {
    name: "variants.update entry",
    variants: true,
    body: (t, f) => ({ product_id: t.p.product_id, variants: { update: [{ variant_id: t.variantId, ...f }] } }),
    count: "qty",
    path: "variants.update[0].",
  },
  {
    name: "selected variant",
    variants: true,
    body: (t, f) => ({ variant_id: t.variantId, ...f }),
    count: "stock",
    path: "",
  },
  {
    name: "product without variants",
    variants: false,
    body: (t, f) => ({ product_id: t.p.product_id, ...f }),
    count: "stock",
    path: "",
  },
  {
    name: "stock-tool item (variant SKU)",
    variants: true,
    body: (t, f) => [{ sku: t.sku, ...f }],
    count: "stock",
    path: "[0].",
  },
  {
    name: "stock-tool item (product SKU)",
    variants: false,
    body: (t, f) => [{ sku: t.sku, ...f }],
    count: "stock",
    path: "[0].",
  },
];

describe.each(forms)("the lost update, fixed: $name", (form) => {
  it("saving the count the page computed loses the sale (the bug the remedies fix)", async () => {
    const t = await pageThenSale(form.variants);
    const r = await put("/v1/products", form.body(t, { [form.count]: 16 }));
    expect(r.status).toBe(200);
    expect(await countOf(t.p.product_id)).toBe(16);
  });

  it("adjust: 5 ends at 14", async () => {
    const t = await pageThenSale(form.variants);
    const r = await put("/v1/products", form.body(t, { adjust: 5 }));
    expect(r.status).toBe(200);
    expect(r.json.success).toBe(1);
    expect(await countOf(t.p.product_id)).toBe(14);
  });

  it("expected_qty: 11 with the count 16 fails the entry, names the current count and changes nothing", async () => {
    const t = await pageThenSale(form.variants);
    const before = (await get(`/v1/products/${t.p.product_id}`)).json;
    const r = await put("/v1/products", form.body(t, { expected_qty: 11, [form.count]: 16 }));
    expect(r.status).toBe(409);
    expect(r.json.success).toBe(0);
    expect(r.json.errors).toHaveLength(1);
    expect(r.json.errors[0]).toMatch(new RegExp(`^${form.path.replace(/[[\].]/g, "\\$&")}expected_qty: .* 9, not 11`));
    expect((await get(`/v1/products/${t.p.product_id}`)).json).toEqual(before);
  });

  it("expected_qty that still holds applies the change", async () => {
    const t = await pageThenSale(form.variants);
    const r = await put("/v1/products", form.body(t, { expected_qty: 9, [form.count]: 14 }));
    expect(r.status).toBe(200);
    expect(await countOf(t.p.product_id)).toBe(14);
  });

  it("the count and adjust together are a 400 naming adjust", async () => {
    const t = await pageThenSale(form.variants);
    const r = await put("/v1/products", form.body(t, { [form.count]: 16, adjust: 5 }));
    expect(r.status).toBe(400);
    expect(r.json.errors[0]).toMatch(new RegExp(`^${form.path.replace(/[[\].]/g, "\\$&")}adjust: give `));
    expect(await countOf(t.p.product_id)).toBe(9);
  });

  it("with disable_minusqty on, an adjust below zero is refused with the count it found", async () => {
    const t = await pageThenSale(form.variants, { disable_minusqty: 1 });
    const r = await put("/v1/products", form.body(t, { adjust: -10 }));
    expect(r.status).toBe(409);
    expect(r.json.errors[0]).toMatch(/adjust: would take the (qty|stock) of .* from 9 to -1; it cannot go below 0/);
    expect(await countOf(t.p.product_id)).toBe(9);
    const ok = await put("/v1/products", form.body(t, { adjust: -9 }));
    expect(ok.status).toBe(200);
    expect(await countOf(t.p.product_id)).toBe(0);
  });

  it("with disable_minusqty off, an adjust may take the count below zero", async () => {
    const t = await pageThenSale(form.variants);
    const r = await put("/v1/products", form.body(t, { adjust: -10 }));
    expect(r.status).toBe(200);
    expect(await countOf(t.p.product_id)).toBe(-1);
  });
});

describe("If-Match on PUT /v1/products", () => {
  it.each([
    ["variants.update entry", forms[0]],
    ["product without variants", forms[2]],
    ["stock-tool item", forms[3]],
  ])("a stale ETag is 412 with the current product (%s)", async (_, form) => {
    const t = await pageThenSale(form.variants);
    const stale = t.page.headers.get("ETag") as string;
    const current = await get(`/v1/products/${t.p.product_id}`);
    expect(current.headers.get("ETag")).not.toBe(stale);
    const r = await put("/v1/products", form.body(t, { [form.count]: 16 }), { headers: { "If-Match": stale } });
    expect(r.status).toBe(412);
    expect(r.json).toMatchObject({ success: 0, notices: [] });
    expect(r.json.errors[0]).toMatch(/If-Match: product \d+ changed since that ETag/);
    expect(r.json.products).toEqual([current.json]);
    expect(r.headers.get("ETag")).toBe(current.headers.get("ETag"));
    expect(await countOf(t.p.product_id)).toBe(9);
  });

  it("the current ETag applies the change and answers the new ETag, which a GET then sends", async () => {
    const t = await pageThenSale(true);
    const tag = (await get(`/v1/products/${t.p.product_id}`)).headers.get("ETag") as string;
    const r = await put("/v1/products", forms[0].body(t, { qty: 14 }), { headers: { "If-Match": tag } });
    expect(r.status).toBe(200);
    expect(r.json.products[0].variants[0].qty).toBe(14);
    const after = await get(`/v1/products/${t.p.product_id}`);
    expect(r.headers.get("ETag")).toBe(after.headers.get("ETag"));
    expect(r.headers.get("ETag")).not.toBe(tag);
    // The tag just answered is the one to send next.
    const again = await put("/v1/products", forms[0].body(t, { adjust: 1 }), {
      headers: { "If-Match": r.headers.get("ETag") as string },
    });
    expect(again.status).toBe(200);
  });

  it.each([
    ["*", 200],
    ['W/"0123456789abcdef"', 412],
    ['"nonsense"', 412],
  ])("If-Match %s answers %i", async (header, status) => {
    const t = await pageThenSale(false);
    const r = await put("/v1/products", forms[2].body(t, { stock: 20 }), { headers: { "If-Match": header } });
    expect(r.status).toBe(status);
  });

  it("applies to one product: a list of two is a 400 naming If-Match", async () => {
    const t = await pageThenSale(false);
    const tag = (await get(`/v1/products/${t.p.product_id}`)).headers.get("ETag") as string;
    const r = await put(
      "/v1/products",
      [
        { product_id: t.p.product_id, stock: 1 },
        { product_id: t.p.product_id, stock: 2 },
      ],
      { headers: { "If-Match": tag } },
    );
    expect(r.status).toBe(400);
    expect(r.json.error ?? r.json.errors?.[0]).toMatch(/If-Match/);
    expect(await countOf(t.p.product_id)).toBe(9);
  });
});

describe("a product's ETag", () => {
  it("moves when the product sells or changes, not when another product sells", async () => {
    const a = await createProduct({ sku: uid("A"), stock: 5 });
    const bSku = uid("B");
    await createProduct({ sku: bSku, stock: 5 });
    const tag = async () => (await get(`/v1/products/${a.product_id}`)).headers.get("ETag");
    const first = await tag();
    await post("/v1/orders", [{ order_id: "create", products: [{ sku: bSku, qty: 1 }] }]);
    expect(await tag()).toBe(first);
    await post("/v1/orders", [{ order_id: "create", products: [{ sku: a.sku, qty: 1 }] }]);
    const sold = await tag();
    expect(sold).not.toBe(first);
    await put("/v1/products", { product_id: a.product_id, title: "Renamed" });
    expect(await tag()).not.toBe(sold);
  });

  it("answers 304 to If-None-Match with it", async () => {
    const a = await createProduct({ sku: uid("A"), stock: 5 });
    const first = await get(`/v1/products/${a.product_id}`);
    const again = await get(`/v1/products/${a.product_id}`, {
      headers: { "If-None-Match": first.headers.get("ETag") as string },
    });
    expect(again.status).toBe(304);
  });
});

describe("the manual's answers (docs/stock.md)", () => {
  it("shows what the server answers, ids aside", async () => {
    const t = await pageThenSale(true, { disable_minusqty: 1 });
    const v = t.variantId as number;
    const id = t.p.product_id;
    const stale = t.page.headers.get("ETag") as string;

    const below = await put("/v1/products", { variant_id: v, adjust: -10 });
    expect(below.status).toBe(409);
    expect(below.json).toEqual({
      success: 0,
      errors: [
        `adjust: would take the qty of variant ${v} from 9 to -1; it cannot go below 0 while disable_minusqty is on`,
      ],
      notices: [],
      products: [],
    });
    const tool = await put("/v1/products", [{ sku: t.sku, adjust: -10 }]);
    expect(tool.json.errors).toEqual([
      `[0].adjust: would take the qty of SKU ${t.sku} from 9 to -1; it cannot go below 0 while disable_minusqty is on`,
    ]);

    const expected = await put("/v1/products", { variant_id: v, expected_qty: 11, stock: 16 });
    expect(expected.status).toBe(409);
    expect(expected.json).toEqual({
      success: 0,
      errors: [`expected_qty: variant ${v} has qty 9, not 11`],
      notices: [],
      products: [],
    });
    const entry = await put("/v1/products", {
      product_id: id,
      variants: { update: [{ variant_id: v, expected_qty: 11, qty: 16 }] },
    });
    expect(entry.json.errors).toEqual([`variants.update[0].expected_qty: variant ${v} has qty 9, not 11`]);
    const item = await put("/v1/products", [{ sku: t.sku, expected_qty: 11, stock: 16 }]);
    expect(item.json.errors).toEqual([`[0].expected_qty: SKU ${t.sku} has qty 9, not 11`]);
    const both = await put("/v1/products", { variant_id: v, stock: 16, adjust: 5 });
    expect(both.json.errors).toEqual(["adjust: give stock (the new count) or adjust (the change), not both"]);
    const bothEntry = await put("/v1/products", {
      product_id: id,
      variants: { update: [{ variant_id: v, qty: 16, adjust: 5 }] },
    });
    expect(bothEntry.json.errors).toEqual([
      "variants.update[0].adjust: give qty (the new count) or adjust (the change), not both",
    ]);

    const ifMatch = await put("/v1/products", { variant_id: v, stock: 16 }, { headers: { "If-Match": stale } });
    const current = await get(`/v1/products/${id}`);
    expect(ifMatch.status).toBe(412);
    expect(ifMatch.headers.get("ETag")).toMatch(/^"[0-9a-f]{16}"$/);
    expect(ifMatch.json).toEqual({
      success: 0,
      errors: [
        `If-Match: product ${id} changed since that ETag; products holds it as it is now, with its ETag in the ETag header`,
      ],
      notices: [],
      products: [current.json],
    });
    expect(current.json.variants[0].qty).toBe(9);

    const adjusted = await put("/v1/products", { variant_id: v, adjust: 5 });
    expect(adjusted.json.products[0].variants[0].qty).toBe(14);
  });
});
