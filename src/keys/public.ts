import { createMiddleware } from "hono/factory";
import { timingSafeEqual } from "hono/utils/buffer";
import type { AppEnv, Credential } from "../env";
import { tooMany } from "../platform/auth";
import { clientAddress } from "../platform/client";

// What a publishable key sees and may do (src/docs/keys.md, "Publishable keys"). The filter is a
// function over a product as any product route presents it (list, details, single), so it
// composes with however those answers are shaped.

/** Fields never shown to a publishable key: costs, suppliers, warehouse locations, merchant metadata. */
const PRIVATE = new Set(["purchase_price", "supplier_name", "supplier_sku", "qty_location", "metadata"]);
const DATAFIELDS = new Set(["datafield_1", "datafield_2", "datafield_3"]);
const STOCK = new Set(["stock", "qty"]);

export type PublicView = { stock: boolean; datafields: boolean };

export const publicView = (cred: Credential): PublicView => ({
  stock: cred.scopes.includes("stock"),
  datafields: cred.scopes.includes("datafields"),
});

type Obj = Record<string, unknown>;

/** Hidden: a product with visible "0"/0, or a variant with hidden "1" or visible 0. */
export const isHidden = (p: Obj) => p.visible === 0 || p.visible === "0" || p.hidden === "1";

function stockOf(p: Obj): number {
  return typeof p.stock === "number" ? p.stock : Number(p.qty ?? 0);
}

/** One product or variant with only its public fields; exact stock becomes `availability`. */
export function publicFields(p: Obj, view: PublicView): Obj {
  const out: Obj = {};
  for (const [k, v] of Object.entries(p)) {
    if (PRIVATE.has(k) || (!view.datafields && DATAFIELDS.has(k)) || (!view.stock && STOCK.has(k))) continue;
    if (k === "variants" && Array.isArray(v)) {
      out[k] = (v as Obj[]).filter((x) => !isHidden(x)).map((x) => publicFields(x, view));
    } else out[k] = v;
  }
  if (!view.stock && (p.stock !== undefined || p.qty !== undefined)) {
    out.availability = stockOf(p) > 0 ? "in_stock" : "out_of_stock";
  }
  return out;
}

/** Whether `sent` is the order's token, compared without early exit. */
export async function tokenMatches(token: string | undefined, sent: string | undefined): Promise<boolean> {
  if (!token || !sent) return false;
  return timingSafeEqual(token, sent);
}

/**
 * Orders from storefronts are held to ORDER_CREATES per client address (src/platform/client.ts:
 * CF-Connecting-IP only where Cloudflare's edge set it, else one shared bucket): a publishable
 * key is public, so anyone can send orders with it, and each unpaid order holds stock.
 */
export const publicOrderLimit = createMiddleware<AppEnv>(async (c, next) => {
  if (
    c.var.credential?.type === "publishable" &&
    !(await c.env.ORDER_CREATES.limit({ key: clientAddress(c) })).success
  ) {
    throw tooMany("orders from this address");
  }
  await next();
});
