import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ORDER_LIMIT_MAX } from "../src/orders/list";
import { PRODUCT_LIMIT_MAX } from "../src/products/list";
import { wrapD1 } from "./d1-wrap";
import { get } from "./helpers";

// The modelled reads cost one D1 round trip, with the same statements for a page of one row and
// a page of the largest accepted size (docs/modelled-reads.md, "Modelled reads").

const seq = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => i));

async function fill() {
  await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO products (title, price, option_names, created_at, updated_at)
       SELECT 'budget ' || value, 100, '["Size"]', 0, 0 FROM json_each(?1)`,
    ).bind(seq(PRODUCT_LIMIT_MAX + 5)),
    // Three variants for each product.
    env.DB.prepare(
      `INSERT INTO variants (product_id, option1_value, qty, position, created_at, updated_at)
       SELECT p.id, 'S' || j.value, 1, j.value, 0, 0 FROM products AS p, json_each('[0,1,2]') AS j`,
    ),
    env.DB.prepare(
      `INSERT INTO orders (token, currency, subtotal, total, created_at, updated_at)
       SELECT 'budget-' || value, 'SEK', 100, 100, value, value FROM json_each(?1)`,
    ).bind(seq(ORDER_LIMIT_MAX + 5)),
    env.DB.prepare(
      `INSERT INTO order_lines (order_id, position, product_id, title, qty, unit_price, tax_rate)
       SELECT o.id, j.value, 1, 'line', 1, 50, 25 FROM orders AS o, json_each('[0,1]') AS j`,
    ),
  ]);
}

async function cost(path: string) {
  const { db, counts } = wrapD1();
  const r = await get(path, { env: { DB: db } });
  expect(r.status, r.text).toBe(200);
  return { counts, r };
}

describe("D1 budget of the modelled reads", () => {
  it("one round trip, the same statements at every page size", async () => {
    await fill();
    for (const [small, large, rows] of [
      ["/v1/products?limit=1", `/v1/products?limit=${PRODUCT_LIMIT_MAX}`, (j: any) => j.length],
      [
        "/v1/products?limit=1&include_details=true",
        // A full page of the largest size, with every product's variants.
        `/v1/products?limit=${PRODUCT_LIMIT_MAX}&include_details=true&offset=0`,
        (j: any) => j.reduce((n: number, p: any) => n + p.variants.length, 0),
      ],
      [
        "/v1/products?search=budget&limit=1",
        `/v1/products?search=budget&limit=${PRODUCT_LIMIT_MAX}`,
        (j: any) => j.length,
      ],
      ["/v1/orders?limit=1", `/v1/orders?limit=${ORDER_LIMIT_MAX}`, (j: any) => j.length],
      [
        "/v1/orders?limit=1&include_details=true&order_by=price",
        `/v1/orders?limit=${ORDER_LIMIT_MAX}&include_details=true&order_by=price`,
        (j: any) => j.reduce((n: number, o: any) => n + o.products.length, 0),
      ],
    ] as const) {
      const a = await cost(small);
      const b = await cost(large);
      expect(a.counts.calls, small).toBe(1);
      expect(b.counts.calls, large).toBe(1);
      expect(b.counts.statementsPerCall, large).toEqual(a.counts.statementsPerCall);
      expect(rows(b.r.json), large).toBeGreaterThan(rows(a.r.json) * 100);
      expect(b.r.headers.get("link"), large).toMatch(/rel="next"$/);
    }
    const lookup = await cost("/v1/orders?order_id=1001");
    expect(lookup.counts.statementsPerCall).toEqual([2]);
    const count = await cost("/v1/products/count");
    expect(count.counts.statementsPerCall).toEqual([1]);
    expect(count.r.json.count).toBe(String(PRODUCT_LIMIT_MAX + 5));
  });
});
