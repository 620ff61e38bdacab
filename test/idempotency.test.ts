import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { scheduled } from "../src/scheduled";
import { wrapD1 } from "./d1-wrap";
import { call, get, post, quietEnv, uid } from "./helpers";

const countSku = async (sku: string) =>
  (
    (await env.DB.prepare("SELECT count(*) AS n FROM products WHERE sku = ?").bind(sku).first<{ n: number }>()) as {
      n: number;
    }
  ).n;

describe("Idempotency-Key on POST /v1/products (docs/security.md, Guarantees)", () => {
  it("replays the first answer for the same key and body, creating nothing more", async () => {
    const key = uid("key");
    const body = { title: "Once", price: 10, sku: uid() };
    const first = await post("/v1/products", body, { headers: { "idempotency-key": key } });
    expect(first.status).toBe(200);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const again = await post("/v1/products", body, { headers: { "idempotency-key": key } });
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json).toEqual(first.json);
    expect(await countSku(body.sku)).toBe(1);
  });

  it("replays a failed answer too, once the request reached the point of writing", async () => {
    const sku = uid();
    await post("/v1/products", { title: "Owner", price: 1, sku });
    const key = uid("key");
    const first = await post("/v1/products", { title: "Dup", price: 1, sku }, { headers: { "idempotency-key": key } });
    expect(first.status).toBe(409);
    const again = await post("/v1/products", { title: "Dup", price: 1, sku }, { headers: { "idempotency-key": key } });
    expect(again.status).toBe(409);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json).toEqual(first.json);
  });

  it("refuses the same key with a different body with 422", async () => {
    const key = uid("key");
    await post("/v1/products", { title: "A", price: 1, sku: uid() }, { headers: { "idempotency-key": key } });
    const other = await post(
      "/v1/products",
      { title: "B", price: 1, sku: uid() },
      { headers: { "idempotency-key": key } },
    );
    expect(other.status).toBe(422);
    expect(other.json).toEqual({ code: 422, error: "this Idempotency-Key was used with a different request" });
  });

  it("lets exactly one of 20 concurrent requests with one key take effect", async () => {
    const key = uid("key");
    const body = { title: "Race", price: 1, sku: uid() };
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => post("/v1/products", body, { headers: { "idempotency-key": key } })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(new Set(answers.map((a) => a.json.products[0].product_id)).size).toBe(1);
    expect(answers.filter((a) => a.headers.get("idempotent-replayed") === "true")).toHaveLength(19);
    expect(await countSku(body.sku)).toBe(1);
  });

  it.each([
    ["too long", "k".repeat(256)],
    ["a control character", "a\tb"],
    ["only a space", " "],
  ])("refuses a key that is %s with 400", async (_, key) => {
    const r = await post("/v1/products", { title: "K", price: 1 }, { headers: { "idempotency-key": key } });
    expect(r.status).toBe(400);
    expect(r.json.errors).toEqual(["Idempotency-Key: must be 1 to 255 printable characters"]);
  });

  it("keeps records 24 hours: an expired key runs again, and the cron purges it", async () => {
    const key = uid("key");
    const body = { title: "Old", price: 1, sku: uid() };
    const first = await post("/v1/products", body, { headers: { "idempotency-key": key } });
    const old = Date.now() - 25 * 60 * 60 * 1000;
    await env.DB.prepare("UPDATE idempotency_keys SET created_at = ? WHERE key = ?").bind(old, `key-0:${key}`).run();
    // Same key after expiry: a new request; the SKU now exists, so it fails as a new request would.
    const later = await post("/v1/products", body, { headers: { "idempotency-key": key } });
    expect(later.headers.get("idempotent-replayed")).toBeNull();
    expect(later.status).toBe(409);
    expect(first.status).toBe(200);
    await env.DB.prepare("UPDATE idempotency_keys SET created_at = ? WHERE key = ?").bind(old, `key-0:${key}`).run();
    await scheduled(quietEnv);
    const left = await env.DB.prepare("SELECT count(*) AS n FROM idempotency_keys WHERE key = ?")
      .bind(`key-0:${key}`)
      .first();
    expect(left).toEqual({ n: 0 });
  });
});

describe("Idempotency-Key on POST /v1/orders and PUT /v1/products", () => {
  it("creates exactly one order for 20 concurrent requests with one key, and replays its id", async () => {
    const sku = uid("ORD");
    await post("/v1/products", { title: "Idem stock", price: 50, sku, stock: 100 });
    const key = uid("key");
    const body = [{ order_id: "create", products: [{ sku, qty: 2 }] }];
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => post("/v1/orders", body, { headers: { "idempotency-key": key } })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    const ids = new Set(answers.map((a) => a.json.results.create_1.order_id));
    expect(ids.size).toBe(1);
    expect(Number.isInteger([...ids][0])).toBe(true);
    expect(answers.filter((a) => a.headers.get("idempotent-replayed") === "true")).toHaveLength(19);
    const stock = await env.DB.prepare("SELECT stock FROM products WHERE sku = ?").bind(sku).first();
    expect(stock).toEqual({ stock: 98 });
    const orders = await env.DB.prepare("SELECT count(*) AS n FROM order_lines WHERE sku = ?").bind(sku).first();
    expect(orders).toEqual({ n: 1 });
  });

  it("replays an order answer whose orders all failed, and refuses another body with 422", async () => {
    const sku = uid("ORD");
    await post("/v1/products", { title: "None left", price: 50, sku, stock: 0, disable_minusqty: 1 });
    const key = uid("key");
    const body = [{ order_id: "create", products: [{ sku, qty: 1 }] }];
    const first = await post("/v1/orders", body, { headers: { "idempotency-key": key } });
    expect(first.status).toBe(400);
    // Stock arrives, but the retry with the key still gets the first answer, as a retry must.
    await env.DB.prepare("UPDATE products SET stock = 5 WHERE sku = ?").bind(sku).run();
    const again = await post("/v1/orders", body, { headers: { "idempotency-key": key } });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.status).toBe(400);
    expect(again.json).toEqual(first.json);
    const other = await post("/v1/orders", [{ order_id: "create", products: [{ sku, qty: 2 }] }], {
      headers: { "idempotency-key": key },
    });
    expect(other.status).toBe(422);
  });

  it("replays a PUT: the retry changes nothing and answers the product as the first answer showed it", async () => {
    const sku = uid("PUT");
    const p = (await post("/v1/products", { title: "Put", price: 50, sku, stock: 1 })).json.products[0];
    const key = uid("key");
    const first = await call("PUT", "/v1/products", { body: { sku, stock: 9 }, headers: { "idempotency-key": key } });
    expect(first.status).toBe(200);
    await env.DB.prepare("UPDATE products SET stock = 3 WHERE id = ?").bind(p.product_id).run();
    const again = await call("PUT", "/v1/products", { body: { sku, stock: 9 }, headers: { "idempotency-key": key } });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.status).toBe(200);
    expect(again.json.success).toBe(1);
    // The retry did not write: the stock set since stays; the replay is the stored first answer.
    expect(again.json).toEqual(first.json);
    expect(again.json.products[0].stock).toBe(9);
    expect((await get(`/v1/products/${p.product_id}`)).json.stock).toBe(3);
  });
});

describe("Idempotency-Key on a request refused before any write", () => {
  it("is 422 when the key was used with another body, and a replay when it is the same body", async () => {
    const sku = uid("ORD");
    await post("/v1/products", { title: "K", price: 5, sku, stock: 10 });
    const key = uid("key");
    const first = await post("/v1/orders", [{ order_id: "create", products: [{ sku, qty: 1 }] }], {
      headers: { "idempotency-key": key },
    });
    expect(first.status).toBe(200);
    const invalid = await post("/v1/orders", [{ order_id: "create", products: [] }], {
      headers: { "idempotency-key": key },
    });
    expect(invalid.status).toBe(422);
    const productKey = uid("key");
    await post("/v1/products", { title: "P", price: 1, sku: uid() }, { headers: { "idempotency-key": productKey } });
    const bad = await post("/v1/products", { title: "" }, { headers: { "idempotency-key": productKey } });
    expect(bad.status).toBe(422);
  });

  it("is not recorded when nothing was written: the same key then works for a corrected request", async () => {
    const key = uid("key");
    const bad = await post("/v1/products", { title: "" }, { headers: { "idempotency-key": key } });
    expect(bad.status).toBe(400);
    const fixed = await post(
      "/v1/products",
      { title: "Fixed", price: 1, sku: uid() },
      { headers: { "idempotency-key": key } },
    );
    expect(fixed.status).toBe(200);
    expect(fixed.headers.get("idempotent-replayed")).toBeNull();
  });
});

describe("a replay answers the stored first answer, never the current state", () => {
  const keyed = () => ({ "idempotency-key": uid("key") });

  it("POST: create with a key, change the product, replay: the created product as it was", async () => {
    const headers = keyed();
    const body = {
      title: "First",
      price: 10,
      sku: uid(),
      variants: { add: [{ variant_option1_name: "Size", variant_option1_value: "S", qty: 2 }] },
    };
    const first = await post("/v1/products", body, { headers });
    const id = first.json.products[0].product_id;
    await call("PUT", "/v1/products", { body: { product_id: id, title: "Changed", variants: { sync: [] } } });
    const again = await post("/v1/products", body, { headers });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json).toEqual(first.json);
    expect(again.json.products[0]).toMatchObject({ title: "First", variants: [{ variant_option1_value: "S" }] });
  });

  it("PUT (general path, two rounds): the answer of the first request after a later change", async () => {
    const p = (await post("/v1/products", { title: "P", price: 1, sku: uid() })).json.products[0];
    const headers = keyed();
    const body = [
      { product_id: p.product_id, title: "Round 1" },
      { product_id: p.product_id, price: 7 },
    ];
    const first = await call("PUT", "/v1/products", { body, headers });
    expect(first.json.products).toEqual([expect.objectContaining({ title: "Round 1", price: 7 })]);
    await call("PUT", "/v1/products", { body: { product_id: p.product_id, title: "Later", price: 9 } });
    const again = await call("PUT", "/v1/products", { body, headers });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json).toEqual(first.json);
  });

  it("a product deleted since still replays as the first answer showed it", async () => {
    const headers = keyed();
    const body = { title: "Gone later", price: 3, sku: uid() };
    const first = await post("/v1/products", body, { headers });
    await call("DELETE", "/v1/products", { body: { product_id: first.json.products[0].product_id } });
    const again = await post("/v1/products", body, { headers });
    expect(again.json).toEqual(first.json);
  });

  it("PUT of a variant list (a read, then one batch): a replay after a later change answers the first answer", async () => {
    const sku = uid();
    const p = (
      await post("/v1/products", {
        title: "Listed",
        price: 5,
        variants: { add: [{ sku, variant_option1_name: "Size", variant_option1_value: "S", qty: 1 }] },
      })
    ).json.products[0];
    const headers = keyed();
    const body = { product_id: p.product_id, title: "Synced", variants: { sync: [{ sku, qty: 4 }] } };
    const { db, counts } = wrapD1();
    const first = await call("PUT", "/v1/products", { body, headers, env: { DB: db } });
    expect(first.status, first.text).toBe(200);
    // The read, then the write with the key's record and snapshot in the same batch.
    expect(counts.calls).toBe(2);
    await call("PUT", "/v1/products", { body: { product_id: p.product_id, variants: { sync: [{ sku, qty: 9 }] } } });
    const again = await call("PUT", "/v1/products", { body, headers });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json).toEqual(first.json);
    expect(again.json.products[0]).toMatchObject({ title: "Synced", variants: [{ sku, qty: 4 }] });
  });

  it("PUT of a variant list: of 10 concurrent requests with one key exactly one takes effect", async () => {
    const sku = uid();
    const p = (
      await post("/v1/products", {
        title: "Raced",
        price: 5,
        variants: { add: [{ sku, variant_option1_name: "Size", variant_option1_value: "S", qty: 0 }] },
      })
    ).json.products[0];
    const key = uid("key");
    const body = {
      product_id: p.product_id,
      variants: { update: [{ variant_id: p.variants[0].variant_id, adjust: 1 }] },
    };
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => call("PUT", "/v1/products", { body, headers: { "idempotency-key": key } })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    expect(answers.filter((a) => a.headers.get("idempotent-replayed") === "true")).toHaveLength(9);
    const now = await call("GET", `/v1/products/${p.product_id}`);
    expect(now.json.variants[0].qty).toBe(1);
  });

  it("records the snapshot in the same batch as the change: one round trip for a keyed create", async () => {
    const { db, counts } = wrapD1();
    const r = await post("/v1/products", { title: "One trip", price: 1 }, { headers: keyed(), env: { DB: db } });
    expect(r.status).toBe(200);
    expect(counts.calls).toBe(1);
  });
});
