import { describe, expect, it } from "vitest";
import { wrapD1 } from "./d1-wrap";
import { createProduct, get, put, uid } from "./helpers";

// docs/products.md, "Updating products": a PUT's write batch is guarded by the product's structure (variant
// ids, SKUs, option values and names, positions, the product's SKU and disable_minusqty), not by
// its updated_at, so concurrent writers that only change values do not exclude one another, and
// each request still takes effect whole.

type V = { sku: string; variant_option1_value: string; qty: number; price: number };

async function tenVariants(extra: Record<string, unknown> = {}) {
  const skus = Array.from({ length: 10 }, () => uid("C"));
  const p = await createProduct({
    title: "Contended",
    ...extra,
    variants: {
      add: skus.map((sku, i) => ({ sku, variant_option1_name: "Size", variant_option1_value: `s${i}`, qty: 0 })),
    },
  });
  return { id: p.product_id as number, skus };
}

/** Writer w's whole state: every variant at qty 100*w + i and price 1000*w + i. */
const syncOf = (skus: string[], w: number) =>
  skus.map((sku, i) => ({
    sku,
    variant_option1_name: "Size",
    variant_option1_value: `s${i}`,
    qty: 100 * w + i,
    price: 1000 * w + i,
  }));

describe("concurrent value-only syncs of one product", () => {
  /** 8 writers at once, writer i sending `body(i)`; their round trips and the product after. */
  async function eightWriters(
    body: (skus: string[], id: number, i: number) => Record<string, unknown>,
    product: Record<string, unknown> = {},
  ) {
    const { id, skus } = await tenVariants(product);
    const wraps = Array.from({ length: 8 }, () => wrapD1());
    const answers = await Promise.all(
      wraps.map((w, i) => put("/v1/products", body(skus, id, i), { env: { DB: w.db } })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    const variants = (await get(`/v1/products/${id}`)).json.variants as V[];
    // One writer's state whole: every variant at that writer's qty and price.
    expect(variants.map((v) => v.sku)).toEqual(skus);
    const w = Math.floor(variants[0].qty / 100);
    expect(w).toBeGreaterThanOrEqual(1);
    expect(variants.map((v) => [v.qty, v.price])).toEqual(skus.map((_, i) => [100 * w + i, 1000 * w + i]));
    return wraps.map((x) => x.counts.calls);
  }

  it("8 writers of a sync with a title each land in one read and one write (product fields in the same batch), one writer's state whole", async () => {
    const calls = await eightWriters((skus, id, i) => ({
      product_id: id,
      title: `Writer ${i + 1}`,
      variants: { sync: syncOf(skus, i + 1) },
    }));
    expect(calls).toEqual(Array(8).fill(2));
  });

  it("8 writers of a bare sync each land in one read and one write, one writer's state whole", async () => {
    const calls = await eightWriters((skus, id, i) => ({ product_id: id, variants: { sync: syncOf(skus, i + 1) } }));
    // A bare sync reads nothing before its batch (src/products/update/plan.ts): nothing to go stale.
    expect(calls).toEqual(Array(8).fill(2));
  });

  it("8 writers selecting a variant by SKU with a count below 0 under disable_minusqty (the sync lifts it) land in a read and one batch each, one writer's state whole", async () => {
    const calls = await eightWriters(
      (skus, _id, i) => ({
        // The selected variant's count below 0 beside the list under disable_minusqty, which the
        // sync lifts: the floor is checked on what the lists leave.
        sku: skus[0],
        stock: -1,
        variants: { sync: syncOf(skus, i + 1) },
      }),
      { disable_minusqty: 1 },
    );
    // No writer lost a race: the selection's read, then one batch each (what the read found, the
    // SKU's owner, is not what the others change).
    expect(calls).toEqual(Array(8).fill(2));
  });

  it("a structural change in between is still seen: the loser plans again and both take effect whole", async () => {
    const { id, skus } = await tenVariants();
    // One writer renames every option value; the others sync values under the old ones (matched by
    // SKU, so they keep whatever values the variant has when their plan is made).
    const renames = put("/v1/products", {
      product_id: id,
      variants: { sync: skus.map((sku, i) => ({ sku, variant_option1_name: "Size", variant_option1_value: `r${i}` })) },
    });
    const stock = Array.from({ length: 4 }, (_, k) =>
      put("/v1/products", {
        product_id: id,
        variants: { sync: skus.map((sku, i) => ({ sku, qty: 10 * (k + 1) + i })) },
      }),
    );
    const answers = await Promise.all([renames, ...stock]);
    expect(answers.map((a) => a.status)).toEqual(Array(5).fill(200));
    const variants = (await get(`/v1/products/${id}`)).json.variants as V[];
    expect(variants.map((v) => v.sku)).toEqual(skus);
    expect(variants.map((v) => v.variant_option1_value)).toEqual(skus.map((_, i) => `r${i}`));
    const k = Math.floor(variants[0].qty / 10);
    expect(variants.map((v) => v.qty)).toEqual(skus.map((_, i) => 10 * k + i));
  });

  it("a new variant that inherits the product's price is planned again when the price changed meanwhile", async () => {
    const { id, skus } = await tenVariants();
    const [a, b] = await Promise.all([
      put("/v1/products", { product_id: id, price: 777 }),
      put("/v1/products", {
        product_id: id,
        variants: { add: [{ variant_option1_name: "Size", variant_option1_value: "new" }] },
      }),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    const now = (await get(`/v1/products/${id}`)).json;
    expect(now.variants).toHaveLength(skus.length + 1);
    // Either order is whole: the new variant has the price the product had when it was added
    // (createProduct's 100, or 777). The add, one round trip now, may come first.
    const added = (now.variants as V[]).find((v) => v.variant_option1_value === "new");
    expect([100, 777]).toContain(added?.price);
  });
});
