import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { wrapD1 } from "./d1-wrap";
import { put } from "./helpers";
import { change, order, readOrder, stocked, stockOf, variantQty, variantStocked } from "./orders-put-helpers";

// PUT /v1/orders line edits on unpaid orders (docs/orders.md, "Orders"): products replace, products_add,
// products_remove, discounts; stock moves by the difference; totals and tax recomputed.

const lineCount = async (id: number) =>
  (await env.DB.prepare("SELECT count(*) AS n FROM order_lines WHERE order_id = ?1").bind(id).first<{ n: number }>())
    ?.n;

describe("PUT /v1/orders line edits", () => {
  it("adds lines with products_add, taking stock and recomputing totals and tax", async () => {
    const a = await stocked(10);
    const b = await stocked(10);
    const id = await order([{ sku: a.sku, qty: 2 }]);
    const r = await change([{ order_id: id, products_add: [{ sku: b.sku, qty: 3 }, { sku: a.sku }] }]);
    expect(r.status).toBe(200);
    expect(r.json.results.update_1).toMatchObject({ success: true, subtotal: 600, total: 600 });
    expect(r.json.results.update_1.tax).toEqual([{ rate: 25, amount: 120 }]);
    expect(await stockOf(a.id)).toBe(7);
    expect(await stockOf(b.id)).toBe(7);
    const o = await readOrder(id);
    // products_add of the same item at the same price merges into the existing line.
    expect(o.products.map((l: any) => [l.sku, l.qty])).toEqual([
      [a.sku, 3],
      [b.sku, 3],
    ]);
    expect(o.total).toBe(600);
  });

  it("replaces every line with products, moving stock by the difference", async () => {
    const a = await stocked(10);
    const b = await stocked(10);
    const id = await order([
      { sku: a.sku, qty: 4 },
      { sku: b.sku, qty: 1 },
    ]);
    const r = await change([{ order_id: id, products: [{ sku: a.sku, qty: 1, price: 50 }] }]);
    expect(r.json.results.update_1).toMatchObject({ success: true, subtotal: 50, total: 50 });
    expect(await stockOf(a.id)).toBe(9);
    expect(await stockOf(b.id)).toBe(10);
    expect((await readOrder(id)).products).toHaveLength(1);
  });

  it("removes lines with products_remove and gives their stock back; an unmatched entry is a notice", async () => {
    const a = await stocked(10);
    const b = await stocked(10);
    const id = await order([
      { sku: a.sku, qty: 2 },
      { sku: b.sku, qty: 5 },
    ]);
    const r = await change([{ order_id: id, products_remove: [{ sku: b.sku }, { sku: "NOPE" }] }]);
    expect(r.json.results.update_1).toMatchObject({
      success: true,
      subtotal: 200,
      notices: ["products_remove[1]: no line of the order matches; nothing removed"],
    });
    expect(await stockOf(b.id)).toBe(10);
    expect(await stockOf(a.id)).toBe(8);
  });

  it("refuses to leave an order without lines, writing nothing", async () => {
    const a = await stocked(10);
    const id = await order([{ sku: a.sku, qty: 2 }]);
    const r = await change([{ order_id: id, products_remove: [{ sku: a.sku }] }]);
    expect(r.status).toBe(400);
    expect(r.json.results.update_1.errors).toEqual(["products: the order has no lines left after products_remove"]);
    expect(await stockOf(a.id)).toBe(8);
    expect(await lineCount(id)).toBe(1);
  });

  it("refuses products_add beyond stock under disable_minusqty and leaves order and stock unchanged", async () => {
    const a = await stocked(5);
    const id = await order([{ sku: a.sku, qty: 3 }]);
    const before = await readOrder(id);
    const r = await change([{ order_id: id, products_add: [{ sku: a.sku, qty: 3 }] }]);
    expect(r.status).toBe(400);
    expect(r.json.results.update_1.errors).toEqual([`products_add[0].qty: insufficient stock for ${a.sku}: 2 left`]);
    expect(await stockOf(a.id)).toBe(2);
    expect(await readOrder(id)).toEqual(before);
    // Within stock it works, down to zero.
    const ok = await change([{ order_id: id, products_add: [{ sku: a.sku, qty: 2 }] }]);
    expect(ok.json.results.update_1.success).toBe(true);
    expect(await stockOf(a.id)).toBe(0);
  });

  it("lets stock go negative when disable_minusqty is off", async () => {
    const a = await stocked(1, 0);
    const id = await order([{ sku: a.sku, qty: 1 }]);
    const r = await change([{ order_id: id, products_add: [{ sku: a.sku, qty: 2 }] }]);
    expect(r.json.results.update_1.success).toBe(true);
    expect(await stockOf(a.id)).toBe(-2);
  });

  it("edits variant lines by variant_id and returns a variant's qty when it is removed", async () => {
    const p = await variantStocked(5);
    const [s, m] = p.variants;
    const id = await order([{ sku: s.sku, qty: 2 }]);
    const r = await change([
      {
        order_id: id,
        products_add: [{ variant_id: String(m.id), qty: 1 }],
        products_remove: [{ variant_id: s.id }],
      },
    ]);
    expect(r.json.results.update_1.success).toBe(true);
    expect(await variantQty(p.id)).toEqual([5, 4]);
  });

  it("sets and removes a discount, refusing one larger than lines plus shipping", async () => {
    const a = await stocked(10);
    const id = await order([{ sku: a.sku, qty: 2 }], { shipping: { price: 49 } });
    const d = await change([{ order_id: id, discount_add: { amount: "20.50" } }]);
    expect(d.json.results.update_1).toMatchObject({ success: true, discount: 20.5, total: 228.5, shipping: 49 });
    // The discount stays when lines change.
    const kept = await change([{ order_id: id, products_add: [{ sku: a.sku }] }]);
    expect(kept.json.results.update_1).toMatchObject({ discount: 20.5, subtotal: 300, total: 328.5 });
    const big = await change([{ order_id: id, discount_add: { amount: 1000 } }]);
    expect(big.status).toBe(400);
    expect(big.json.results.update_1.errors[0]).toMatch(/^discount_add\.amount: 1000 is more than/);
    const gone = await change([{ order_id: id, discount_remove: "true" }]);
    expect(gone.json.results.update_1).toMatchObject({ discount: 0, total: 349 });
  });

  it("refuses line edits on an order that is not unpaid with 409 naming the status", async () => {
    const a = await stocked(10);
    const id = await order([{ sku: a.sku, qty: 1 }]);
    await change([{ order_id: id, status: "paid" }]);
    const r = await change([{ order_id: id, products_add: [{ sku: a.sku }] }]);
    expect(r.status).toBe(409);
    expect(r.json.results.update_1.errors).toEqual([
      `products_add: order ${id} is paid; only an unpaid order's lines and discount can change`,
    ]);
    expect(await stockOf(a.id)).toBe(9);
  });

  it("applies lines before the status: edit and pay in one element, edit and cancel returns everything", async () => {
    const a = await stocked(10);
    const b = await stocked(10);
    const id = await order([{ sku: a.sku, qty: 1 }]);
    const r = await change([{ order_id: id, products_add: [{ sku: b.sku, qty: 2 }], status: "paid" }]);
    expect(r.json.results.update_1).toMatchObject({ success: true, status: "paid", subtotal: 300 });
    expect(await stockOf(b.id)).toBe(8);

    const other = await order([{ sku: a.sku, qty: 3 }]);
    const c = await change([{ order_id: other, products_add: [{ sku: b.sku, qty: 4 }], status: "cancelled" }]);
    expect(c.json.results.update_1).toMatchObject({ success: true, status: "cancelled" });
    expect(await stockOf(a.id)).toBe(9);
    expect(await stockOf(b.id)).toBe(8);
  });

  it("keeps unchanged lines' snapshot while new lines take today's price", async () => {
    const a = await stocked(10);
    const id = await order([{ sku: a.sku, qty: 1 }]);
    const upd = await put("/v1/products", { product_id: a.id, price: 150, title: "Renamed" });
    expect(upd.status).toBe(200);
    const r = await change([{ order_id: id, products_add: [{ sku: a.sku }] }]);
    expect(r.json.results.update_1.subtotal).toBe(250);
    const o = await readOrder(id);
    expect(o.products.map((l: any) => [l.title, l.price, l.qty])).toEqual([
      ["Test product", 100, 1],
      ["Renamed", 150, 1],
    ]);
  });

  it("names the line of an unknown SKU", async () => {
    const a = await stocked(10);
    const id = await order([{ sku: a.sku, qty: 1 }]);
    const r = await change([{ order_id: id, products_add: [{ sku: "NO-SUCH-SKU" }] }]);
    expect(r.status).toBe(400);
    expect(r.json.results.update_1.errors).toEqual(["products_add[0].sku: no product or variant has SKU NO-SUCH-SKU"]);
  });
});

describe("cancel after a variant was deleted", () => {
  it("restocks the remaining lines and gives a notice for the deleted variant's line", async () => {
    const p = await variantStocked(5);
    const [s, m] = p.variants;
    const id = await order([
      { sku: s.sku, qty: 2 },
      { sku: m.sku, qty: 1 },
    ]);
    // variants.sync keeps only M: S is deleted.
    const sync = await put("/v1/products", {
      product_id: p.id,
      variants: { sync: [{ variant_id: m.id, variant_option1_name: "Size", variant_option1_value: "M" }] },
    });
    expect(sync.status).toBe(200);
    expect(await variantQty(p.id)).toEqual([4]);
    const r = await change([{ order_id: id, status: "cancelled" }]);
    expect(r.json.results.update_1.success).toBe(true);
    expect(r.json.results.update_1.notices).toEqual([
      `products[0]: the variant of ${s.sku} was deleted; no stock was returned for this line`,
    ]);
    expect(await variantQty(p.id)).toEqual([5]);
  });

  it("gives the same notice on the keyed (planned) path", async () => {
    const p = await variantStocked(5);
    const [s, m] = p.variants;
    const id = await order([
      { sku: s.sku, qty: 2 },
      { sku: m.sku, qty: 1 },
    ]);
    await put("/v1/products", {
      product_id: p.id,
      variants: { sync: [{ variant_id: m.id, variant_option1_name: "Size", variant_option1_value: "M" }] },
    });
    const r = await change([{ order_id: id, status: "cancelled" }], { headers: { "idempotency-key": `k-${id}` } });
    expect(r.json.results.update_1.notices).toEqual([
      `products[0]: the variant of ${s.sku} was deleted; no stock was returned for this line`,
    ]);
    expect(await variantQty(p.id)).toEqual([5]);
  });

  it("plans again when a line's product is deleted between the cancel's read and its write", async () => {
    const p = await variantStocked(5);
    const other = await stocked(5);
    const [s] = p.variants;
    const id = await order([
      { sku: s.sku, qty: 2 },
      { sku: other.sku, qty: 1 },
    ]);
    // Between the read (call 1) and the write: the write's version bump of the product meets its
    // foreign key, the batch fails whole and the fresh read finds the line gone.
    const w = wrapD1({
      before: async (n) => {
        if (n === 2) await env.DB.prepare("DELETE FROM products WHERE id = ?1").bind(p.id).run();
      },
    });
    const r = await change([{ order_id: id, status: "cancelled" }], { env: { DB: w.db } });
    expect(r.json.results.update_1.success).toBe(true);
    expect(r.json.results.update_1.notices).toEqual([
      `products[0]: the variant of ${s.sku} was deleted; no stock was returned for this line`,
    ]);
    expect(w.counts.calls).toBe(4);
    expect(await stockOf(other.id)).toBe(5);
    expect((await readOrder(id)).status).toBe("cancelled");
  });
});
