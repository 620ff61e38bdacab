import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MAX_VARIANTS } from "../src/products/schema";
import { wrapD1 } from "./d1-wrap";
import { createProduct, get, put, uid } from "./helpers";

// A PUT costs one read and one write round trip, and its number of SQL statements
// does not grow with the number of variants or products.

const colour = (value: string, extra: Record<string, unknown> = {}) => ({
  variant_option1_name: "Colour",
  variant_option1_value: value,
  ...extra,
});

const productWith = (n: number) =>
  createProduct({
    sku: uid("P"),
    variants: { add: Array.from({ length: n }, (_, i) => colour(`c${i}`, { sku: uid("V"), qty: 1 })) },
  });

describe("D1 budget", () => {
  // A batch leaves out the statements of kinds of change it has none of (each reads a row or two
  // even over an empty list), so the smallest product here has one variant of each kind.
  it(`takes two round trips and the same statements at 3, 100 and ${MAX_VARIANTS} variants`, async () => {
    const seen: number[][] = [];
    for (const n of [3, 100, MAX_VARIANTS]) {
      const p = await productWith(n);
      const { db, counts } = wrapD1();
      // Every kind of change at once: one variant renamed (matched by SKU), the others updated,
      // the last one replaced (deleted and created).
      const sync = p.variants.map((v: any, i: number) =>
        i === 0
          ? colour("renamed", { sku: v.sku })
          : i === n - 1
            ? colour("fresh")
            : colour(v.variant_option1_value, { qty: 5 }),
      );
      const r = await put(
        "/v1/products",
        { product_id: p.product_id, title: `n=${n}`, variants: { sync } },
        { env: { DB: db } },
      );
      expect(r.json.errors).toEqual([]);
      expect(r.json.products[0].variants).toHaveLength(n);
      expect(counts.calls).toBeLessThanOrEqual(2);
      seen.push(counts.statementsPerCall);
    }
    expect(seen[1]).toEqual(seen[0]);
    expect(seen[2]).toEqual(seen[0]);
  });

  it("an array of 100 products costs what one does", async () => {
    const one = await createProduct({ sku: uid() });
    const many = await Promise.all(Array.from({ length: 100 }, () => createProduct({ sku: uid() })));
    const single = wrapD1();
    await put("/v1/products", { product_id: one.product_id, stock: 1, sku: uid("N") }, { env: { DB: single.db } });
    const batch = wrapD1();
    const r = await put(
      "/v1/products",
      many.map((p, i) => ({ product_id: p.product_id, stock: i, sku: uid("N") })),
      { env: { DB: batch.db } },
    );
    expect(r.json.success).toBe(100);
    expect(batch.counts.statementsPerCall).toEqual(single.counts.statementsPerCall);
    expect(batch.counts.calls).toBe(2);
  });

  it(`syncs ${MAX_VARIANTS} variants and then back to 3`, async () => {
    const p = await createProduct({ sku: uid(), variants: { add: [colour("a"), colour("b")] } });
    const big = Array.from({ length: MAX_VARIANTS }, (_, i) => colour(`v${i}`, { sku: uid("B"), qty: i }));
    const up = await put("/v1/products", { product_id: p.product_id, variants: { sync: big } });
    expect(up.status).toBe(200);
    expect(up.json.products[0].variants).toHaveLength(MAX_VARIANTS);
    expect(up.json.products[0].stock).toBe(((MAX_VARIANTS - 1) * MAX_VARIANTS) / 2);
    const kept = up.json.products[0].variants.slice(0, 3);
    const down = await put("/v1/products", {
      product_id: p.product_id,
      variants: { sync: kept.map((v: any) => colour(v.variant_option1_value, { sku: v.sku, qty: 7 })) },
    });
    expect(down.status).toBe(200);
    const after = (await get(`/v1/products/${p.product_id}`)).json;
    expect(after.variants.map((v: any) => [v.variant_id, v.qty])).toEqual(kept.map((v: any) => [v.variant_id, 7]));
    const count = await env.DB.prepare("SELECT count(*) AS n FROM skus WHERE product_id = ?")
      .bind(p.product_id)
      .first();
    expect(count).toEqual({ n: 3 + (p.sku ? 1 : 0) });
  });
});

/** A D1 binding that runs `meanwhile` on the real database just before its Nth batch. */
function racing(nth: number, meanwhile: () => Promise<unknown>) {
  const { db, counts } = wrapD1();
  let batches = 0;
  const raced = new Proxy(db, {
    get(target, prop, self) {
      // The app opens a D1 session per request (src/platform/d1.ts): keep it on this proxy.
      if (prop === "withSession") return () => self;
      if (prop === "batch") {
        return async (stmts: D1PreparedStatement[]) => {
          if (++batches === nth) await meanwhile();
          return target.batch(stmts);
        };
      }
      const v = (target as any)[prop];
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  return { db: raced, counts };
}

describe("lost races", () => {
  it("a product changed between read and write is planned again from a fresh read", async () => {
    const p = await createProduct({ sku: uid(), variants: { add: [colour("a"), colour("b")] } });
    const { db, counts } = racing(2, () =>
      put("/v1/products", { product_id: p.product_id, title: "theirs", variants: { sync: [colour("a")] } }),
    );
    const r = await put(
      "/v1/products",
      // A variant selected by id with a new SKU and no list: the general plan (read, then write).
      { variant_id: p.variants[1].variant_id, sku: uid("MOVED"), price: 5 },
      { env: { DB: db } },
    );
    // Their sync deleted variant b, so on the fresh read ours no longer names a variant of the product.
    expect(r.status).toBe(404);
    // read, write (refused by the guard, rolled back), read again; nothing left to write.
    expect(counts.calls).toBe(3);
    expect((await get(`/v1/products/${p.product_id}`)).json).toMatchObject({ title: "theirs", variants: [{}] });
  });

  it("a SKU taken meanwhile fails on the registry, and the fresh plan answers 409", async () => {
    const p = await createProduct({ sku: uid() });
    const sku = uid("RACE");
    const { db } = racing(2, () => createProduct({ sku }));
    const r = await put("/v1/products", { product_id: p.product_id, sku, title: "mine" }, { env: { DB: db } });
    expect(r.status).toBe(409);
    expect(r.json.errors[0]).toMatch(new RegExp(`^sku: SKU ${sku} is already used by product \\d+`));
    expect((await get(`/v1/products/${p.product_id}`)).json).toMatchObject({ sku: p.sku, title: p.title });
  });

  it("a failed write leaves the product as it was", async () => {
    const p = await createProduct({ sku: uid(), variants: { add: [colour("a"), colour("b")] } });
    const before = (await get(`/v1/products/${p.product_id}`)).json;
    const { db } = wrapD1({ failCall: 2 });
    const r = await put(
      "/v1/products",
      // A variant selected by id with a SKU beside the list: a read, then the plan's batch (the second call).
      { variant_id: p.variants[0].variant_id, sku: uid("MOVED"), variants: { sync: [colour("c")] } },
      { env: { DB: db } },
    );
    expect(r.status).toBe(503);
    expect((await get(`/v1/products/${p.product_id}`)).json).toEqual(before);
  });
});

describe("a product that never stops changing", () => {
  it("answers 503 with Retry-After after five lost races, and writes nothing", async () => {
    const p = await createProduct({ title: "Busy", sku: uid(), stock: 1 });
    let writes = 0;
    // Every write batch finds what its plan depends on (here disable_minusqty, part of the product's
    // structure: docs/products.md, "Updating products") changed since its read, as under a stream of other PUTs.
    const db = new Proxy(env.DB, {
      get(target, prop, self) {
        // The app opens a D1 session per request (src/platform/d1.ts): keep it on this proxy.
        if (prop === "withSession") return () => self;
        if (prop === "batch") {
          return async (stmts: D1PreparedStatement[]) => {
            // The read batch has four statements (products, variants, SKU and slug owners).
            if (stmts.length > 4) {
              writes++;
              await target
                .prepare("UPDATE products SET disable_minusqty = 1 - disable_minusqty WHERE id = ?")
                .bind(p.product_id)
                .run();
            }
            return target.batch(stmts);
          };
        }
        const v = (target as any)[prop];
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    const r = await put(
      "/v1/products",
      { product_id: p.product_id, title: "Never", variants: { add: [] } },
      { env: { DB: db } },
    );
    expect(r.status).toBe(503);
    expect(r.headers.get("retry-after")).toBe("1");
    expect(r.json.error).toBe(
      "the product kept changing while this request was applied; nothing was written, retry shortly",
    );
    expect(writes).toBe(5);
    expect((await get(`/v1/products/${p.product_id}`)).json.title).toBe("Busy");
  });
});

describe("concurrent writers of one product", () => {
  // Four writers: each of the others can make a writer's batch fail at most once, so five attempts
  // always suffice, whatever the interleaving.
  it("all land: 4 concurrent syncs each take effect whole, one after another", async () => {
    const p = await createProduct({
      title: "Contended",
      variants: { add: [{ variant_option1_name: "Size", variant_option1_value: "S", qty: 0 }] },
    });
    const answers = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        put("/v1/products", {
          product_id: p.product_id,
          title: `writer ${i}`,
          variants: { sync: [{ variant_option1_value: "S", qty: i }, { variant_option1_value: `only-${i}` }] },
        }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(4).fill(200));
    // Whole requests, never a mix: the survivor's title and its variants belong to one writer.
    const now = (await get(`/v1/products/${p.product_id}`)).json;
    const i = Number(now.title.replace("writer ", ""));
    expect(
      now.variants.map((v: { variant_option1_value: string; qty: number }) => [v.variant_option1_value, v.qty]),
    ).toEqual([
      ["S", i],
      [`only-${i}`, 0],
    ]);
  });
});
