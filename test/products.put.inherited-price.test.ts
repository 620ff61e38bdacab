import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { wrapD1 } from "./d1-wrap";
import { product, size } from "./fixtures/sizes";
import { get, put, uid } from "./helpers";

// A new variant without a price takes the product's (docs/products.md). The plan reads that price,
// so the write batch's guard holds it: a price change committed between the read and the batch
// fails the batch, and the round is planned again from the price as it now is.
describe("a new variant's inherited price, with a price change in between", () => {
  it.each([
    ["added", (sku: string) => ({ variants: { add: [size("xl", { sku })] } })],
    [
      "synced in",
      (sku: string, skus: string[]) => ({
        variants: { sync: [...skus.map((s) => ({ sku: s })), size("xl", { sku })] },
      }),
    ],
  ])("a variant %s takes the price stored when the batch commits", async (_name, body) => {
    const p = `${uid("IP")}-`;
    const made = await product(p);
    const skus = (made.variants as { sku: string }[]).map((v) => v.sku);
    // Calls: the read (price 100), then the batch, before which another write sets 150 (stored in
    // minor units).
    const w = wrapD1({
      before: async (call) => {
        if (call === 2)
          await env.DB.prepare("UPDATE products SET price = price + 5000 WHERE id = ?").bind(made.product_id).run();
      },
    });
    const r = await put(
      "/v1/products",
      { product_id: made.product_id, ...body(`${p}xl`, skus) },
      { env: { DB: w.db } },
    );
    expect(r.status, r.text).toBe(200);
    const stored = await get(`/v1/products/${made.product_id}`);
    const xl = (
      (stored.json.products?.[0] ?? stored.json.product ?? stored.json).variants as { sku: string; price: number }[]
    ).find((v) => v.sku === `${p}xl`);
    expect(xl?.price).toBe(150);
    expect(w.counts.calls).toBe(4);
  });
});
