import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { wrapD1 } from "./d1-wrap";
import { createProduct, get, post, put, uid } from "./helpers";

// Changing stock safely under concurrency (docs/stock.md): adjustments
// sent at once, with sales between them, all take effect; of writes that expect one count or one
// ETag, exactly one does.

const variantProduct = async (qty: number, extra: Record<string, unknown> = {}) => {
  const sku = uid("C");
  const p = await createProduct({
    ...extra,
    variants: { add: [{ variant_option1_name: "Size", variant_option1_value: "M", sku, qty }] },
  });
  return { id: p.product_id as number, variantId: p.variants[0].variant_id as number, sku };
};
const qtyOf = async (id: number) => (await get(`/v1/products/${id}`)).json.variants[0].qty;
const sell = (sku: string, qty: number) => post("/v1/orders", [{ order_id: "create", products: [{ sku, qty }] }]);

describe("adjustments at once", () => {
  it("40 adjustments and 10 sales sent at once end at the exact sum", async () => {
    const v = await variantProduct(100);
    const amounts = Array.from({ length: 40 }, (_, i) => (i % 3 === 0 ? -2 : 5));
    const rs = await Promise.all([
      ...amounts.map((adjust, i) =>
        put(
          "/v1/products",
          // Every form that adjusts: a variants.update entry, a selected variant, a stock-tool item.
          [
            { product_id: v.id, variants: { update: [{ variant_id: v.variantId, adjust }] } },
            { variant_id: v.variantId, adjust },
            [{ sku: v.sku, adjust }],
          ][i % 3],
        ),
      ),
      ...Array.from({ length: 10 }, () => sell(v.sku, 1)),
    ]);
    for (const r of rs) expect(r.status).toBe(200);
    expect(await qtyOf(v.id)).toBe(100 + amounts.reduce((a, b) => a + b, 0) - 10);
  });

  it("under disable_minusqty, adjustments racing for the last units never take the count below zero", async () => {
    const v = await variantProduct(10, { disable_minusqty: 1 });
    const rs = await Promise.all(Array.from({ length: 8 }, () => put("/v1/products", [{ sku: v.sku, adjust: -3 }])));
    expect(rs.filter((r) => r.status === 200)).toHaveLength(3);
    for (const r of rs.filter((r) => r.status !== 200)) {
      expect(r.status).toBe(409);
      expect(r.json.errors[0]).toMatch(/^\[0\]\.adjust: would take the qty of SKU .* to -\d; it cannot go below 0/);
    }
    expect(await qtyOf(v.id)).toBe(1);
  });

  it("of 8 writes that expect the same count, exactly one applies", async () => {
    const v = await variantProduct(11);
    const rs = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        put("/v1/products", { variant_id: v.variantId, expected_qty: 11, stock: 20 + i }),
      ),
    );
    const ok = rs.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    for (const r of rs.filter((r) => r.status !== 200)) {
      expect(r.status).toBe(409);
      expect(r.json.errors[0]).toMatch(/^expected_qty: variant \d+ has qty 2\d, not 11$/);
    }
    expect(await qtyOf(v.id)).toBe(ok[0].json.products[0].variants[0].qty);
  });

  it("of 8 writes with the same If-Match, exactly one applies and the rest get 412 with the winner's state", async () => {
    const v = await variantProduct(11);
    const tag = (await get(`/v1/products/${v.id}`)).headers.get("ETag") as string;
    const rs = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        put("/v1/products", { variant_id: v.variantId, stock: 20 + i }, { headers: { "If-Match": tag } }),
      ),
    );
    const ok = rs.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    const final = await get(`/v1/products/${v.id}`);
    for (const r of rs.filter((r) => r.status !== 200)) {
      expect(r.status).toBe(412);
      expect(r.json.products[0].variants[0].qty).toBe(final.json.variants[0].qty);
      expect(r.headers.get("ETag")).toBe(final.headers.get("ETag"));
    }
  });
});

describe("a stock-tool batch of adjustments", () => {
  it("is one round trip for 1 and 100 items, with the same statements", async () => {
    const seen: number[][] = [];
    for (const n of [1, 100]) {
      const p = await createProduct({
        variants: {
          add: Array.from({ length: 100 }, (_, i) => ({
            variant_option1_name: "Size",
            variant_option1_value: `s${i}`,
            sku: uid("B"),
            qty: 10,
          })),
        },
      });
      const items = p.variants
        .slice(0, n)
        .map((v: any, i: number) => ({ sku: v.sku, adjust: i - 5, expected_qty: 10 }));
      const { db, counts } = wrapD1();
      const r = await put("/v1/products", items, { env: { DB: db } });
      expect(r.status).toBe(200);
      expect(r.json.success).toBe(n);
      expect(r.json.products[0].variants.map((v: any) => v.qty)).toEqual(
        Array.from({ length: 100 }, (_, i) => (i < n ? 10 + i - 5 : 10)),
      );
      expect(counts.calls).toBe(2);
      seen.push(counts.statementsPerCall);
    }
    expect(seen[1]).toEqual(seen[0]);
  });

  it("applies items for one SKU in order: each expected_qty sees what the earlier items left", async () => {
    const v = await variantProduct(10);
    const r = await put("/v1/products", [
      { sku: v.sku, adjust: 5 },
      { sku: v.sku, expected_qty: 15, adjust: -1 },
      { sku: v.sku, expected_qty: 10, adjust: 100 },
      { sku: v.sku, stock: 3 },
      { sku: v.sku, adjust: 2 },
    ]);
    expect(r.json.success).toBe(4);
    expect(r.json.errors).toEqual([`[2].expected_qty: SKU ${v.sku} has qty 14, not 10`]);
    expect(await qtyOf(v.id)).toBe(5);
  });
});

// Any sequence of adjustments (in any form) and sales ends at the arithmetic: nothing is lost.
const step = fc.oneof(
  fc.record({ kind: fc.constant("sale" as const), n: fc.integer({ min: 1, max: 5 }) }),
  fc.record({
    kind: fc.constantFrom("update" as const, "selected" as const, "tool" as const),
    n: fc.integer({ min: -20, max: 20 }),
  }),
);

describe("property: adjustments and sales", () => {
  it("the final qty is the start plus the adjustments minus the sales", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: -5, max: 50 }),
        fc.array(step, { minLength: 1, maxLength: 8 }),
        async (start, steps) => {
          const v = await variantProduct(start);
          // Half of the steps at once, half one after another.
          const half = Math.ceil(steps.length / 2);
          const send = (s: (typeof steps)[number]) => {
            if (s.kind === "sale") return sell(v.sku, s.n);
            if (s.kind === "update") {
              return put("/v1/products", {
                product_id: v.id,
                variants: { update: [{ variant_id: v.variantId, adjust: s.n }] },
              });
            }
            if (s.kind === "selected") return put("/v1/products", { variant_id: v.variantId, adjust: s.n });
            return put("/v1/products", [{ sku: v.sku, adjust: s.n }]);
          };
          const rs = await Promise.all(steps.slice(0, half).map(send));
          for (const s of steps.slice(half)) rs.push(await send(s));
          for (const r of rs) expect(r.status).toBe(200);
          const sum = steps.reduce((t, s) => t + (s.kind === "sale" ? -s.n : s.n), start);
          expect(await qtyOf(v.id)).toBe(sum);
        },
      ),
      { numRuns: 15 },
    );
  });
});
