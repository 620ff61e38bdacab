import { eq } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import type { DB } from "../db/client";
import { orders, products } from "../db/schema";
import type { AppEnv } from "../env";
import { ApiError } from "../platform/errors";
import { id } from "../platform/fields";
import { zv } from "../platform/zv";

// The modelled API's metadata reads (docs/modelled-reads.md, "Metadata"): the `metadata` a
// product or an order was written with, as the public C# SDK reads it: a flat object of strings
// (Dictionary<string, string>). A string value is answered as it is; any other value as its JSON
// text, so nothing a client stored is lost.

/** A stored metadata object as a flat object of strings. */
export function asStrings(stored: string | null): Record<string, string> {
  if (stored === null) return {};
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(JSON.parse(stored) as Record<string, unknown>)) {
    out[k] = typeof v === "string" ? v : JSON.stringify(v);
  }
  return out;
}

async function productMetadata(db: DB, productId: number) {
  const [row] = await db.select({ m: products.metadata }).from(products).where(eq(products.id, productId));
  return row;
}

async function orderMetadata(db: DB, orderId: number) {
  const [row] = await db.select({ m: orders.metadata }).from(orders).where(eq(orders.id, orderId));
  return row;
}

const idParam = zv("param", z.object({ id }));

export const metadataRoute = new Hono<AppEnv>()
  .get("/product/:id", idParam, async (c) => {
    const { id } = c.req.valid("param");
    const row = await productMetadata(c.var.db, id);
    if (!row) throw new ApiError(404, `product ${id} not found`);
    return c.json(asStrings(row.m));
  })
  .get("/order/:id", idParam, async (c) => {
    const { id } = c.req.valid("param");
    const row = await orderMetadata(c.var.db, id);
    if (!row) throw new ApiError(404, `order ${id} not found`);
    return c.json(asStrings(row.m));
  });
