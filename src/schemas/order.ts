import { z } from "zod";

// PLACEHOLDER until the orders branch is merged: that branch writes the real wire schema of
// POST /v1/orders (interface.md 2.1-2.6, contract 3.1) in this file, and the merge replaces this
// whole file with it. It exists only so that src/openapi.ts can import `orderCreate` and compile.
// Do not build on it: it validates nothing beyond the top-level shape.
export const orderCreate = z.object(
  {
    order_id: z.literal("create"),
    products: z.array(
      z.object({
        product_id: z.union([z.number(), z.string()]).optional(),
        variant_id: z.union([z.number(), z.string()]).optional(),
        sku: z.string().optional(),
        qty: z.union([z.number(), z.string()]),
        price: z.union([z.number(), z.string()]).optional(),
      }),
    ),
  },
  { error: "must be an order object" },
);
