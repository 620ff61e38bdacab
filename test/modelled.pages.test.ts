import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { PAGE_LINES_MAX } from "../src/orders/list";
import { PAGE_VARIANTS_MAX } from "../src/products/list";
import { get } from "./helpers";

// Pages whose child rows (variants with include_details, order lines) would pass the CPU budget's
// bound end early (src/docs/modelled-reads.md, "Modelled reads"): cursor pages end short with a Link to the rest;
// offset pages are refused with the limit that fits, since an offset client would step over the rest.

const seq = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => i));
const linkOf = (r: { headers: Headers }) => {
  const link = r.headers.get("link");
  return link ? new URL(/^<([^>]+)>; rel="next"$/.exec(link)?.[1] as string) : undefined;
};

describe("products with include_details: at most PAGE_VARIANTS_MAX variants a page", () => {
  it("cuts a cursor page short and refuses an offset page, naming the limit that fits", async () => {
    const per = Math.ceil(PAGE_VARIANTS_MAX / 2.5); // two products fit, three do not
    await env.DB.batch([
      env.DB.prepare(
        `INSERT INTO products (title, price, option_names, created_at, updated_at)
         SELECT 'big ' || value, 100, '["Size"]', 0, 0 FROM json_each('[0,1,2]')`,
      ),
      env.DB.prepare(
        `INSERT INTO variants (product_id, option1_value, qty, position, created_at, updated_at)
         SELECT p.id, 'S' || j.value, 1, j.value, 0, 0 FROM products AS p, json_each(?1) AS j`,
      ).bind(seq(per)),
    ]);
    const first = await get("/v1/products?limit=3&include_details=true");
    expect(first.status).toBe(200);
    expect(first.json.map((p: any) => p.variants.length)).toEqual([per, per]);
    const next = linkOf(first);
    expect(next?.searchParams.get("cursor")).toEqual(expect.any(String));
    const rest = await get(`/v1/products${next?.search}`);
    expect(rest.json.map((p: any) => [p.title, p.variants.length])).toEqual([["big 2", per]]);
    expect(linkOf(rest)).toBeUndefined();

    const byOffset = await get("/v1/products?limit=3&offset=0&include_details=true");
    expect(byOffset.status).toBe(400);
    expect(byOffset.json.errors).toEqual([
      `limit: this page would hold more than ${PAGE_VARIANTS_MAX} variants; its first 2 fit (limit=2)`,
    ]);
    expect((await get("/v1/products?limit=2&offset=0&include_details=true")).json).toHaveLength(2);
    // Without details no variant is presented: the whole page.
    expect((await get("/v1/products?limit=3&offset=0")).json).toHaveLength(3);
    // One product always fits, whatever its variants.
    expect((await get("/v1/products?limit=1&offset=2&include_details=true")).json).toHaveLength(1);
  });
});

describe("orders: at most PAGE_LINES_MAX lines a page", () => {
  it("cuts a cursor page short in the page's own order and refuses an offset page", async () => {
    const per = 500;
    const n = Math.floor(PAGE_LINES_MAX / per) + 1;
    await env.DB.batch([
      env.DB.prepare(
        `INSERT INTO orders (token, currency, subtotal, total, created_at, updated_at)
         SELECT 'lines-' || value, 'SEK', 100, 100 + value, value, value FROM json_each(?1)`,
      ).bind(seq(n)),
      env.DB.prepare(
        `INSERT INTO order_lines (order_id, position, product_id, title, qty, unit_price, tax_rate)
         SELECT o.id, j.value, 1, 'line', 1, 50, 25 FROM orders AS o, json_each(?1) AS j`,
      ).bind(seq(per)),
    ]);
    for (const sort of ["sort_order=desc", "sort_order=asc", "order_by=price&sort_order=desc"]) {
      const all = (await get(`/v1/orders?${sort}&limit=${n}&offset=0`)).status;
      expect(all, sort).toBe(400);
      const first = await get(`/v1/orders?${sort}&limit=${n}`);
      expect(first.status, sort).toBe(200);
      expect(first.json, sort).toHaveLength(n - 1);
      for (const o of first.json) expect(o.products, sort).toHaveLength(per);
      const rest = await get(`/v1/orders${linkOf(first)?.search}`);
      expect(rest.json, sort).toHaveLength(1);
      expect(rest.json[0].products, sort).toHaveLength(per);
      const ids = [...first.json, ...rest.json].map((o: any) => Number(o.order_id));
      expect(new Set(ids).size, sort).toBe(n);
    }
    const refused = await get(`/v1/orders?limit=${n}&offset=0`);
    expect(refused.json.errors).toEqual([
      `limit: this page would hold more than ${PAGE_LINES_MAX} order lines; its first ${n - 1} fit (limit=${n - 1})`,
    ]);
  });
});
