import { Hono } from "hono";
import type { AppEnv } from "../../src/env";

// The bench's seeding routes (bench/worker/index.ts mounts them under /__bench/): the data the
// largest page cases read, written in SQL straight to D1.

export const seed = new Hono<AppEnv>();

/**
 * Seeds, in SQL, what the largest modelled pages read (docs/modelled-reads.md): `big` products
 * of 2,048 variants over five options (8 x 4 x 4 x 4 x 4), `small` products of 3 variants, and
 * `orders` orders of 4 lines dated in 2096 (so `from_status_date=4000000000` picks exactly them).
 * Straight to D1: the case measures the reads, and the API's own variant limit is another matter.
 */
seed.post("/seed-pages", async (c) => {
  const q = (k: string) => Number(c.req.query(k) ?? 0);
  const seq = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => i));
  const db = c.env.DB;
  const [big] = await db.batch<{ id: number }>([
    db
      .prepare(
        `INSERT INTO products (title, sku, price, option_names, description, created_at, updated_at)
         SELECT 'Page big ' || value, 'PB' || value, 19900, '["Size","Colour","Fit","Cut","Sleeve"]',
           'Five options, every combination.', 0, 0 FROM json_each(?1) RETURNING id`,
      )
      .bind(seq(q("big"))),
  ]);
  const ids = JSON.stringify(big.results.map((r) => r.id));
  await db.batch([
    db
      .prepare(
        `INSERT INTO variants (product_id, sku, option1_value, option2_value, option3_value, option4_value,
           option5_value, price, qty, position, created_at, updated_at)
         SELECT p.value, 'PB' || p.value || '-' || j.value, 'S' || (j.value % 8), 'C' || (j.value / 8 % 4),
           'F' || (j.value / 32 % 4), 'K' || (j.value / 128 % 4), 'L' || (j.value / 512), 19900 + j.value,
           j.value % 7, j.value, 0, 0
         FROM json_each(?1) AS p, json_each(?2) AS j`,
      )
      .bind(ids, seq(2048)),
    db
      .prepare(
        `INSERT INTO products (title, sku, price, option_names, created_at, updated_at)
         SELECT 'Page small ' || value, 'PS' || value, 4900, '["Size"]', 0, 0 FROM json_each(?1)`,
      )
      .bind(seq(q("small"))),
    db.prepare(
      `INSERT INTO variants (product_id, sku, option1_value, price, qty, position, created_at, updated_at)
       SELECT p.id, p.sku || '-' || j.value, 'S' || j.value, 4900, 5, j.value, 0, 0
       FROM products AS p, json_each('[0,1,2]') AS j WHERE p.title LIKE 'Page small %'`,
    ),
    db
      .prepare(
        `INSERT INTO orders (token, status, currency, subtotal, total, tax, email, billing_details,
           created_at, updated_at)
         SELECT 'page-' || value, 'paid', 'SEK', 40000, 44900, '[{"rate":25,"amount":8980}]',
           'page' || value || '@example.com', '{"firstname":"Page","lastname":"Reader","country":"SE"}',
           4000000000000 + value, 4000000000000 + value FROM json_each(?1)`,
      )
      .bind(seq(q("orders"))),
    db.prepare(
      `INSERT INTO order_lines (order_id, position, product_id, sku, title, options, qty, unit_price, tax_rate)
       SELECT o.id, j.value, 1, 'OP1-S', 'Order product 1', '[{"name":"Size","value":"S"}]', 1, 10000, 25
       FROM orders AS o, json_each('[0,1,2,3]') AS j WHERE o.token LIKE 'page-%'`,
    ),
  ]);
  return c.json({ big: big.results.map((r) => r.id) });
});

// Orders of many lines as a shop's orders read (bench/lib/seed.mjs, seedLargeOrders): ?counts is a
// JSON array of each order's line count, paid (and created) a second apart from ?paid (ms), so a
// date_paid window picks out exactly them.
seed.post("/seed-orders-large", async (c) => {
  const counts = c.req.query("counts") ?? "[]";
  const paid = Number(c.req.query("paid"));
  const tag = `large-${paid}`;
  const seq = JSON.stringify(Array.from({ length: Math.max(0, ...(JSON.parse(counts) as number[])) }, (_, i) => i));
  const db = c.env.DB;
  await db.batch([
    db
      .prepare(
        `INSERT INTO orders (token, status, currency, subtotal, total, shipping_price, shipping_name, tax, email,
           phone, customer_type, billing_details, shipping_details, payment_method, transaction_id, date_paid,
           status_date, created_at, updated_at)
         SELECT ?2 || '-' || key, 'paid', 'SEK', 0, 0, 4900, 'PostNord MyPack Home', '[]',
           'kund' || key || '@example.se', '070-765 43 ' || (10 + key % 90), 'consumer',
           json_object('firstname', 'Karin', 'lastname', 'Lindqvist ' || key, 'address', 'Storgatan ' || (1 + key % 80),
             'zipcode', '903 26', 'city', 'Umeå', 'country', 'SE'),
           json_object('firstname', 'Karin', 'lastname', 'Lindqvist ' || key, 'address', 'Kungsgatan 12',
             'zipcode', '111 43', 'city', 'Stockholm', 'country', 'SE'),
           'Klarna Checkout', 'kco_' || hex(randomblob(8)),
           ?3 + key * 1000, ?3 + key * 1000, ?3 + key * 1000, ?3 + key * 1000 FROM json_each(?1)`,
      )
      .bind(counts, tag, paid),
    db
      .prepare(
        `INSERT INTO order_lines (order_id, position, product_id, variant_id, sku, title, options, qty, unit_price, tax_rate)
         SELECT o.id, j.value, 100 + j.value % 40, 1000 + j.value,
           'TSH-ORG-' || char(65 + j.value % 26) || '-' || (j.value % 7) || '-' || j.value,
           'Organic cotton T-shirt, relaxed fit ' || (j.value % 40),
           json_array(json_object('name', 'Size', 'value', json_extract('["XS","S","M","L","XL","XXL"]', '$[' || (j.value % 6) || ']')),
             json_object('name', 'Colour', 'value', 'Forest green ' || (j.value % 12))),
           1 + j.value % 3, 24900 + (j.value % 5) * 1000, 25
         FROM json_each(?1) AS n JOIN orders AS o ON o.token = ?2 || '-' || n.key
         JOIN json_each(?3) AS j ON j.value < n.value`,
      )
      .bind(counts, tag, seq),
    db
      .prepare(
        `UPDATE orders SET subtotal = (SELECT sum(qty * unit_price) FROM order_lines WHERE order_id = orders.id),
           total = 4900 + (SELECT sum(qty * unit_price) FROM order_lines WHERE order_id = orders.id)
         WHERE token LIKE ?1 || '-%'`,
      )
      .bind(tag),
  ]);
  return c.json({ ok: true });
});

/**
 * The stock tools' catalogues (bench/lib/seed.mjs, seedStock), in SQL: `products` products of
 * `variants` variants each, SKU `<prefix><p>-<k>`, every count `qty`. The SKU registry, the version
 * rows and the catalogue's version follow by the schema's own triggers, as for any insert.
 */
seed.post("/seed-stock", async (c) => {
  const q = (k: string) => Number(c.req.query(k) ?? 0);
  const prefix = c.req.query("prefix") ?? "PU";
  const seq = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => i));
  const db = c.env.DB;
  await db.batch([
    db
      .prepare(
        `INSERT INTO products (title, sku, price, option_names, created_at, updated_at)
         SELECT 'Stock ' || ?2 || value, ?2 || value, 9900, '["Size"]', 0, 0 FROM json_each(?1)`,
      )
      .bind(seq(q("products")), prefix),
    db
      .prepare(
        `INSERT INTO variants (product_id, sku, option1_value, price, qty, position, created_at, updated_at)
         SELECT p.id, p.sku || '-' || j.value, 'v' || j.value, 9900, ?3, j.value, 0, 0
         FROM products AS p, json_each(?2) AS j WHERE p.title GLOB 'Stock ' || ?1 || '[0-9]*' ORDER BY p.id, j.value`,
      )
      .bind(prefix, seq(q("variants")), q("qty")),
  ]);
  return c.json({ ok: true });
});

/**
 * The schema as D1 has it, for the least a write must write (bench/lib/least.mjs): each table's
 * indexes with their columns (the automatic ones of UNIQUE and of a primary key that is not the
 * rowid included), and whether its inserts also write sqlite_sequence (AUTOINCREMENT).
 */
seed.get("/schema", async (c) => {
  const db = c.env.DB;
  const tables = await db
    .prepare(
      "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'd1_%'",
    )
    .all<{ name: string; sql: string }>();
  const out: Record<string, { autoincrement: boolean; indexes: { name: string; columns: string[] }[] }> = {};
  for (const t of tables.results) {
    const list = await db.prepare("SELECT name FROM pragma_index_list(?1)").bind(t.name).all<{ name: string }>();
    const indexes = [];
    for (const i of list.results) {
      const cols = await db.prepare("SELECT name FROM pragma_index_info(?1)").bind(i.name).all<{ name: string }>();
      indexes.push({ name: i.name, columns: cols.results.map((r) => r.name) });
    }
    out[t.name] = { autoincrement: /AUTOINCREMENT/i.test(t.sql), indexes };
  }
  return c.json(out);
});
