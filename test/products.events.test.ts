import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { wrapD1 } from "./d1-wrap";
import { call, createProduct, post, put, subscribeAll, uid } from "./helpers";

// Events are recorded only while an endpoint subscribes (docs/webhooks.md, "Webhooks").
beforeAll(subscribeAll);

// Product events (docs/webhooks.md, "Webhooks"): product.add, product.update and product.delete rows are
// written in the batch of the change, so they exist exactly when the change committed.

type Row = { type: string; product_id: number };

async function eventsOf(productIds: number[]): Promise<Row[]> {
  const r = await env.DB.prepare(
    "SELECT type, product_id FROM events WHERE product_id IN (SELECT value FROM json_each(?)) ORDER BY rowid",
  )
    .bind(JSON.stringify(productIds))
    .all<Row>();
  return r.results;
}

/** Every event row of the store, for checks that a failed request added none. */
const countAll = async () => (await env.DB.prepare("SELECT count(*) AS n FROM events").first<{ n: number }>())?.n ?? 0;

const colour = (value: string) => ({ variant_option1_name: "Colour", variant_option1_value: value });

describe("product events", () => {
  it("POST writes product.add for each created product, none for a refused one", async () => {
    const taken = await createProduct({ sku: uid("T") });
    const r = await post("/v1/products", [
      { title: "A", price: 1, sku: uid() },
      { title: "B", price: 1, sku: taken.sku },
      { title: "C", price: 1, variants: { add: [colour("x")] } },
    ]);
    expect(r.json.success).toBe(2);
    const [a, c] = r.json.products.map((p: any) => p.product_id);
    expect(await eventsOf([a, c])).toEqual([
      { type: "product.add", product_id: a },
      { type: "product.add", product_id: c },
    ]);
  });

  it.each([
    ["a field", (p: any) => ({ product_id: p.product_id, title: "New" })],
    ["variants", (p: any) => ({ product_id: p.product_id, variants: { add: [colour("z")] } })],
    ["a variant by variant_id", (p: any) => ({ variant_id: p.variants[0].variant_id, stock: 3 })],
    ["stock by SKU", (p: any) => ({ sku: p.variants[0].sku, stock: 4 })],
    ["stock and a title by SKU", (p: any) => ({ sku: p.variants[0].sku, stock: 5, title: "T" })],
  ])("PUT of %s writes one product.update", async (_, body) => {
    const p = await createProduct({ variants: { add: [{ ...colour("a"), sku: uid("V") }] } });
    const r = await put("/v1/products", body(p));
    expect(r.status).toBe(200);
    expect(await eventsOf([p.product_id])).toEqual([
      { type: "product.add", product_id: p.product_id },
      { type: "product.update", product_id: p.product_id },
    ]);
  });

  it("a PUT naming a product in two items writes one event for the product it changed", async () => {
    const p = await createProduct({ sku: uid() });
    await put("/v1/products", [
      { product_id: p.product_id, title: "One" },
      { product_id: p.product_id, title: "Two" },
    ]);
    expect((await eventsOf([p.product_id])).map((e) => e.type)).toEqual(["product.add", "product.update"]);
  });

  it("a refused change writes no event", async () => {
    const p = await createProduct({ sku: uid(), disable_minusqty: 1 });
    expect((await put("/v1/products", { product_id: p.product_id, stock: -1 })).status).toBe(400);
    expect((await put("/v1/products", { product_id: p.product_id, price: "1,50" })).status).toBe(400);
    expect(await eventsOf([p.product_id])).toEqual([{ type: "product.add", product_id: p.product_id }]);
  });

  it.each([
    ["POST", () => ({ title: "F", price: 1, sku: uid() })],
    ["PUT", (p: any) => ({ product_id: p.product_id, title: "F" })],
    ["PUT stock", (p: any) => ({ sku: p.sku, stock: 2 })],
    ["DELETE", (p: any) => ({ product_id: p.product_id })],
  ])("%s writes no event when any of its D1 calls fails", async (method, body) => {
    const probe = await createProduct({ sku: uid() });
    const { db, counts } = wrapD1();
    await call(method.split(" ")[0], "/v1/products", { body: body(probe), env: { DB: db } });
    for (let n = 1; n <= counts.calls; n++) {
      const p = await createProduct({ sku: uid() });
      const before = await countAll();
      const { db: failing } = wrapD1({ failCall: n });
      const r = await call(method.split(" ")[0], "/v1/products", { body: body(p), env: { DB: failing } });
      expect(r.status).toBe(503);
      expect(await countAll()).toBe(before);
    }
  });
});
