import { describe, expect, it } from "vitest";
import { MAX_VARIANTS } from "../src/products/schema";
import { wrapD1 } from "./d1-wrap";
import { get, post, put, uid } from "./helpers";

// 2,048 variants per product with five options (docs/products.md, "Limits"), through every
// path the API writes and reads them: create, sync (planned), add, update, GET, the
// modelled lookup and page, and orders of its variants.

const NAMES = ["Size", "Colour", "Material", "Fit", "Edition"];
type Json = Record<string, any>;

/** Entry i of a five-option product: 8 x 8 x 8 x 4 x 1 = 2,048 combinations. */
function entry(prefix: string, i: number, extra: Json = {}): Json {
  const digits = [i % 8, (i >> 3) % 8, (i >> 6) % 8, (i >> 9) % 4, i >> 11];
  const e: Json = { sku: `${prefix}-${i}` };
  NAMES.forEach((name, k) => {
    e[`variant_option${k + 1}_name`] = name;
    e[`variant_option${k + 1}_value`] = `${name[0]}${digits[k]}`;
  });
  return { ...e, price: 100 + (i % 7), qty: i % 5, ...extra };
}
const entries = (prefix: string, n: number, extra: (i: number) => Json = () => ({})) =>
  Array.from({ length: n }, (_, i) => entry(prefix, i, extra(i)));

describe("a product of 2,048 variants over five options", () => {
  it("is created whole in one request, read by GET, the modelled lookup and a page", async () => {
    expect(MAX_VARIANTS).toBe(2048);
    const prefix = uid("BIG");
    const r = await post("/v1/products", { title: "Big", price: 100, variants: { add: entries(prefix, 2048) } });
    expect(r.status, r.text.slice(0, 300)).toBe(200);
    const id = r.json.products[0].product_id;
    expect(r.json.products[0].variants).toHaveLength(2048);
    const one = (await get(`/v1/products/${id}`)).json;
    expect(one.variants).toHaveLength(2048);
    expect(one.variants[2047]).toMatchObject({
      sku: `${prefix}-2047`,
      variant_option5_name: "Edition",
      variant_option4_value: "F3",
      variant_option1_value: "S7",
    });
    const modelled = (await get(`/v1/products?product_id=${id}&include_details=true`)).json;
    expect(modelled.variants).toHaveLength(2048);
    const page = (await get("/v1/products?limit=500&include_details=true")).json as Json[];
    expect(page.find((p) => p.id === String(id))?.variants).toHaveLength(2048);
    const over = await post("/v1/products", {
      title: "Too big",
      price: 1,
      variants: { add: [...entries(uid("X"), 2048), { ...entry(uid("Y"), 0), variant_option5_value: "E9" }] },
    });
    expect(over.status).toBe(400);
    expect(over.json.errors).toEqual(["variants.add: must have at most 2048 entries"]);
  });

  it("syncs all 2,048 (new stock and prices, one variant renamed, one replaced) in one read and one write", async () => {
    const prefix = uid("SYN");
    const p = await post("/v1/products", { title: "Sync", price: 100, variants: { add: entries(prefix, 2048) } });
    const id = p.json.products[0].product_id;
    const before = (await get(`/v1/products/${id}`)).json.variants as Json[];
    const list = entries(prefix, 2048, (i) => ({ qty: 1000 + i, price: 200 + i }));
    // Variant 5 gets a new SKU (so the old one is deleted and a new one made); 6 and 7 swap values.
    list[5].sku = `${prefix}-new`;
    for (let k = 1; k <= 5; k++) {
      const key = `variant_option${k}_value`;
      [list[6][key], list[7][key]] = [list[7][key], list[6][key]];
    }
    const w = wrapD1();
    const r = await put("/v1/products", { product_id: id, variants: { sync: list } }, { env: { DB: w.db } });
    expect(r.status, r.text.slice(0, 300)).toBe(200);
    expect(w.counts.calls).toBe(2);
    const after = (await get(`/v1/products/${id}`)).json.variants as Json[];
    expect(after).toHaveLength(2048);
    expect(after.map((v) => v.qty)).toEqual(list.map((e) => e.qty));
    expect(after.map((v) => v.price)).toEqual(list.map((e) => e.price));
    expect(after[5].sku).toBe(`${prefix}-new`);
    expect(after[5].variant_id).not.toBe(before[5].variant_id);
    expect(after[6].variant_id).toBe(before[6].variant_id);
    expect(after[6].variant_option1_value).toBe(before[7].variant_option1_value);
    expect(after[7].variant_option1_value).toBe(before[6].variant_option1_value);
    expect(r.json.products[0].variants).toEqual(after);
  });

  it("grows from one variant to 2,048 by a sync in one read and one write (the way docs/products.md advises)", async () => {
    const prefix = uid("GROW");
    const p = await post("/v1/products", { title: "Grow", price: 100, variants: { add: entries(prefix, 1) } });
    const id = p.json.products[0].product_id;
    const w = wrapD1();
    const r = await put(
      "/v1/products",
      { product_id: id, variants: { sync: entries(prefix, 2048) } },
      { env: { DB: w.db } },
    );
    expect(r.status, r.text.slice(0, 300)).toBe(200);
    expect(w.counts.calls).toBe(2);
    expect(r.json.products[0].variants).toHaveLength(2048);
  });

  it("refuses a sync of 2,048 with one bad entry whole, naming it, and keeps every variant", async () => {
    const prefix = uid("BAD");
    const p = await post("/v1/products", { title: "Bad", price: 100, variants: { add: entries(prefix, 2048) } });
    const id = p.json.products[0].product_id;
    const before = (await get(`/v1/products/${id}`)).json;
    const list = entries(prefix, 2048, () => ({ qty: 9 }));
    delete list[2000].variant_option3_value;
    const r = await put("/v1/products", { product_id: id, variants: { sync: list } });
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual(['variants.sync[2000].variant_option3_value: is required (option "Material")']);
    expect((await get(`/v1/products/${id}`)).json).toEqual(before);
  });

  it("grows to 2,048 by variants.add, updates them all by variants.update in one read and one write, and refuses the 2,049th", async () => {
    const prefix = uid("ADD");
    const p = await post("/v1/products", { title: "Add", price: 100, variants: { add: entries(prefix, 1000) } });
    const id = p.json.products[0].product_id;
    const more = Array.from({ length: 1048 }, (_, i) => entry(prefix, 1000 + i));
    const added = await put("/v1/products", { product_id: id, variants: { add: more } });
    expect(added.status, added.text.slice(0, 300)).toBe(200);
    const variants = added.json.products[0].variants as Json[];
    expect(variants).toHaveLength(2048);
    const update = variants.map((v, i) => ({ variant_id: v.variant_id, qty: 7, price: 300 + (i % 3) }));
    const w = wrapD1();
    const updated = await put("/v1/products", { product_id: id, variants: { update } }, { env: { DB: w.db } });
    expect(updated.status).toBe(200);
    expect(w.counts.calls).toBe(2);
    const now = (await get(`/v1/products/${id}`)).json.variants as Json[];
    expect(now.every((v) => v.qty === 7)).toBe(true);
    expect(now.map((v) => v.price)).toEqual(update.map((u) => u.price));
    const extra = { ...entry(prefix, 0), sku: `${prefix}-extra`, variant_option5_value: "E1" };
    const refused = await put("/v1/products", { product_id: id, variants: { add: [extra] } });
    expect(refused.status).toBe(400);
    expect(refused.json.errors).toEqual([
      "variants: a product has at most 2048 variants; this request would leave 2049",
    ]);
  });

  it("sells its variants: an order line by SKU and one by variant_id carry the five options", async () => {
    const prefix = uid("ORD");
    const p = await post("/v1/products", { title: "Sold", price: 100, variants: { add: entries(prefix, 2048) } });
    const product = p.json.products[0];
    const last = product.variants[2047];
    const r = await post("/v1/orders", [
      {
        order_id: "create",
        products: [
          { sku: `${prefix}-2047`, qty: 1 },
          { product_id: product.product_id, variant_id: product.variants[1].variant_id, qty: 1 },
        ],
      },
    ]);
    expect(r.status, r.text).toBe(200);
    const lines = (await get(`/v1/orders/${r.json.results.create_1.order_id}`)).json.products as Json[];
    expect(lines[0]).toMatchObject({ variant_id: last.variant_id, sku: `${prefix}-2047` });
    expect(lines[0].options).toHaveLength(5);
    expect(lines[0].options[4]).toEqual({ name: "Edition", value: "E0" });
    expect((await get(`/v1/products/${product.product_id}`)).json.variants[2047].qty).toBe(last.qty - 1);
  });
});

describe("a list too large to bind as one value", () => {
  it("a sync of 1,000 entries with long image URLs (over 900 KB packed) still lands whole", async () => {
    const prefix = uid("IMG");
    const p = await post("/v1/products", { title: "Images", price: 100, variants: { add: entries(prefix, 1000) } });
    expect(p.status).toBe(200);
    const id = p.json.products[0].product_id;
    // A stock-and-image feed by SKU (values kept): about 960 bytes an entry in the body, more
    // packed (absent fields travel as nulls): under the 1 MiB body bound, past one bound value,
    // and the answer under 2 MiB.
    const url = (i: number) => `https://img.example/${i}/${"u".repeat(880)}.jpg`;
    const list = Array.from({ length: 1000 }, (_, i) => ({ sku: `${prefix}-${i}`, images: [url(i)], qty: 3 }));
    const body = JSON.stringify({ product_id: id, variants: { sync: list } });
    expect(body.length).toBeGreaterThan(900_000);
    expect(body.length).toBeLessThan(1024 * 1024);
    const w = wrapD1();
    const r = await put("/v1/products", JSON.parse(body), { env: { DB: w.db } });
    expect(r.status, r.text.slice(0, 300)).toBe(200);
    // The plan took it in one read and one write, the list bound in two values.
    expect(w.counts.calls).toBe(2);
    expect(w.counts.maxParamBytes).toBeLessThan(1_000_000);
    const now = (await get(`/v1/products/${id}`)).json.variants as Json[];
    expect(now.map((v) => v.images[0].url)).toEqual(list.map((_, i) => url(i)));
    expect(now.every((v) => v.qty === 3)).toBe(true);
  });
});
