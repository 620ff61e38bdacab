import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { createProduct, get, post, put, uid } from "./helpers";

// Shared by the PUT /v1/orders test files: a product with stock, an order of it, its stock now,
// and the outbox rows of an order.

export async function stocked(stock: number, noMinus = 1) {
  const sku = uid("PUT");
  const p = await createProduct({ sku, stock, disable_minusqty: noMinus });
  return { sku, id: p.product_id as number };
}

export async function variantStocked(qty: number, values = ["S", "M"]) {
  const skus = values.map(() => uid("PV"));
  const p = await createProduct({
    disable_minusqty: 1,
    variants: {
      add: values.map((v, i) => ({ variant_option1_name: "Size", variant_option1_value: v, sku: skus[i], qty })),
    },
  });
  return {
    id: p.product_id as number,
    variants: (p.variants as { variant_id: number; sku: string }[]).map((v) => ({ id: v.variant_id, sku: v.sku })),
  };
}

export async function order(
  lines: { sku: string; qty: number; price?: number }[],
  extra: Record<string, unknown> = {},
) {
  const r = await post("/v1/orders", [{ order_id: "create", products: lines, ...extra }]);
  expect(r.json.results.create_1.success, r.text).toBe(true);
  return r.json.results.create_1.order_id as number;
}

export const change = (body: unknown, init: Parameters<typeof put>[2] = {}) => put("/v1/orders", body, init);

export async function stockOf(productId: number): Promise<number> {
  const r = await get(`/v1/products/${productId}`);
  return r.json.stock;
}

export async function variantQty(productId: number): Promise<number[]> {
  const r = await get(`/v1/products/${productId}`);
  return r.json.variants.map((v: { qty: number }) => v.qty);
}

export async function eventsOf(orderId: number): Promise<string[]> {
  const { results } = await env.DB.prepare("SELECT type FROM events WHERE order_id = ?1 ORDER BY created_at, rowid")
    .bind(orderId)
    .all<{ type: string }>();
  return results.map((r) => r.type);
}

export const readOrder = async (id: number) => (await get(`/v1/orders/${id}`)).json;
