import { describe, expect, it } from "vitest";
import { wrapD1 } from "./d1-wrap";
import { call, get, post, uid } from "./helpers";

// Cost (src/docs/security.md, "Guarantees"): two D1 round trips on the happy path, and a statement count that does not
// grow with the number of orders or lines.

async function catalog(n: number) {
  const skus = Array.from({ length: n }, () => uid("BUD"));
  const r = await post(
    "/v1/products",
    skus.map((sku, i) => ({ sku, title: `Item ${i}`, price: 10 + i, stock: 1000, tax_rate: i % 2 ? 12 : 25 })),
  );
  expect(r.status).toBe(200);
  return skus;
}

describe("D1 budget of POST /v1/orders", () => {
  it("uses the same statements in at most 2 calls for 1 order of 1 line and 100 orders of 50 lines", async () => {
    const skus = await catalog(50);

    const small = wrapD1();
    // With an e-mail like the big ones: an order without one skips the customer upsert.
    const one = {
      order_id: "create",
      customer: { email: `one-${skus[0]}@example.com` },
      products: [{ sku: skus[0], qty: 1 }],
    };
    const r1 = await post("/v1/orders", [one], {
      env: { DB: small.db },
    });
    expect(r1.status).toBe(200);
    expect(small.counts.calls).toBeLessThanOrEqual(2);

    const big = wrapD1();
    const orders = Array.from({ length: 100 }, (_, i) => ({
      order_id: "create",
      customer: { email: `buyer${i % 30}-${skus[0]}@example.com`, newsletter_subscribe: i % 2 },
      shipping: { price: 49 },
      products: skus.map((sku, j) => ({ sku, qty: 1 + ((i + j) % 3) })),
    }));
    const r2 = await post("/v1/orders", orders, { env: { DB: big.db } });
    expect(r2.status).toBe(200);
    const results = Object.values(r2.json.results) as any[];
    expect(results).toHaveLength(100);
    expect(results.every((r) => r.success)).toBe(true);
    expect(big.counts.calls).toBeLessThanOrEqual(2);
    expect(big.counts.statements).toBe(small.counts.statements);
    expect(big.counts.statementsPerCall).toEqual(small.counts.statementsPerCall);

    const last = await get(`/v1/orders/${results[99].order_id}`);
    expect(last.json.products).toHaveLength(50);
    // Ids follow the order of the request.
    expect(results.map((r) => r.order_id)).toEqual(results.map((_, i) => results[0].order_id + i));
  });
});

describe("D1 value size", () => {
  it("never binds a string over D1's 1,000,000 bytes, even for 100 orders of 100 long-titled variant lines", async () => {
    const long = "Ä".repeat(200); // two bytes each in UTF-8
    const names = { variant_option1_name: "Colour", variant_option2_name: "Pattern" };
    const product = await post("/v1/products", {
      title: "Å".repeat(255),
      price: 1,
      variants: {
        add: Array.from({ length: 100 }, (_, i) => ({
          ...names,
          variant_option1_value: `${long}${i}`,
          variant_option2_value: `${long}${i}`,
          sku: uid("SZ"),
          qty: 1000,
        })),
      },
    });
    expect(product.status).toBe(200);
    const ids: number[] = product.json.products[0].variants.map((v: { variant_id: number }) => v.variant_id);
    const { db, counts } = wrapD1();
    const orders = Array.from({ length: 100 }, () => ({
      order_id: "create",
      products: ids.map((variant_id) => ({ variant_id, qty: 1 })),
    }));
    const r = await post("/v1/orders", orders, { env: { DB: db } });
    expect(r.status).toBe(200);
    expect(Object.values(r.json.results).every((x: any) => x.success)).toBe(true);
    expect(counts.maxParamBytes).toBeLessThanOrEqual(1_000_000);
    expect(counts.calls).toBe(2);
    const line = await get(`/v1/orders/${(r.json.results as any).create_100.order_id}`);
    expect(line.json.products[99].options[0].value).toBe(`${long}99`);
  }, 60_000);
});

describe("D1 budget of a storefront's order", () => {
  it("reads the shipping methods within at most 2 calls, from a fresh isolate and from cached rows", async () => {
    const skus = await catalog(3);
    const method = await post("/v1/shipping-methods", { name: uid("Budget post"), price: 10 });
    const key = await post("/v1/keys", { name: uid("pk"), type: "publishable" });
    const headers = { authorization: "", "x-publishable-key": key.json.key };
    // The key verified once, as any storefront's is after its first request in an isolate.
    expect((await get("/v1/shipping-methods", { headers })).status).toBe(200);
    const w = wrapD1();
    const body = [
      { order_id: "create", shipping: { id: method.json.id }, products: skus.map((sku) => ({ sku, qty: 1 })) },
    ];
    for (const [i, ip] of ["192.0.2.80", "192.0.2.81"].entries()) {
      const before = w.counts.calls;
      const r = await post("/v1/orders", body, {
        env: { DB: w.db },
        headers: { ...headers, "cf-connecting-ip": ip },
        cf: { colo: "ARN" },
      });
      expect(r.status, r.text).toBe(200);
      expect(r.json.results.create_1).toMatchObject({ shipping: 10, subtotal: 10 + 11 + 12 });
      expect(w.counts.calls - before, `order ${i + 1}`).toBeLessThanOrEqual(2);
    }
    await call("DELETE", `/v1/shipping-methods/${method.json.id}`);
  });
});
