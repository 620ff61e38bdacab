import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { wrapD1 } from "./d1-wrap";
import { call, createProduct, get, post, put, subscribeAll, uid } from "./helpers";

// Categories, slugs, urls and images (docs/products.md, "Categories, URLs and images"): written
// by POST and PUT /v1/products in the modelled API's fields and ours, read back in the modelled
// shape, filtered with ?category=.

beforeAll(subscribeAll);

const SHOP = { STORE_URL: "https://shop.example/products/" };
const cat = (...names: string[]) => names.map((category) => ({ category }));
/** A title (and so a slug base) no other test of this file uses. */
const title = (prefix: string) => `${prefix} ${uid("t")}`;
const slugOf = (t: string) => t.toLowerCase().replace(/[^a-z0-9]+/g, "-");

const countProducts = async () =>
  (await env.DB.prepare("SELECT count(*) AS n FROM products").first<{ n: number }>())?.n ?? 0;

describe("categories on create and in the reads", () => {
  it("takes headcategory_name and categories (modelled objects or names) and reads them back everywhere", async () => {
    const sku = uid("CAT");
    const r = await post("/v1/products", {
      title: title("Shirt"),
      price: 100,
      sku,
      headcategory_name: "Clothes",
      categories: [["Sale"], [{ category: "Clothes" }, "Shirts"]],
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json.notices).toEqual([]);
    const p = r.json.products[0];
    // The path of the head category comes first.
    expect(p.categories).toEqual([["Clothes", "Shirts"], ["Sale"]]);
    expect((await get(`/v1/products/${p.product_id}`)).json.categories).toEqual(p.categories);

    const modelled = {
      headcategory_name: "Clothes",
      categories: [cat("Clothes", "Shirts"), cat("Sale")],
      url: "",
    };
    expect((await get(`/v1/products?product_id=${p.product_id}`)).json).toMatchObject(modelled);
    expect((await get(`/v1/products?sku=${sku}&include_details=true`)).json).toMatchObject(modelled);
    const list = (await get(`/v1/products?search=${sku}`)).json;
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject(modelled);
  });

  it.each([
    ["alone gives the path [head]", [], "Toys", [["Toys"]]],
    [
      "moves the first path it heads to the front",
      [["A"], ["Toys", "Cars"], ["Toys"]],
      "Toys",
      [["Toys", "Cars"], ["A"], ["Toys"]],
    ],
    ["already first changes nothing", [["Toys"], ["A"]], "Toys", [["Toys"], ["A"]]],
    ["that heads no path is put in front", [["A", "B"]], "Toys", [["Toys"], ["A", "B"]]],
  ])("headcategory_name %s", async (_, categories, head, want) => {
    const p = await createProduct({ title: title("Head"), categories, headcategory_name: head });
    expect(p.categories).toEqual(want);
  });

  it.each([
    ["a name", "T-shirts", [["T-shirts"]]],
    ["unset", undefined, []],
  ])("takes the C# SDK's create body with headcategory_name %s, without notices", async (_, head, want) => {
    // Every property of its CreateProductRequest; it leaves out the null ones (NullValueHandling.Ignore).
    const r = await post("/v1/products", {
      sku: uid("SDK"),
      title: title("Sdk"),
      price: "249",
      tax_rate: 25,
      stock: 3,
      headcategory_name: head,
      disable_minusqty: "0",
      visible: 1,
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json.notices).toEqual([]);
    expect(r.json.products[0].categories).toEqual(want);
    // Its Product reads headcategory_name as a string.
    const m = (await get(`/v1/products?product_id=${r.json.products[0].product_id}&limit=1`)).json;
    expect(m.headcategory_name).toBe(head ?? "");
  });

  it('a product without categories reads [] and headcategory_name ""', async () => {
    const p = await createProduct({ title: title("Plain") });
    expect(p.categories).toEqual([]);
    const m = (await get(`/v1/products?product_id=${p.product_id}`)).json;
    expect(m).toMatchObject({ headcategory_name: "", categories: [], url: "" });
  });

  it("drops a path given twice, and trims names", async () => {
    const p = await createProduct({
      title: title("Dup"),
      categories: [
        [" A ", "B"],
        ["A", "B "],
      ],
    });
    expect(p.categories).toEqual([["A", "B"]]);
  });
});

describe("categories on update", () => {
  it("categories replace the paths; headcategory_name alone keeps them and moves or adds the head", async () => {
    const p = await createProduct({ title: title("Upd"), categories: [["Old"]] });
    let r = await put("/v1/products", { product_id: p.product_id, categories: [["New", "Sub"], ["Other"]] });
    expect(r.status, r.text).toBe(200);
    expect(r.json.products[0].categories).toEqual([["New", "Sub"], ["Other"]]);
    r = await put("/v1/products", { product_id: p.product_id, headcategory_name: "Other" });
    expect(r.json.products[0].categories).toEqual([["Other"], ["New", "Sub"]]);
    r = await put("/v1/products", { product_id: p.product_id, headcategory_name: "Gifts" });
    expect(r.json.products[0].categories).toEqual([["Gifts"], ["Other"], ["New", "Sub"]]);
    // null and "" change nothing; other fields leave the categories alone.
    r = await put("/v1/products", { product_id: p.product_id, headcategory_name: null, title: "Renamed" });
    expect(r.json.products[0].categories).toEqual([["Gifts"], ["Other"], ["New", "Sub"]]);
    r = await put("/v1/products", { product_id: p.product_id, categories: null });
    expect(r.json.products[0].categories).toEqual([]);
    expect((await get(`/v1/products?product_id=${p.product_id}`)).json.headcategory_name).toBe("");
  });

  it("headcategory_name alone rearranges the categories as the write finds them, not as it read them", async () => {
    const p = await createProduct({ title: title("Race"), categories: [["Read"]] });
    let changed = false;
    // Another request changes the categories between this PUT's read and its write batch.
    const db = new Proxy(env.DB, {
      get(target, prop, self) {
        if (prop === "withSession") return () => self;
        if (prop === "batch") {
          return async (stmts: D1PreparedStatement[]) => {
            if (stmts.length > 4 && !changed) {
              changed = true;
              await target
                .prepare(`UPDATE products SET categories = '[["Concurrent"]]' WHERE id = ?`)
                .bind(p.product_id)
                .run();
            }
            return target.batch(stmts);
          };
        }
        const v = (target as any)[prop];
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    const r = await put("/v1/products", { product_id: p.product_id, headcategory_name: "Head" }, { env: { DB: db } });
    expect(r.status, r.text).toBe(200);
    expect(changed).toBe(true);
    expect(r.json.products[0].categories).toEqual([["Head"], ["Concurrent"]]);
  });

  it("a change of categories writes a product.update event in its batch", async () => {
    const p = await createProduct({ title: title("Evt") });
    const r = await put("/v1/products", { product_id: p.product_id, categories: [["Evented"]] });
    expect(r.status).toBe(200);
    const events = await env.DB.prepare("SELECT type FROM events WHERE product_id = ? ORDER BY rowid")
      .bind(p.product_id)
      .all<{ type: string }>();
    expect(events.results.map((e) => e.type)).toEqual(["product.add", "product.update"]);
  });

  it("categories of a product selected by a variant's SKU change its product", async () => {
    const vsku = uid("VC");
    const p = await createProduct({
      title: title("Var"),
      variants: { add: [{ variant_option1_name: "Size", variant_option1_value: "S", sku: vsku }] },
    });
    const r = await put("/v1/products", { sku: vsku, categories: [["ByVariant"]], stock: 2 });
    expect(r.status, r.text).toBe(200);
    expect(r.json.products[0]).toMatchObject({ product_id: p.product_id, categories: [["ByVariant"]] });
  });
});

describe("GET /v1/products?category=", () => {
  const ids = async (q: string) =>
    (await get(`/v1/products?category=${encodeURIComponent(q)}`)).json.map((p: any) => Number(p.id));

  it("matches a name at any level, and a path with its sub-categories", async () => {
    const tag = uid("F");
    const shirt = await createProduct({ title: title("F1"), categories: [[`${tag}-Clothes`, `${tag}-Shirts`]] });
    const tee = await createProduct({
      title: title("F2"),
      categories: [[`${tag}-Clothes`, `${tag}-Shirts`, `${tag}-Tees`], [`${tag}-Sale`]],
    });
    const sale = await createProduct({ title: title("F3"), categories: [[`${tag}-Sale`, `${tag}-Shirts`]] });
    expect(await ids(`${tag}-Clothes`)).toEqual([shirt.product_id, tee.product_id]);
    // A sub-category's name matches under any head category.
    expect(await ids(`${tag}-Shirts`)).toEqual([shirt.product_id, tee.product_id, sale.product_id]);
    expect(await ids(`${tag}-Clothes>${tag}-Shirts`)).toEqual([shirt.product_id, tee.product_id]);
    expect(await ids(` ${tag}-Clothes > ${tag}-Shirts > ${tag}-Tees `)).toEqual([tee.product_id]);
    expect(await ids(`${tag}-Shirts>${tag}-Tees`)).toEqual([]);
    expect(await ids(`${tag}-Sale`)).toEqual([tee.product_id, sale.product_id]);
    // Combined with the other parameters.
    const r = await get(`/v1/products?category=${tag}-Sale&limit=1&offset=1`);
    expect(r.json.map((p: any) => Number(p.id))).toEqual([sale.product_id]);
  });

  it("serves a storefront's publishable key: visible products only, with their url", async () => {
    const tag = uid("PK");
    const k = await post("/v1/keys", { name: `storefront ${tag}`, type: "publishable" });
    expect(k.status, k.text).toBe(201);
    const shown = await createProduct({ title: title("Shown"), categories: [[`${tag}-Shop`]] });
    await createProduct({ title: title("Hidden"), categories: [[`${tag}-Shop`]], visible: 0 });
    const r = await get(`/v1/products?category=${tag}-Shop`, {
      headers: { authorization: "", "x-publishable-key": k.json.key },
      env: SHOP,
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json.map((p: any) => [Number(p.id), p.url])).toEqual([
      [shown.product_id, `https://shop.example/products/${shown.slug}`],
    ]);
  });

  it("follows updates and deletions", async () => {
    const tag = uid("U");
    const p = await createProduct({ title: title("Follow"), categories: [[`${tag}-A`]] });
    await put("/v1/products", { product_id: p.product_id, categories: [[`${tag}-B`]] });
    expect(await ids(`${tag}-A`)).toEqual([]);
    expect(await ids(`${tag}-B`)).toEqual([p.product_id]);
    const d = await call("DELETE", "/v1/products", { body: { product_id: p.product_id } });
    expect(d.status).toBe(200);
    const left = await env.DB.prepare("SELECT count(*) AS n FROM product_categories WHERE product_id = ?")
      .bind(p.product_id)
      .first<{ n: number }>();
    expect(left?.n).toBe(0);
  });

  it("is an index lookup", async () => {
    for (const col of ["name", "path"]) {
      const plan = await env.DB.prepare(
        `EXPLAIN QUERY PLAN SELECT p.id FROM products AS p
         WHERE p.id IN (SELECT product_id FROM product_categories WHERE ${col} = ?1)`,
      )
        .bind("x")
        .all<{ detail: string }>();
      const details = plan.results.map((r) => r.detail).join("\n");
      expect(details).toContain(`USING COVERING INDEX product_categories_${col}`);
      expect(details).not.toMatch(/SCAN (p|product_categories)\b/);
    }
  });

  it.each([
    ["category=", "category: must not be empty"],
    ["category=A>>B", 'category: must be a category name or a path of names joined with ">"'],
    ["category=>A", 'category: must be a category name or a path of names joined with ">"'],
  ])("%s is 400 naming the parameter", async (q, error) => {
    const r = await get(`/v1/products?${q}`);
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual([error]);
  });
});

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

describe("images", () => {
  it("takes the modelled object keyed by position, and a list of URLs", async () => {
    const a = await createProduct({
      title: title("ImgA"),
      images: {
        "2": { image: "https://img.example/2.jpg" },
        "1": { image: "https://img.example/1.jpg", alttext: "Front" },
      },
    });
    expect(a.images).toEqual([
      { url: "https://img.example/1.jpg", alttext: "Front" },
      { url: "https://img.example/2.jpg" },
    ]);
    const b = await createProduct({ title: title("ImgB"), images: ["https://img.example/b.jpg"] });
    expect(b.images).toEqual([{ url: "https://img.example/b.jpg" }]);
    const m = (await get(`/v1/products?product_id=${a.product_id}&include_details=true`)).json;
    expect(m.images["1"].image).toBe("https://img.example/1.jpg");
    expect(m.images).toEqual({
      "1": { image: "https://img.example/1.jpg", alttext: "Front" },
      "2": { image: "https://img.example/2.jpg", alttext: "" },
    });
    const r = await put("/v1/products", {
      product_id: b.product_id,
      images: { "1": { image: "https://img.example/c.jpg" } },
    });
    expect(r.json.products[0].images).toEqual([{ url: "https://img.example/c.jpg" }]);
  });
});

describe("validation: 400 naming the field, nothing written", () => {
  const deep = ["1", "2", "3", "4", "5", "6"];
  it.each([
    [
      "categories not an array",
      { categories: "Clothes" },
      "categories: must be an array of category paths (arrays of names)",
    ],
    [
      "a path not an array",
      { categories: ["Clothes"] },
      "categories[0]: must be an array of category names, head category first",
    ],
    ["an empty path", { categories: [[]] }, "categories[0]: must name at least one category"],
    ["an empty name", { categories: [["A", " "]] }, "categories[0][1]: must not be empty"],
    ["a name with >", { categories: [["A>B"]] }, 'categories[0][0]: must not contain ">"'],
    ["a name not text", { categories: [[12]] }, 'categories[0][0]: must be a category name or {"category": name}'],
    [
      "an object without category",
      { categories: [[{ name: "A" }]] },
      'categories[0][0]: must be a category name or {"category": name}',
    ],
    ["a path too deep", { categories: [deep] }, "categories[0]: must have at most 5 levels"],
    [
      "too many paths",
      { categories: Array.from({ length: 21 }, (_, i) => [`C${i}`]) },
      "categories: must have at most 20 paths",
    ],
    ["a head category with >", { headcategory_name: "A>B" }, 'headcategory_name: must not contain ">"'],
    [
      "a head category past 20 paths",
      { headcategory_name: "New", categories: Array.from({ length: 20 }, (_, i) => [`C${i}`]) },
      "headcategory_name: the product would be in more than 20 category paths",
    ],
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
    ["an http image", { images: ["http://img.example/a.jpg"] }, "images[0].url: must be an https URL"],
    ["an image {image} not a URL", { images: { "1": { image: "a.jpg" } } }, "images.1.image: must be an https URL"],
    ["an image without url", { images: [{ alttext: "x" }] }, "images[0].url: is required"],
  ])("POST with %s", async (_, fields, error) => {
    const before = await countProducts();
    const r = await post("/v1/products", { title: "Bad", price: 1, ...fields });
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual([error]);
    expect(await countProducts()).toBe(before);
  });

  it("a bad category in one item of an array writes nothing of that item; a PUT item keeps its product whole", async () => {
    const t = title("Atomic");
    const r = await post("/v1/products", [
      { title: `${t} ok`, price: 1, categories: [["Fine"]] },
      { title: `${t} bad`, price: 1, categories: [["Fine", ""]] },
    ]);
    expect(r.status).toBe(200);
    expect(r.json.success).toBe(1);
    expect(r.json.errors).toEqual(["[1].categories[0][1]: must not be empty"]);
    const bad = await env.DB.prepare("SELECT count(*) AS n FROM products WHERE title = ?")
      .bind(`${t} bad`)
      .first<{ n: number }>();
    expect(bad?.n).toBe(0);
    const p = r.json.products[0];
    const u = await put("/v1/products", { product_id: p.product_id, title: "Changed", categories: [["A>B"]] });
    expect(u.status).toBe(400);
    const now = (await get(`/v1/products/${p.product_id}`)).json;
    expect(now).toMatchObject({ title: `${t} ok`, categories: [["Fine"]], updated_at: p.updated_at });
  });
});

describe("cost", () => {
  it("a create is one round trip with the same statements for 1 and 20 category paths", async () => {
    const seen: number[][] = [];
    for (const n of [1, 20]) {
      const wrapped = wrapD1();
      const categories = Array.from({ length: n }, (_, i) => [`Cost${i}`, "Sub", "Leaf"]);
      const r = await post("/v1/products", { title: title("Cost"), price: 1, categories }, { env: { DB: wrapped.db } });
      expect(r.status).toBe(200);
      expect(wrapped.counts.calls).toBe(1);
      seen.push(wrapped.counts.statementsPerCall);
    }
    expect(seen[1]).toEqual(seen[0]);
  });
});
