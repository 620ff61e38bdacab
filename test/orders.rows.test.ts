import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { wrapD1 } from "./d1-wrap";
import { get, post, put, uid } from "./helpers";

// Rows a request reads and writes (docs/design.md, "Orders, one path per write"), from each D1
// result's meta as D1 bills them, for the shop of the bench's everyday cases: products of three
// sizes, a returning customer ordering three lines, a payment, a cancel with restock, the pages.
// "Least" is what a correct write cannot avoid: each row it changes and the index entries of the
// columns it sets. Bookkeeping (history, idempotency, outbox) may add 3; each product whose stock
// moves adds its version row, and the catalogue's row one.

/** Rows the per-row version triggers add for each variant row written, while they exist. */
async function triggerRows() {
  const r = await env.DB.prepare(
    `SELECT count(*) AS n FROM sqlite_master WHERE type = 'trigger'
       AND name IN ('catalog_variants_update', 'product_version_variant_update')`,
  ).first<{ n: number }>();
  return r?.n ?? 0;
}

async function garments(n: number) {
  const skus: string[][] = [];
  for (let p = 0; p < n; p++) {
    const base = uid("ROW");
    const sizes = ["S", "M", "L"];
    skus.push(sizes.map((s) => `${base}-${s}`));
    const r = await post("/v1/products", {
      title: `Order product ${p}`,
      sku: base,
      price: 199,
      variants: {
        add: sizes.map((s) => ({
          sku: `${base}-${s}`,
          variant_option1_name: "Size",
          variant_option1_value: s,
          qty: 1000,
        })),
      },
    });
    expect(r.status, r.text).toBe(200);
  }
  return skus;
}

const orderOf = (skus: string[][], email: string) => [
  {
    order_id: "create",
    products: [
      { sku: skus[0][0], qty: 1 },
      { sku: skus[1][1], qty: 2 },
      { sku: skus[2][2], qty: 1 },
    ],
    customer: {
      email,
      type: "consumer",
      billing_details: { firstname: "Bench", lastname: "Mark", city: "Stockholm", country: "SE" },
    },
    payment: { method: "invoice", currency: "SEK" },
    shipping: { id: 1, name: "Postnord", price: 49 },
  },
];

/** The rows of one request, with the statements that read or wrote most, for a failing test's message. */
async function rowsOf(send: (db: D1Database) => Promise<{ status: number; text: string }>) {
  const w = wrapD1();
  const r = await send(w.db);
  expect(r.status, r.text).toBe(200);
  const top = [...w.counts.rows]
    .sort((a, b) => b.read + b.written - a.read - a.written)
    .slice(0, 4)
    .map((s) => `${s.read}/${s.written} ${s.sql.replace(/\s+/g, " ").slice(0, 90)}`)
    .join("\n");
  return { read: w.counts.rowsRead, written: w.counts.rowsWritten, top, calls: w.counts.calls };
}

describe("rows of an order's life", () => {
  it("a returning customer's order of 3 lines, its payment and a cancel with restock", async () => {
    const per = await triggerRows();
    const skus = await garments(3);
    const email = `${uid("rows")}@example.com`;
    expect((await post("/v1/orders", orderOf(skus, email))).status).toBe(200);

    const create = await rowsOf((DB) => post("/v1/orders", orderOf(skus, email), { env: { DB } }));
    // Least 17: the order (8: its row and 7 index entries), 3 lines (6: row and key each), 3
    // variants (3); the unchanged customer writes nothing. Then the orders' sqlite_sequence row
    // and the versions of 3 products and the catalogue.
    expect(create.written, create.top).toBeLessThanOrEqual(17 + 1 + 4 + 3 * per);
    expect(create.read, create.top).toBeLessThanOrEqual(110 + 3 * per);

    const id = (await post("/v1/orders", orderOf(skus, email))).json.results.create_1.order_id;
    const paid = await rowsOf((DB) => put("/v1/orders", [{ order_id: id, status: "paid" }], { env: { DB } }));
    // Least 6: the order's row and its index entries on status (3), date_paid and status_date;
    // then its history row (2).
    expect(paid.written, paid.top).toBeLessThanOrEqual(6 + 2);
    // 3: the order read for the answer, its UPDATE and its history row's new rowid (the plain
    // batch, without history, reads 2); events read none on a store without webhooks.
    expect(paid.read, paid.top).toBeLessThanOrEqual(3);
    expect(paid.calls).toBe(1);

    const other = (await post("/v1/orders", orderOf(skus, email))).json.results.create_1.order_id;
    const cancel = await rowsOf((DB) => put("/v1/orders", [{ order_id: other, status: "cancelled" }], { env: { DB } }));
    // Least 8: the order's row, status (3) and status_date entries, 3 variants; history 2; the
    // versions of 3 products and the catalogue.
    expect(cancel.written, cancel.top).toBeLessThanOrEqual(8 + 2 + 4 + 3 * per);
    // 29: the order (1), its 3 lines with whether each variant is gone (6), the version guard (1),
    // 3 variants (12: UPDATE ... FROM json_each reads each list row and variant twice) and 3
    // product versions (6), the catalogue (1), the order's UPDATE (1) and its history row (1).
    expect(cancel.read, cancel.top).toBeLessThanOrEqual(29 + 3 * per);

    // A second cancel changes nothing and writes nothing: its read (7), guard and UPDATE (1 each).
    const again = await rowsOf((DB) => put("/v1/orders", [{ order_id: other, status: "cancelled" }], { env: { DB } }));
    expect(again.written, again.top).toBe(0);
    expect(again.read, again.top).toBeLessThanOrEqual(9);
  });
});

/** Orders of `counts[i]` lines each, written straight to D1 (as the bench seeds its pages). */
async function seedOrders(counts: number[]) {
  const tag = uid("page");
  const seq = JSON.stringify(Array.from({ length: Math.max(...counts) }, (_, i) => i));
  await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO orders (token, status, currency, subtotal, total, shipping_price, tax, email, billing_details,
         date_paid, status_date, created_at, updated_at)
       SELECT ?2 || '-' || key, 'paid', 'SEK', 0, 0, 4900, '[]', 'kund' || key || '@example.se',
         json_object('firstname', 'Karin', 'lastname', 'Lindqvist', 'city', 'Umeå', 'country', 'SE'),
         1000 + key, 1000 + key, 1000 + key, 1000 + key FROM json_each(?1)`,
    ).bind(JSON.stringify(counts), tag),
    env.DB.prepare(
      `INSERT INTO order_lines (order_id, position, product_id, variant_id, sku, title, options, qty, unit_price, tax_rate)
       SELECT o.id, j.value + 1, 100, 1000 + j.value, 'TSH-' || j.value, 'Organic cotton T-shirt',
         json_array(json_object('name', 'Size', 'value', 'M'), json_object('name', 'Colour', 'value', 'Green')),
         1, 24900, 25
       FROM json_each(?1) AS n JOIN orders AS o ON o.token = ?2 || '-' || n.key
       JOIN json_each(?3) AS j ON j.value < n.value`,
    ).bind(JSON.stringify(counts), tag, seq),
  ]);
}

describe("rows of the orders' reads", () => {
  it("reads about 2 rows a line for a page of 46 orders and 12,044 lines, and one order's lines once", async () => {
    const counts = Array.from({ length: 46 }, (_, i) => (i % 2 === 0 || i === 45 ? 500 : 2));
    await seedOrders(counts);
    const lines = counts.reduce((a, b) => a + b, 0);
    const w = wrapD1();
    const page = await get("/v1/orders?limit=100&from_date_paid=1&to_date_paid=1", { env: { DB: w.db } });
    expect(page.status).toBe(200);
    expect(page.json).toHaveLength(46);
    expect(lines).toBe(12_044);
    // Each line once for the page's size estimate (where its chunks end) and once for its JSON.
    expect(w.counts.rowsRead).toBeLessThanOrEqual(25_000);

    const id = page.json[0].order_id;
    const one = wrapD1();
    expect((await get(`/v1/orders/${id}`, { env: { DB: one.db } })).status).toBe(200);
    // The order, its 500 lines, its key and its history.
    expect(one.counts.rowsRead).toBeLessThanOrEqual(500 + 5);
  });
});
