import { beforeAll, describe, expect, it } from "vitest";
import { wrapD1 } from "./d1-wrap";
import { countProducts, refusedPosts, SHOP, title } from "./fixtures/product-categories";
import { createProduct, get, post, put, subscribeAll, uid } from "./helpers";

// A product's slug and url (docs/products.md, "Categories, URLs and images"): derived from the
// title or given by the client, unique, and the url a STORE_URL makes of it in the answers.

beforeAll(subscribeAll);

const slugOf = (t: string) => t.toLowerCase().replace(/[^a-z0-9]+/g, "-");

describe("slugs and url", () => {
  it("derives the slug from the title: lowercase ASCII and dashes", async () => {
    const tag = uid("s").toLowerCase();
    const p = await createProduct({ title: `Blå T-shirt (Herr) ${tag}!` });
    expect(p.slug).toBe(`bla-t-shirt-herr-${tag}`);
    const q = await createProduct({ title: "ÅÄÖ ✓ 𝄞" });
    expect(q.slug).toMatch(/^aao(-\d+)?$/);
  });

  it("numbers colliding slugs -2, -3 inside one batch, and later requests go on", async () => {
    const t = title("Same");
    const wrapped = wrapD1();
    const r = await post(
      "/v1/products",
      [
        { title: t, price: 1 },
        { title: t, price: 1 },
        { title: t, price: 1 },
      ],
      {
        env: { DB: wrapped.db },
      },
    );
    expect(r.status, r.text).toBe(200);
    expect(wrapped.counts.calls).toBe(1);
    const base = slugOf(t);
    expect(r.json.products.map((p: any) => p.slug)).toEqual([base, `${base}-2`, `${base}-3`]);
    const next = await createProduct({ title: t });
    expect(next.slug).toBe(`${base}-4`);
    // A title that gives a numbered slug itself is its own base.
    const numbered = await createProduct({ title: `${t} 2` });
    expect(numbered.slug).toBe(`${base}-2-2`);
  });

  it("takes a slug from the client, unique: a taken one is 409 naming slug, and nothing is written", async () => {
    const s = `own-${uid("x").toLowerCase()}`;
    const p = await createProduct({ title: title("Own"), slug: s });
    expect(p.slug).toBe(s);
    const before = await countProducts();
    const r = await post("/v1/products", { title: "Other", price: 1, slug: s });
    expect(r.status).toBe(409);
    expect(r.json.errors).toEqual([`slug: ${s} is already used by product ${p.product_id}`]);
    const twice = await post("/v1/products", [
      { title: "A", price: 1, slug: `${s}-x` },
      { title: "B", price: 1, slug: `${s}-x` },
    ]);
    expect(twice.json.success).toBe(1);
    expect(twice.json.errors).toEqual([`[1].slug: ${s}-x is used twice in this request`]);
    expect(await countProducts()).toBe(before + 1);
  });

  it("PUT sets a slug, refuses a taken one with 409, and null derives it again from the title", async () => {
    const a = await createProduct({ title: title("PutA") });
    const b = await createProduct({ title: title("PutB") });
    const s = `put-${uid("y").toLowerCase()}`;
    let r = await put("/v1/products", { product_id: a.product_id, slug: s });
    expect(r.json.products[0].slug).toBe(s);
    r = await put("/v1/products", { product_id: b.product_id, slug: s, title: "Kept?" });
    expect(r.status).toBe(409);
    expect(r.json.errors).toEqual([`slug: ${s} is already used by product ${a.product_id}`]);
    expect((await get(`/v1/products/${b.product_id}`)).json).toMatchObject({ slug: b.slug, title: b.title });
    // Two items of one request claiming one slug: the second is refused, the first applied.
    const s2 = `${s}-two`;
    r = await put("/v1/products", [
      { product_id: a.product_id, slug: s2 },
      { product_id: b.product_id, slug: s2 },
    ]);
    expect(r.json.success).toBe(1);
    expect(r.json.errors).toEqual([`[1].slug: ${s2} is also claimed by item [0] of this request`]);
    const t = title("Fresh");
    r = await put("/v1/products", { product_id: a.product_id, slug: null, title: t });
    expect(r.json.products[0].slug).toBe(slugOf(t));
    // The title alone does not move the slug (links stay valid).
    r = await put("/v1/products", { product_id: a.product_id, title: "Another title" });
    expect(r.json.products[0].slug).toBe(slugOf(t));
    // Two products of one request deriving one slug: resolved in the one write batch.
    const t2 = title("Both");
    r = await put("/v1/products", [
      { product_id: a.product_id, slug: null, title: t2 },
      { product_id: b.product_id, slug: null, title: t2 },
    ]);
    expect(r.json.products.map((p: any) => p.slug)).toEqual([slugOf(t2), `${slugOf(t2)}-2`]);
  });

  it('url is STORE_URL + / + slug, null (ours) and "" (modelled) without STORE_URL', async () => {
    const p = await createProduct({ title: title("Url") });
    expect(p.url).toBeNull();
    const ours = await get(`/v1/products/${p.product_id}`, { env: SHOP });
    expect(ours.json.url).toBe(`https://shop.example/products/${p.slug}`);
    const modelled = await get(`/v1/products?product_id=${p.product_id}`, { env: SHOP });
    expect(modelled.json.url).toBe(`https://shop.example/products/${p.slug}`);
    const page = await get(`/v1/products?search=${encodeURIComponent(p.title)}&include_details=true`, {
      env: { STORE_URL: "https://shop.example" },
    });
    expect(page.json[0].url).toBe(`https://shop.example/${p.slug}`);
    const written = await put("/v1/products", { product_id: p.product_id, stock: 1 }, { env: SHOP });
    expect(written.json.products[0].url).toBe(`https://shop.example/products/${p.slug}`);
    expect((await get(`/v1/products?product_id=${p.product_id}`)).json.url).toBe("");
  });
});

describe("validation: 400 naming the field, nothing written", () => {
  refusedPosts([
    [
      "a slug with capitals",
      { slug: "Blue-Shirt" },
      'slug: must be lowercase letters a-z, digits and single dashes between them (like "blue-t-shirt")',
    ],
    [
      "a slug with a double dash",
      { slug: "a--b" },
      'slug: must be lowercase letters a-z, digits and single dashes between them (like "blue-t-shirt")',
    ],
    ["a slug too long", { slug: "a".repeat(101) }, "slug: must be at most 100 characters"],
  ]);
});
