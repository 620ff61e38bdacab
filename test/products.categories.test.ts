import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { wrapD1 } from "./d1-wrap";
import { refusedPosts, title } from "./fixtures/product-categories";
import { createProduct, get, post, put, subscribeAll, uid } from "./helpers";

// Categories (docs/products.md, "Categories, URLs and images"): written by POST and PUT
// /v1/products in the modelled API's fields and ours, read back in the modelled shape.
// test/products.categories.filter.test.ts has ?category=, test/products.slugs.test.ts and
// test/products.images.test.ts the rest of that section.

beforeAll(subscribeAll);

const cat = (...names: string[]) => names.map((category) => ({ category }));

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

describe("categories across the items of one body", () => {
  it("a head category joins the paths an earlier item left, not the ones stored before it", async () => {
    const full = Array.from({ length: 20 }, (_, i) => [`Full ${i}`]);
    const p = await createProduct({ title: title("Rounds"), categories: full });
    const r = await put("/v1/products", [
      { product_id: p.product_id, categories: null },
      { product_id: p.product_id, headcategory_name: "New" },
    ]);
    expect(r.status, r.text).toBe(200);
    expect(r.json.errors).toEqual([]);
    expect(r.json.success).toBe(2);
    expect((await get(`/v1/products/${p.product_id}`)).json.categories).toEqual([["New"]]);
  });
});

describe("validation: 400 naming the field, nothing written", () => {
  const deep = ["1", "2", "3", "4", "5", "6"];
  refusedPosts([
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
  ]);

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
