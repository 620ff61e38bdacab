import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, uid } from "./helpers";
import { rowsD1 } from "./rows";

// The rows POST /v1/products makes D1 write and read (docs/design.md, "Writes"). The least a
// correct create writes: each variant's row, its two index entries and its SKU's registry row and
// key (5); the product's row, its token and slug entries and its version row (4); and the
// AUTOINCREMENT counter of each table once (2). The request may add 3 rows of bookkeeping (here the
// catalogue's version). Its reads: the list's entries, their product and each variant read back.

const NAMES = ["Size", "Colour", "Material", "Fit", "Edition"];
const entry = (prefix: string, i: number) => {
  const digits = [i % 8, (i >> 3) % 8, (i >> 6) % 8, (i >> 9) % 4, i >> 11];
  const e: Record<string, unknown> = { sku: `${prefix}-${i}`, price: 100 + (i % 7), qty: i % 5 };
  NAMES.forEach((name, k) => {
    e[`variant_option${k + 1}_name`] = name;
    e[`variant_option${k + 1}_value`] = `${name[0]}${digits[k]}`;
  });
  return e;
};

/**
 * The rows written, for a create of `n` variants, by the per-row version triggers still in the
 * schema (one row each per variant and product they fire for); none once they are dropped.
 */
async function triggerRows(n: number) {
  const { results } = await env.DB.prepare(
    `SELECT tbl_name AS t FROM sqlite_master WHERE type = 'trigger' AND sql LIKE '%AFTER INSERT%'
       AND (name LIKE 'catalog_%' OR (name LIKE 'product_version_%' AND name <> 'product_version_insert'))`,
  ).all<{ t: string }>();
  return results.reduce((sum, r) => sum + (r.t === "variants" ? n : 1), 0);
}

async function create(body: Record<string, unknown>) {
  const { db, rows } = rowsD1();
  const r = await call("POST", "/v1/products", { body, env: { DB: db } });
  expect(r.status, r.text.slice(0, 200)).toBe(200);
  expect(rows.unmetered).toBe(0);
  return rows;
}

describe("rows of POST /v1/products", () => {
  it.each([0, 1, 100, 2048])(
    "a create of %i variants writes its rows and index entries, and 3 more at most",
    async (n) => {
      const prefix = uid("ROWS");
      const body = {
        title: `Rows ${prefix}`,
        price: 100,
        variants: { add: Array.from({ length: n }, (_, i) => entry(prefix, i)) },
      };
      const rows = await create(n ? body : { title: body.title, price: 100 });
      const least = 5 * n + 4 + (n ? 2 : 1);
      const triggers = await triggerRows(n);
      expect(rows.written).toBeGreaterThanOrEqual(least + triggers);
      expect(rows.written).toBeLessThanOrEqual(least + 3 + triggers);
      // The list's entries joined to their product (3 a variant), and the answer's one pass.
      expect(rows.read).toBeLessThanOrEqual(4 * n + 40 + triggers);
    },
  );

  it("a create of 20 products of 50 variants reads each entry a few times, not once per product", async () => {
    const body = Array.from({ length: 20 }, (_, k) => {
      const prefix = uid(`MANY${k}`);
      return {
        title: `Many ${prefix}`,
        price: 100,
        variants: { add: Array.from({ length: 50 }, (_, i) => entry(prefix, i)) },
      };
    });
    const rows = await create(body as unknown as Record<string, unknown>);
    // About 5 rows an entry (its product found, its insert's checks, its read-back) and 2 more for
    // each per-row trigger still in the schema; joined to the list of tokens, each entry read all
    // 20 of it (over 21,000 rows).
    expect(rows.read).toBeLessThanOrEqual(8 * 1000 + 40 * 20);
  });

  it("a slug derived from a taken title is numbered in the insert, without writing the row again", async () => {
    const title = `Twice ${uid("slug")}`;
    await create({ title, price: 100 });
    const rows = await create({ title, price: 100 });
    expect(rows.written).toBeLessThanOrEqual(5 + 3 + (await triggerRows(0)));
    const { results } = await env.DB.prepare("SELECT slug FROM products WHERE title = ?1 ORDER BY id")
      .bind(title)
      .all();
    const base = title.toLowerCase().replace(/[^a-z0-9]+/g, "-");
    expect(results.map((r) => r.slug)).toEqual([base, `${base}-2`]);
  });
});
