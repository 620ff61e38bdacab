import { describe, expect, it } from "vitest";
import { createProduct, post, uid } from "./helpers";

// A storefront reading stock counts from refusals (docs/storefront.md, "Storefront orders"): a
// publishable key without the `stock` permission sees availability, not counts, so its refusals
// say a line cannot be filled, in the same words whatever is left. A key with `stock`, and every
// secret key, is told the count.

let address = 0;

async function publishable(scopes: string[] = []) {
  const r = await post("/v1/keys", {
    name: uid("pk"),
    type: "publishable",
    allowed_origins: ["https://shop.example"],
    scopes,
  });
  expect(r.status, r.text).toBe(201);
  return r.json.key as string;
}
const order = (key: string | undefined, sku: string, qty: number) =>
  post("/v1/orders", [{ order_id: "create", products: [{ sku, qty }] }], {
    headers: key ? { authorization: "", "x-publishable-key": key, "cf-connecting-ip": `192.0.2.${++address}` } : {},
    cf: { colo: "ARN" },
  });

describe("a refusal for want of stock", () => {
  it.each([0, 1, 7])(
    "to a storefront without stock, says the line cannot be filled, not that %i are left",
    async (left) => {
      const key = await publishable();
      const sku = uid("LEFT");
      await createProduct({ sku, stock: left, disable_minusqty: 1 });
      const r = await order(key, sku, left + 1);
      expect(r.status, r.text).toBe(400);
      expect(r.json.results.create_1.errors).toEqual([
        `products[0].qty: insufficient stock for ${sku}: this line cannot be filled`,
      ]);
    },
  );

  it("to a storefront with the stock permission, and to a secret key, gives the count", async () => {
    const sku = uid("LEFT");
    await createProduct({ sku, stock: 7, disable_minusqty: 1 });
    const told = `products[0].qty: insufficient stock for ${sku}: 7 left`;
    const withStock = await order(await publishable(["stock"]), sku, 8);
    expect(withStock.json.results.create_1.errors).toEqual([told]);
    const secret = await order(undefined, sku, 8);
    expect(secret.json.results.create_1.errors).toEqual([told]);
  });
});
