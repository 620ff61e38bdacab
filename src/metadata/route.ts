import { eq } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
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

const idParam = zv("param", z.object({ id }));

export const metadataRoute = new Hono<AppEnv>();
for (const [what, table] of [
  ["product", products],
  ["order", orders],
] as const) {
  metadataRoute.get(`/${what}/:id`, idParam, async (c) => {
    const { id } = c.req.valid("param");
    const [row] = await c.var.db.select({ m: table.metadata }).from(table).where(eq(table.id, id));
    if (!row) throw new ApiError(404, `${what} ${id} not found`);
    return c.json(asStrings(row.m));
  });
}
