import { subscribed } from "../../src/webhooks/outbox";

// The hand-written batches the bench's baselines run (bench/worker/index.ts) and the bare Worker
// runs (bench/bare/index.ts): one source, so both do the same D1 work.

type Line = { sku: string; qty: number };
export type Order = { products: Line[]; customer?: { email?: string }; shipping?: { price?: number } };

/**
 * Baseline 2, the "physical limit" of an order: the statements an order create needs (customer
 * upsert, order row, its lines from the catalog, stock decrement, its order.created outbox row),
 * hand-written, in ONE D1
 * batch, with prices and totals taken from the catalog by SQL instead of a read before the
 * write. No validation beyond JSON.parse; it trusts its input. Lines travel as one JSON
 * parameter expanded with json_each, as docs/security.md, "Guarantees" asks of the real thing.
 */
export async function orderBatch(db: D1Database | D1DatabaseSession, orders: Order[]) {
  const now = Date.now();
  const stmts: D1PreparedStatement[] = [];
  const tokens: string[] = [];
  for (const o of orders) {
    const token = crypto.randomUUID();
    tokens.push(token);
    const lines = JSON.stringify(o.products);
    const email = o.customer?.email ?? null;
    const shipping = Math.round((o.shipping?.price ?? 0) * 100);
    if (email) {
      stmts.push(
        db
          .prepare(
            `INSERT INTO customers (email, email_key, created_at, updated_at) VALUES (?1, lower(?1), ?2, ?2)
             ON CONFLICT(email_key) DO UPDATE SET email = excluded.email, updated_at = excluded.updated_at`,
          )
          .bind(email, now),
      );
    }
    stmts.push(
      db
        .prepare(
          `INSERT INTO orders (token, status, customer_id, email, currency, shipping_price, subtotal, discount, total, tax, created_at, updated_at)
           SELECT ?1, 'unpaid', (SELECT id FROM customers WHERE email_key = lower(?2)), ?2, 'SEK', ?3, s.subtotal, 0, s.subtotal + ?3, '[]', ?4, ?4
           FROM (SELECT SUM(COALESCE(v.price, p.price) * json_extract(j.value, '$.qty')) AS subtotal
                 FROM json_each(?5) j JOIN skus k ON k.sku = json_extract(j.value, '$.sku')
                 JOIN products p ON p.id = k.product_id LEFT JOIN variants v ON v.id = k.variant_id) s`,
        )
        .bind(token, email, shipping, now, lines),
      db
        .prepare(
          `INSERT INTO order_lines (order_id, position, product_id, variant_id, sku, title, options, qty, unit_price, tax_rate)
           SELECT (SELECT id FROM orders WHERE token = ?1), j.key, k.product_id, k.variant_id, k.sku, p.title,
                  json_array(v.option1_value), json_extract(j.value, '$.qty'), COALESCE(v.price, p.price), p.tax_rate
           FROM json_each(?2) j JOIN skus k ON k.sku = json_extract(j.value, '$.sku')
           JOIN products p ON p.id = k.product_id LEFT JOIN variants v ON v.id = k.variant_id`,
        )
        .bind(token, lines),
      db
        .prepare(
          `UPDATE variants SET updated_at = ?2, qty = qty - (
             SELECT SUM(json_extract(j.value, '$.qty')) FROM json_each(?1) j JOIN skus k ON k.sku = json_extract(j.value, '$.sku')
             WHERE k.variant_id = variants.id)
           WHERE id IN (SELECT k.variant_id FROM json_each(?1) j JOIN skus k ON k.sku = json_extract(j.value, '$.sku'))`,
        )
        .bind(lines, now),
    );
  }
  // Each order's order.created outbox row (docs/webhooks.md, "Webhooks"), written as the real create writes
  // it: only while an endpoint subscribes (none does in the bench).
  stmts.push(
    db
      .prepare(
        `INSERT INTO events (id, type, order_id, created_at)
         SELECT lower(hex(randomblob(16))), 'order.created', id, ?2 FROM orders
         WHERE token IN (SELECT value FROM json_each(?1)) AND ${subscribed("'order.created'")}`,
      )
      .bind(JSON.stringify(tokens), now),
  );
  // The created orders, read back in the same batch (no extra round trip), for the response.
  stmts.push(
    db
      .prepare(
        "SELECT id, token, subtotal, shipping_price, total FROM orders WHERE token IN (SELECT value FROM json_each(?))",
      )
      .bind(JSON.stringify(tokens)),
  );
  const results = await db.batch<{
    id: number;
    token: string;
    subtotal: number;
    shipping_price: number;
    total: number;
  }>(stmts);
  const rows = new Map(results[results.length - 1].results.map((r) => [r.token, r]));
  const out: Record<string, unknown> = {};
  tokens.forEach((t, i) => {
    const r = rows.get(t);
    out[`create_${i + 1}`] = r
      ? {
          success: true,
          order_id: r.id,
          status: "unpaid",
          currency: "SEK",
          subtotal: r.subtotal / 100,
          total: r.total / 100,
        }
      : { success: false, errors: ["not created"] };
  });
  return { results: out };
}

/**
 * A stock update by SKU, hand-written: the count of the SKU's variant, its product's updated_at
 * (every product write moves it), the variant read back, in ONE batch (the version rows follow by
 * the schema's triggers, as for the store's statements). No validation.
 */
export async function stockBatch(db: D1Database | D1DatabaseSession, item: { sku: string; stock: number }) {
  const now = Date.now();
  const [, , read] = await db.batch<{ variant_id: number; product_id: number; sku: string; qty: number }>([
    db
      .prepare("UPDATE variants SET qty = ?2, updated_at = ?3 WHERE id = (SELECT variant_id FROM skus WHERE sku = ?1)")
      .bind(item.sku, item.stock, now),
    db
      .prepare("UPDATE products SET updated_at = ?2 WHERE id = (SELECT product_id FROM skus WHERE sku = ?1)")
      .bind(item.sku, now),
    db
      .prepare(
        "SELECT v.id AS variant_id, v.product_id, v.sku, v.qty FROM variants AS v JOIN skus AS k ON k.variant_id = v.id WHERE k.sku = ?1",
      )
      .bind(item.sku),
  ]);
  return { success: 1, errors: [], notices: [], products: read.results };
}
