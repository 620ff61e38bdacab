import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { wrapD1 } from "./d1-wrap";
import { call, createProduct, get, post, subscribeAll, uid } from "./helpers";

// Events are recorded only while an endpoint subscribes (docs/webhooks.md, "Webhooks").
beforeAll(subscribeAll);

// DELETE /v1/products (docs/products.md, "Deleting products"): items by product_id or own SKU, the products
// go with their variants and SKUs in one batch, orders keep their snapshots, per-item errors.

const del = (body: unknown, init: Parameters<typeof call>[2] = {}) => call("DELETE", "/v1/products", { ...init, body });

const colour = (value: string, sku = uid("V")) => ({
  variant_option1_name: "Colour",
  variant_option1_value: value,
  sku,
  qty: 5,
});

const withVariants = () => createProduct({ sku: uid("P"), variants: { add: [colour("Red"), colour("Blue")] } });

async function skusOf(productId: number) {
  const r = await env.DB.prepare("SELECT sku FROM skus WHERE product_id = ? ORDER BY sku").bind(productId).all();
  return r.results.map((x) => x.sku);
}

async function rowsOf(productId: number) {
  const [p, v] = await env.DB.batch([
    env.DB.prepare("SELECT count(*) AS n FROM products WHERE id = ?").bind(productId),
    env.DB.prepare("SELECT count(*) AS n FROM variants WHERE product_id = ?").bind(productId),
  ]);
  return { products: (p.results[0] as { n: number }).n, variants: (v.results[0] as { n: number }).n };
}

describe("DELETE /v1/products", () => {
  it("deletes a product with its variants and SKUs by product_id", async () => {
    const p = await withVariants();
    expect(await skusOf(p.product_id)).toHaveLength(3);
    const r = await del({ product_id: p.product_id });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ success: 1, errors: [], notices: [] });
    expect(await rowsOf(p.product_id)).toEqual({ products: 0, variants: 0 });
    expect(await skusOf(p.product_id)).toEqual([]);
    expect((await get(`/v1/products/${p.product_id}`)).status).toBe(404);
  });

  it("deletes by the product's own SKU, trimmed, as an array; the SKUs are free for reuse", async () => {
    const a = await withVariants();
    const b = await createProduct({ sku: uid("B") });
    const r = await del([{ sku: ` ${a.sku} ` }, { product_id: String(b.product_id) }]);
    expect(r.json).toEqual({ success: 2, errors: [], notices: [] });
    // The product SKU and a variant SKU of the deleted product can be used again.
    const again = await createProduct({ sku: a.sku, variants: { add: [colour("Green", a.variants[0].sku)] } });
    expect(again.sku).toBe(a.sku);
    expect(again.variants[0].sku).toBe(a.variants[0].sku);
  });

  it("keeps past orders and their line snapshots", async () => {
    const p = await withVariants();
    const order = await post("/v1/orders", [{ order_id: "create", products: [{ sku: p.variants[0].sku, qty: 2 }] }]);
    expect(order.status).toBe(200);
    const id = order.json.results.create_1.order_id;
    const before = (await get(`/v1/orders/${id}`)).json;
    expect((await del({ product_id: p.product_id })).status).toBe(200);
    expect((await get(`/v1/orders/${id}`)).json).toEqual(before);
  });

  it("answers each item on its own: 200 when one was deleted, with the others' errors", async () => {
    const a = await createProduct({ sku: uid("A") });
    const v = await withVariants();
    const r = await del([
      { product_id: 99_999_999 },
      { product_id: a.product_id },
      { sku: v.variants[0].sku },
      { sku: "NO-SUCH-SKU" },
      { product_id: a.product_id },
      {},
      { product_id: v.product_id, sku: "OTHER" },
    ]);
    expect(r.status).toBe(200);
    expect(r.json.success).toBe(1);
    expect(r.json.errors).toEqual([
      "[0].product_id: product 99999999 not found",
      expect.stringMatching(
        new RegExp(`^\\[2\\]\\.sku: ${v.variants[0].sku} is the SKU of variant \\d+ of product ${v.product_id}`),
      ),
      "[3].sku: no product has SKU NO-SUCH-SKU",
      `[4]: product ${a.product_id} is already deleted by item [1]`,
      "[5].product_id: give product_id or sku to name the product to delete",
      `[6].sku: OTHER is not the SKU of product ${v.product_id}`,
    ]);
    // The variant's product was named by a variant SKU: kept.
    expect(await rowsOf(v.product_id)).toEqual({ products: 1, variants: 2 });
  });

  it.each([
    ["an unknown product", { product_id: 99_999_998 }, 404, "product_id: product 99999998 not found"],
    ["an unknown SKU", { sku: "NOPE-1" }, 404, "sku: no product has SKU NOPE-1"],
    ["no selector", { title: "x" }, 400, "product_id: give product_id or sku to name the product to delete"],
    ["a bad id", { product_id: "abc" }, 400, "product_id: must be a positive whole number (an id)"],
    ["a non-object item", [1], 400, "[0]: must be an object"],
  ])("answers %s with the item's status", async (_, body, status, error) => {
    const r = await del(body);
    expect(r.status).toBe(status);
    expect(r.json.success).toBe(0);
    expect(r.json.errors).toEqual([error]);
  });

  it.each([
    ["an empty array", [], 400],
    ["101 items", Array.from({ length: 101 }, (_, i) => ({ product_id: i + 1 })), 413],
    ["a string", "x", 400],
  ])("refuses %s before any item", async (_, body, status) => {
    const r = await del(body);
    expect(r.status).toBe(status);
    expect(r.json.code).toBe(status);
  });

  it("requires credentials", async () => {
    const p = await createProduct({ sku: uid() });
    const r = await del({ product_id: p.product_id }, { headers: { authorization: "" } });
    expect(r.status).toBe(401);
    expect(await rowsOf(p.product_id)).toEqual({ products: 1, variants: 0 });
  });

  it("is one round trip of the same statements for 1 and 100 products", async () => {
    const one = await withVariants();
    const many = await Promise.all(Array.from({ length: 100 }, () => createProduct({ sku: uid("M") })));
    const a = wrapD1();
    expect((await del({ product_id: one.product_id }, { env: { DB: a.db } })).status).toBe(200);
    const b = wrapD1();
    const r = await del(
      many.map((p) => ({ sku: p.sku })),
      { env: { DB: b.db } },
    );
    expect(r.json.success).toBe(100);
    expect(a.counts.calls).toBe(1);
    expect(b.counts.statementsPerCall).toEqual(a.counts.statementsPerCall);
  });

  it("deletes nothing when the batch fails", async () => {
    const p = await withVariants();
    const { db } = wrapD1({ failCall: 1 });
    const r = await del({ product_id: p.product_id }, { env: { DB: db } });
    expect(r.status).toBe(503);
    expect(await rowsOf(p.product_id)).toEqual({ products: 1, variants: 2 });
    expect(await skusOf(p.product_id)).toHaveLength(3);
    const events = await env.DB.prepare("SELECT count(*) AS n FROM events WHERE product_id = ? AND type = ?")
      .bind(p.product_id, "product.delete")
      .first();
    expect(events).toEqual({ n: 0 });
  });

  it("a keyed deletion that fails at any D1 call deletes nothing; its retry deletes once and replays", async () => {
    const probe = await createProduct({ sku: uid() });
    const counted = wrapD1();
    await del({ product_id: probe.product_id }, { env: { DB: counted.db }, headers: { "idempotency-key": uid("k") } });
    expect(counted.counts.calls).toBe(2);
    for (let n = 1; n <= counted.counts.calls; n++) {
      const p = await withVariants();
      const headers = { "idempotency-key": uid("key") };
      const { db } = wrapD1({ failCall: n });
      expect((await del({ product_id: p.product_id }, { env: { DB: db }, headers })).status).toBe(503);
      expect(await rowsOf(p.product_id)).toEqual({ products: 1, variants: 2 });
      const retry = await del({ product_id: p.product_id }, { headers });
      expect(retry.json).toEqual({ success: 1, errors: [], notices: [] });
      expect(retry.headers.get("idempotent-replayed")).toBeNull();
      const again = await del({ product_id: p.product_id }, { headers });
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(again.json).toEqual(retry.json);
    }
  });

  it("replays a keyed deletion's first answer and deletes nothing more", async () => {
    const p = await createProduct({ sku: uid() });
    const key = uid("key");
    const body = [{ product_id: p.product_id }, { sku: "NOT-THERE" }];
    const first = await del(body, { headers: { "idempotency-key": key } });
    expect(first.json).toMatchObject({ success: 1, errors: ["[1].sku: no product has SKU NOT-THERE"] });
    // The SKU now exists: a replay still answers what the first request did.
    await createProduct({ sku: "NOT-THERE" });
    const again = await del(body, { headers: { "idempotency-key": key } });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.status).toBe(200);
    expect(again.json).toEqual(first.json);
    expect((await get("/v1/products?sku=NOT-THERE")).json.sku).toBe("NOT-THERE");
  });

  it("of concurrent keyed copies, exactly one deletes", async () => {
    const p = await createProduct({ sku: uid() });
    const key = uid("key");
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => del({ product_id: p.product_id }, { headers: { "idempotency-key": key } })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(5).fill(200));
    expect(answers.filter((a) => !a.headers.get("idempotent-replayed"))).toHaveLength(1);
    const events = await env.DB.prepare("SELECT count(*) AS n FROM events WHERE product_id = ? AND type = ?")
      .bind(p.product_id, "product.delete")
      .first();
    expect(events).toEqual({ n: 1 });
  });
});

describe("DELETE /v1/products in the OpenAPI document", () => {
  it("documents the answers it gives: their keys and statuses", async () => {
    const op = (await get("/openapi.json")).json.paths["/v1/products"].delete;
    expect(op.operationId).toBe("deleteProducts");
    const p = await createProduct({ sku: uid() });
    for (const body of [{ product_id: p.product_id }, { sku: "NOT-A-SKU-DOC" }, [{}]]) {
      const r = await del(body);
      const documented = op.responses[String(r.status)];
      expect(documented, `status ${r.status}`).toBeDefined();
      const schema = documented.content["application/json"].schema;
      expect(Object.keys(r.json).sort()).toEqual(Object.keys(schema.properties).sort());
      for (const key of schema.required) expect(r.json).toHaveProperty(key);
    }
  });
});
