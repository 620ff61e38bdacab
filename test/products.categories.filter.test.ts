import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { SHOP, title } from "./fixtures/product-categories";
import { call, createProduct, get, post, put, subscribeAll, uid } from "./helpers";

// GET /v1/products?category= (docs/products.md, "Categories, URLs and images"): a category name or
// path, matched through the categories POST and PUT /v1/products write
// (test/products.categories.test.ts).

beforeAll(subscribeAll);

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
