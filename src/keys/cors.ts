import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { apiKeys } from "../db/schema";
import type { AppEnv, Credential } from "../env";
import { sqlNames } from "../platform/columns";
import { ApiError } from "../platform/errors";
import { ROUTE_SCOPES } from "./scopes";
import { VERIFY_TTL_MS } from "./verify";

// CORS for storefronts (docs/keys.md, "CORS"): only the routes a publishable key may call, only
// from the exact origins a live publishable key lists. Secret-key routes answer no CORS at all, so
// a browser page can never use a secret key even if one leaked into it.

const ALLOW_HEADERS = "X-Publishable-Key, Content-Type, Idempotency-Key, X-D1-Bookmark";
const EXPOSE_HEADERS = "ETag, Link, X-D1-Bookmark, X-Request-Id";
const MAX_AGE = "600";

// Every route by method, as regular expressions over the path, in the order of ROUTE_SCOPES (the
// order the app registers them: /v1/products/count before /v1/products/:product_id).
const ROUTES = Object.entries(ROUTE_SCOPES).map(([key, rule]) => {
  const [method, pattern] = key.split(" ");
  return { method, re: new RegExp(`^${pattern.replace(/:[a-z_]+/g, "[^/]+")}/?$`), publishable: !!rule.publishable };
});

/**
 * The methods a publishable key may call `path` with: those whose route, the first that matches
 * as the router picks it, is a storefront route. /v1/products/count is not a product id.
 */
function publicMethods(path: string): string[] {
  const first = new Map<string, boolean>();
  for (const r of ROUTES) if (!first.has(r.method) && r.re.test(path)) first.set(r.method, r.publishable);
  return [...first].filter(([, publishable]) => publishable).map(([method]) => method);
}

// A preflight carries no key (browsers send no custom header values in it), so it is answered
// from the union of every live publishable key's origins; the real request is then held to its
// own key's list. Cached per isolate like key verification, with the same bound.
const K = sqlNames(apiKeys);
let origins: { set: Set<string>; until: number } | undefined;

async function allowedAnywhere(c: Context<AppEnv>, origin: string, now: number): Promise<boolean> {
  if (!origins || origins.until <= now) {
    const { results } = await c.env.DB.prepare(
      `SELECT DISTINCT o.value AS origin FROM ${K.$} AS k, json_each(k.${K.allowedOrigins}) AS o
       WHERE k.${K.type} = 'publishable' AND k.${K.revokedAt} IS NULL AND (k.${K.expiresAt} IS NULL OR k.${K.expiresAt} > ?1)`,
    )
      .bind(now)
      .all<{ origin: string }>();
    origins = { set: new Set(results.map((r) => r.origin)), until: now + VERIFY_TTL_MS };
  }
  return origins.set.has(origin);
}

/** Answers a CORS preflight of a storefront route (before authentication: it carries no key). */
export const preflight = createMiddleware<AppEnv>(async (c, next) => {
  const origin = c.req.header("origin");
  const wanted = c.req.header("access-control-request-method");
  if (c.req.method !== "OPTIONS" || !origin || !wanted) return next();
  const methods = publicMethods(c.req.path);
  if (!methods.includes(wanted.toUpperCase()) || !(await allowedAnywhere(c, origin, Date.now()))) {
    throw new ApiError(403, "CORS is answered only for storefront routes and origins a publishable key allows");
  }
  return c.body(null, 204, {
    "Access-Control-Allow-Origin": origin,
    "Access-Control-Allow-Methods": methods.join(", "),
    "Access-Control-Allow-Headers": ALLOW_HEADERS,
    "Access-Control-Max-Age": MAX_AGE,
    Vary: "Origin",
  });
});

const headersFor = (origin: string) => ({
  "Access-Control-Allow-Origin": origin,
  "Access-Control-Expose-Headers": EXPOSE_HEADERS,
  Vary: "Origin",
});

/**
 * The CORS headers of a storefront's answer, refusals included (docs/keys.md, "CORS"): for a
 * request with `X-Publishable-Key` and an Origin that its key lists, or, when its key is unknown,
 * revoked or lists another origin (the answer is then a refusal), that a live publishable key
 * lists, as its preflight was answered. A request without Origin (a server, an app) needs none.
 */
export async function storefrontCors(
  c: Context<AppEnv>,
  cred: Credential | null,
): Promise<Record<string, string> | undefined> {
  const origin = c.req.header("origin");
  if (!origin || c.req.header("x-publishable-key") === undefined) return undefined;
  if (cred?.type === "publishable" && cred.allowedOrigins.includes(origin)) return headersFor(origin);
  return (await allowedAnywhere(c, origin, Date.now())) ? headersFor(origin) : undefined;
}

/** 403 unless a publishable key's request from a browser comes from an origin the key allows. */
export function checkOrigin(c: Context<AppEnv>, cred: Credential) {
  const origin = c.req.header("origin");
  if (cred.type === "publishable" && origin && !cred.allowedOrigins.includes(origin)) {
    throw new ApiError(403, `origin ${origin} is not allowed for this key`);
  }
}
