import { createMiddleware } from "hono/factory";
import { timingSafeEqual } from "hono/utils/buffer";
import type { AppEnv, Credential } from "../env";
import { clientAddress } from "../platform/client";
import { type Field, PRODUCT_FIELDS, VARIANT_FIELDS } from "../products/fields";
import { tooMany } from "./auth";

// What a publishable key sees and may do (docs/keys.md, "Publishable keys"). Every product
// answer a storefront gets is built by SQLite (src/products/present.ts) from the fields shownTo
// lets through; test/modelled-reference.ts holds the same filter over presented products, the
// reference those answers are compared with.

/**
 * Fields by who sees them (src/products/fields.ts, `shown`): never a publishable key (costs,
 * suppliers, warehouse locations, merchant metadata), or only one with the datafields or stock scope.
 */
const described = [...Object.entries(PRODUCT_FIELDS), ...Object.entries(VARIANT_FIELDS)] as [string, Field][];
const shownOnly = (shown: Field["shown"]) => new Set(described.filter(([, f]) => f.shown === shown).map(([k]) => k));
const PRIVATE = shownOnly(false);
const DATAFIELDS = shownOnly("datafields");
const STOCK = shownOnly("stock");

export type PublicView = { stock: boolean; datafields: boolean };

/** What the request's key may see of the catalog: a view for a publishable key, else undefined (all). */
export const publicView = (cred: Credential | undefined): PublicView | undefined =>
  cred?.type === "publishable"
    ? { stock: cred.scopes.includes("stock"), datafields: cred.scopes.includes("datafields") }
    : undefined;

/** Whether a publishable key with `view` sees a product's or variant's field `k`, in every shape. */
export const shownTo = (view: PublicView, k: string) =>
  !PRIVATE.has(k) && (view.datafields || !DATAFIELDS.has(k)) && (view.stock || !STOCK.has(k));

/** Whether `sent` is the order's token, compared without early exit. */
export const tokenMatches = async (token: string | undefined, sent: string | undefined): Promise<boolean> =>
  !!token && !!sent && timingSafeEqual(token, sent);

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
