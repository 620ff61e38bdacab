import { env } from "cloudflare:workers";
import { getTableConfig } from "drizzle-orm/sqlite-core";
import { beforeAll, describe, expect, it } from "vitest";
import { events } from "../src/db/schema";
import { wrapD1 } from "./d1-wrap";
import { get, post, put, subscribeAll, uid } from "./helpers";

// Journeys through PUT /v1/products (docs/products.md, "Stock tools"; docs/stock.md): a stock tool
// pushing its whole catalogue again and again, writing only what changed; orders and adjustments
// racing on one product; a storefront's checkout during a stock push. Events are recorded
// (an endpoint subscribes), so the outbox rows are counted.

beforeAll(subscribeAll);

/**
 * Rows an event costs: its outbox row, an entry for each index of the outbox table, and one for
 * its text primary key (SQLite keeps it in an index of its own beside the rowid).
 */
const outbox = getTableConfig(events);
const EVENT_ROWS =
  1 + outbox.indexes.length + outbox.columns.filter((c) => c.primary && c.getSQLType() === "text").length;

const updatesOf = async (ids: number[]) =>
  (
    await env.DB.prepare(
      "SELECT product_id FROM events WHERE type = 'product.update' AND product_id IN (SELECT value FROM json_each(?1))",
    )
      .bind(JSON.stringify(ids))
      .all<{ product_id: number }>()
  ).results.map((r) => r.product_id);

describe("a stock tool pushing its catalogue", () => {
  it("500 SKUs pushed 4 times, 2% changed each time: rows written are what changed, events only for those", async () => {
    const p = `${uid("PUSH")}-`;
    const stock = Array.from({ length: 500 }, (_, i) => i % 7);
    const ids: number[] = [];
    for (let at = 0; at < 500; at += 100) {
      const made = await post(
        "/v1/products",
        stock.slice(at, at + 100).map((s, k) => ({ title: `P${at + k}`, price: 10, sku: `${p}${at + k}`, stock: s })),
      );
      expect(made.json.success).toBe(100);
      ids.push(...made.json.products.map((x: { product_id: number }) => x.product_id));
    }
    const idOf = new Map(ids.map((id, i) => [`${p}${i}`, id]));
    for (let push = 0; push < 4; push++) {
      // 10 of 500 (2%) change, a different ten each push; every figure is sent.
      const changed = Array.from({ length: 10 }, (_, k) => (push * 10 + k * 47) % 500);
      for (const i of changed) stock[i] += 1;
      const before = await updatesOf(ids);
      let rows = 0;
      let batchesWithChanges = 0;
      for (let at = 0; at < 500; at += 100) {
        const w = wrapD1();
        const items = stock.slice(at, at + 100).map((s, k) => ({ sku: `${p}${at + k}`, stock: s, price: 10 }));
        const r = await put("/v1/products", items, { env: { DB: w.db }, headers: { prefer: "return=minimal" } });
        expect([r.status, r.json.success]).toEqual([200, 100]);
        rows += w.counts.rowsWritten;
        if (changed.some((i) => i >= at && i < at + 100)) batchesWithChanges++;
      }
      // Each changed product: its row, its version, its event; each batch that changed one: the catalogue's version.
      expect(rows).toBe(changed.length * (2 + EVENT_ROWS) + batchesWithChanges);
      const after = await updatesOf(ids);
      expect(after.length - before.length).toBe(changed.length);
      const fresh = after.slice(before.length).sort();
      expect(fresh).toEqual(changed.map((i) => idOf.get(`${p}${i}`)).sort());
    }
    expect((await get(`/v1/products/${idOf.get(`${p}47`)}`)).json.stock).toBe(stock[47]);
  }, 120_000);
});

describe("racing on one product", () => {
  it("30 orders and 40 stock adjustments at once: none answers 503, the count is exact", async () => {
    const sku = uid("RACE");
    const made = await post("/v1/products", {
      title: "Raced",
      price: 10,
      variants: { add: [{ variant_option1_name: "Size", variant_option1_value: "M", sku, qty: 500 }] },
    });
    const { product_id: id, variants } = made.json.products[0];
    const variantId = variants[0].variant_id;
    const amounts = Array.from({ length: 40 }, (_, i) => (i % 4 === 0 ? -3 : 2));
    const rs = await Promise.all([
      ...amounts.map((adjust, i) =>
        put(
          "/v1/products",
          [
            [{ sku, adjust }],
            { variant_id: variantId, adjust },
            { product_id: id, variants: { update: [{ variant_id: variantId, adjust }] } },
            { sku, adjust, title: `Raced ${i}` },
          ][i % 4],
        ),
      ),
      ...Array.from({ length: 30 }, () => post("/v1/orders", [{ order_id: "create", products: [{ sku, qty: 1 }] }])),
    ]);
    expect(rs.map((r) => r.status).filter((s) => s !== 200)).toEqual([]);
    const qty = (await get(`/v1/products/${id}`)).json.variants[0].qty;
    expect(qty).toBe(500 + amounts.reduce((a, b) => a + b, 0) - 30);
  });
});

describe("a storefront's checkout during a stock push", () => {
  it("loses no update and answers no 503: the push's count, less the sales it did not see", async () => {
    const key = await post("/v1/keys", { name: uid("shop"), type: "publishable" });
    const method = await post("/v1/shipping-methods", { name: uid("Post"), price: 10 });
    const shop = { authorization: "", "x-publishable-key": key.json.key as string };
    const p = `${uid("SHOP")}-`;
    const made = await post(
      "/v1/products",
      Array.from({ length: 20 }, (_, i) => ({ title: `S${i}`, price: 10, sku: `${p}${i}`, stock: 50 })),
    );
    expect(made.json.success).toBe(20);
    const [push, ...sales] = await Promise.all([
      // The tool's figures: 40 of each, whatever sold meanwhile.
      put(
        "/v1/products",
        Array.from({ length: 20 }, (_, i) => ({ sku: `${p}${i}`, stock: 40 })),
      ),
      ...Array.from({ length: 5 }, (_, n) =>
        post(
          "/v1/orders",
          [{ order_id: "create", shipping: { id: method.json.id }, products: [{ sku: `${p}3`, qty: 2 }] }],
          { headers: { ...shop, "cf-connecting-ip": `192.0.2.${40 + n}` } },
        ),
      ),
    ]);
    expect(push.status).toBe(200);
    for (const s of sales) expect(s.status, s.text).toBe(200);
    const left = (await get(`/v1/products/${made.json.products[3].product_id}`)).json.stock;
    // Each sale lands before the push (its figure replaces it) or after (it takes its 2 from 40).
    expect(left).toBeLessThanOrEqual(40);
    expect((40 - left) % 2).toBe(0);
    const other = (await get(`/v1/products/${made.json.products[0].product_id}`)).json.stock;
    expect(other).toBe(40);
  });
});
