import { Hono } from "hono";
import type { AppEnv } from "../../src/env";

// D1 baselines (bench/README.md, "Method"): the simplest correct hand-written batch for each of
// the largest product cases, so that the table can say how the store's D1 time compares with the
// plain SQL ("D1 ratio"). Each trusts its input: JSON.parse and a shape check, no validation, no
// error wording, no events. What they answer is the same product JSON (`json_object` in one
// statement), so the ratio is the store's SQL against SQL that does only the write and the read.

const plain = new Hono<AppEnv>();

/** A variant as the store's own dialect answers it, plainly built by json_object. */
const VARIANT = `json_object('variant_id', v.id, 'sku', v.sku,
  'variant_option1_name', p.option_names->>0, 'variant_option1_value', v.option1_value,
  'variant_option2_name', p.option_names->>1, 'variant_option2_value', v.option2_value,
  'variant_option3_name', p.option_names->>2, 'variant_option3_value', v.option3_value,
  'variant_option4_name', p.option_names->>3, 'variant_option4_value', v.option4_value,
  'variant_option5_name', p.option_names->>4, 'variant_option5_value', v.option5_value,
  'price', v.price / 100.0, 'before_price', v.before_price / 100.0, 'purchase_price', v.purchase_price / 100.0,
  'qty', v.qty, 'qty_location', v.qty_location, 'gtin', v.gtin, 'supplier_sku', v.supplier_sku,
  'weight', v.weight, 'visible', v.visible, 'images', json(v.images))`;

const PRODUCT = `json_object('product_id', p.id, 'sku', p.sku, 'title', p.title, 'price', p.price / 100.0,
  'before_price', p.before_price / 100.0, 'purchase_price', p.purchase_price / 100.0, 'tax_rate', p.tax_rate,
  'stock', p.stock, 'qty_location', p.qty_location, 'disable_minusqty', p.disable_minusqty, 'visible', p.visible,
  'description', p.description, 'gtin', p.gtin, 'supplier_name', p.supplier_name, 'supplier_sku', p.supplier_sku,
  'datafield_1', p.datafield_1, 'datafield_2', p.datafield_2, 'datafield_3', p.datafield_3,
  'seo_description', p.seo_description, 'seo_title', p.seo_title, 'weight', p.weight, 'images', json(p.images),
  'categories', json(p.categories), 'slug', p.slug, 'metadata', json(p.metadata),
  'variants', (SELECT json_group_array(${VARIANT}) FROM (SELECT * FROM variants WHERE product_id = p.id
    ORDER BY position, id) AS v),
  'created_at', p.created_at, 'updated_at', p.updated_at)`;

const VALUES = [1, 2, 3, 4, 5].map((n) => `coalesce(j.value->>'variant_option${n}_value', '')`).join(", ");

/** The sum of the batch's SQL time as D1 reports it, in the headers the bench reads. */
function answer(results: D1Result[], text: string) {
  const ms = results.reduce((n, r) => n + (r.meta?.duration ?? 0), 0);
  return new Response(text, {
    headers: {
      "content-type": "application/json",
      "x-bench-d1": `1/${results.length}`,
      "x-bench-d1-ms": String(ms),
    },
  });
}

type Entry = Record<string, unknown>;

/** A sync: delete the unmatched, upsert every entry by its option values, read the product back. */
plain.put("/sync", async (c) => {
  const body = (await c.req.json()) as { product_id: number; variants: { sync: Entry[] } };
  const list = body.variants?.sync;
  if (!Array.isArray(list)) return c.json({ error: "variants.sync: must be a list" }, 400);
  const db = c.var.db.$client;
  const now = Date.now();
  const json = JSON.stringify(list);
  const results = await db.batch([
    db
      .prepare(
        `DELETE FROM variants WHERE product_id = ?1 AND (option1_value, option2_value, option3_value,
           option4_value, option5_value) NOT IN (SELECT ${VALUES} FROM json_each(?2) AS j)`,
      )
      .bind(body.product_id, json),
    db
      .prepare(
        `INSERT INTO variants (product_id, sku, option1_value, option2_value, option3_value, option4_value,
           option5_value, price, qty, position, created_at, updated_at)
         SELECT ?1, j.value->>'sku', ${VALUES}, round(j.value->>'price' * 100), coalesce(j.value->>'qty', 0), j.key, ?3, ?3
         FROM json_each(?2) AS j WHERE true
         ON CONFLICT (product_id, option1_value, option2_value, option3_value, option4_value, option5_value)
         DO UPDATE SET sku = excluded.sku, price = excluded.price, qty = excluded.qty, position = excluded.position,
           updated_at = excluded.updated_at`,
      )
      .bind(body.product_id, json, now),
    db.prepare("UPDATE products SET updated_at = ?2 WHERE id = ?1").bind(body.product_id, now),
    db.prepare(`SELECT ${PRODUCT} AS json FROM products AS p WHERE p.id = ?1`).bind(body.product_id),
  ]);
  const row = results[3].results[0] as { json: string };
  return answer(results, `{"success":1,"errors":[],"notices":[],"products":[${row.json}]}`);
});

/** A create: the product row, its variants from json_each, the product read back. */
plain.post("/create", async (c) => {
  const body = (await c.req.json()) as { title: string; price: number; variants: { add: Entry[] } };
  const list = body.variants?.add;
  if (!Array.isArray(list) || !list.length) return c.json({ error: "variants.add: must be a list" }, 400);
  const db = c.var.db.$client;
  const now = Date.now();
  const token = crypto.randomUUID();
  const names = [1, 2, 3, 4, 5].flatMap((n) => {
    const name = list[0][`variant_option${n}_name`];
    return typeof name === "string" ? [name] : [];
  });
  const results = await db.batch([
    db
      .prepare(
        `INSERT INTO products (token, title, price, option_names, slug, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?1, ?5, ?5)`,
      )
      .bind(token, body.title, Math.round(body.price * 100), JSON.stringify(names), now),
    db
      .prepare(
        `INSERT INTO variants (product_id, sku, option1_value, option2_value, option3_value, option4_value,
           option5_value, price, qty, position, created_at, updated_at)
         SELECT p.id, j.value->>'sku', ${VALUES}, round(j.value->>'price' * 100), coalesce(j.value->>'qty', 0), j.key, ?3, ?3
         FROM products AS p, json_each(?2) AS j WHERE p.token = ?1`,
      )
      .bind(token, JSON.stringify(list), now),
    db.prepare(`SELECT ${PRODUCT} AS json FROM products AS p WHERE p.token = ?1`).bind(token),
  ]);
  const row = results[2].results[0] as { json: string };
  return answer(results, `{"success":1,"errors":[],"notices":[],"products":[${row.json}]}`);
});

/** A product read by id, as GET /v1/products/{id} answers it: the one json_object statement. */
plain.get("/product/:id", async (c) => {
  const db = c.var.db.$client;
  const results = await db.batch([
    db.prepare(`SELECT ${PRODUCT} AS json FROM products AS p WHERE p.id = ?1`).bind(Number(c.req.param("id"))),
  ]);
  const row = results[0].results[0] as { json: string } | undefined;
  if (!row) return c.json({ error: "not found" }, 404);
  return answer(results, row.json);
});

// A modelled variant's option values, [{name, val}] for each of the product's options, without a
// json_each per variant.
const MODELLED_VALUES = `json('[' || concat_ws(',', ${[1, 2, 3, 4, 5]
  .map(
    (n) =>
      `iif(p.option_names->>${n - 1} IS NULL, NULL, json_object('name', p.option_names->>${n - 1}, 'val', v.option${n}_value))`,
  )
  .join(", ")}) || ']')`;

const MODELLED_VARIANT = `json_object('id', CAST(v.id AS TEXT), 'product_id', CAST(v.product_id AS TEXT),
  'sku', coalesce(v.sku, ''), 'price', printf('%.2f', v.price / 100.0),
  'before_price', coalesce(printf('%.2f', v.before_price / 100.0), ''),
  'purchase_price', coalesce(printf('%.2f', v.purchase_price / 100.0), ''), 'qty', CAST(v.qty AS TEXT),
  'weight', coalesce(CAST(v.weight AS TEXT), '0'), 'gtin', coalesce(v.gtin, ''),
  'supplier_sku', coalesce(v.supplier_sku, ''), 'qty_location', coalesce(v.qty_location, ''), 'image_id', '',
  'images', json('{}'), 'hidden', iif(v.visible = 1, '0', '1'), 'preorder', '0', 'preselected', '0',
  'min_purchase_quantity', '', 'max_purchase_quantity', '',
  'disable_minusqty', json(iif(v.no_minus = 1, 'true', 'false')), 'values', ${MODELLED_VALUES})`;

/** A page of products with details in the modelled dialect: one json_object text per product. */
plain.get("/products", async (c) => {
  const limit = Number(c.req.query("limit") ?? 100);
  const offset = Number(c.req.query("offset") ?? 0);
  const db = c.var.db.$client;
  const results = await db.batch([
    db
      .prepare(
        `SELECT json_object('id', CAST(p.id AS TEXT), 'sku', coalesce(p.sku, ''), 'title', p.title,
           'visible', CAST(p.visible AS TEXT), 'stock', coalesce((SELECT sum(qty) FROM variants WHERE product_id = p.id), p.stock), 'price', printf('%.2f', p.price / 100.0),
           'tax_rate', CAST(p.tax_rate AS TEXT), 'description', coalesce(p.description, ''),
           'seo_title', coalesce(p.seo_title, ''), 'date_modified', strftime('%Y-%m-%d %H:%M:%S', p.updated_at / 1000, 'unixepoch'),
           'variants', (SELECT json_group_array(${MODELLED_VARIANT}) FROM (SELECT * FROM variants
             WHERE product_id = p.id ORDER BY position, id) AS v)) AS json
         FROM products AS p ORDER BY p.id LIMIT ?1 OFFSET ?2`,
      )
      .bind(limit, offset),
  ]);
  const rows = results[0].results as { json: string }[];
  return answer(results, `[${rows.map((r) => r.json).join(",")}]`);
});

export { plain };
