import type { Context, Next } from "hono";
import { basicAuth } from "hono/basic-auth";
import { createMiddleware } from "hono/factory";
import { HTTPException } from "hono/http-exception";
import { matchedRoutes } from "hono/route";
import { timingSafeEqual } from "hono/utils/buffer";
import { apiKeys as apiKeysTable } from "../db/schema";
import type { AppEnv, Credential, LogCounts } from "../env";
import { clientAddress } from "../platform/client";
import { sqlNames } from "../platform/columns";
import { ApiError, envelope } from "../platform/errors";
import { sha256 } from "../platform/hash";
import { owner } from "../platform/idempotency";
import { checkSessionWrite, sessionCookie, sessionCredential } from "../sessions/store";
import { ALL_SCOPES, type Carried, ROUTE_SCOPES, type RouteRule } from "./scopes";

// Authentication and authorization of every /v1 request (docs/api.md, "Authentication";
// docs/keys.md): who is calling (a stored key, an entry of API_KEY or the admin's session), whether
// the route's scope in src/keys/scopes.ts lets them, and the CORS a storefront's answers carry. At
// the end, every request's log line, which names the route that ran as ruleOf finds it.

// The windows of wrangler.toml's [[ratelimits]] (docs/operations.md, "Rate limits"): a refused
// client may try again after at most one period.
const RETRY_AFTER = "60";

export const tooMany = (what: string) =>
  new ApiError(429, `too many ${what}, retry later`, undefined, { "Retry-After": RETRY_AFTER });

/**
 * Whether a 401 carries the Basic challenge, as every client of the API is promised. A browser
 * answers one with its login dialog, even for a script's fetch (which then hangs until the dialog
 * is dismissed), so a script opts out the way XHR clients do with other servers (Spring Security,
 * for one): `X-Requested-With` present. The admin sends it, and a request with its session cookie
 * never gets one (docs/admin.md, "Sessions").
 */
function challenges(c: Context<AppEnv>): boolean {
  return (
    c.req.header("x-requested-with") === undefined && !/(?:^|;\s*)__Host-session=/.test(c.req.header("cookie") ?? "")
  );
}

/**
 * A failed authentication counts against the client's address (docs/operations.md, "Rate limits").
 * Over the limit the answer is 429 instead of 401, so guessing keys stops at AUTH_FAILURES' rate.
 * Only failures pay for the check: a client with a valid key never waits on it.
 */
export async function failed(c: Context<AppEnv>, challenge = true): Promise<never> {
  if (!(await c.env.AUTH_FAILURES.limit({ key: clientAddress(c) })).success) throw tooMany("failed authentications");
  const basic = challenge && challenges(c) ? { "WWW-Authenticate": 'Basic realm="store"' } : undefined;
  throw new ApiError(401, "missing or invalid credentials", undefined, basic);
}

/**
 * How long an isolate trusts what it learned about a stored key: a revocation (or expiry of a
 * cached negative) takes effect everywhere within this bound, and at once in the isolate that
 * revoked it (docs/keys.md, "Revocation"). The origins CORS answers are kept as long.
 */
export const VERIFY_TTL_MS = 60_000;
const MAX_CACHED = 1_000;

type Cached = { cred: Credential | null; until: number; hash: string };
// Per isolate, keyed by the key's SHA-256: the happy path of a known key costs no D1 query.
const cache = new Map<string, Cached>();

export const SECRET_PREFIX = "sk_";
export const PUBLISHABLE_PREFIX = "pk_";

/** Forgets a key at once in this isolate (after its revocation here). */
export function forgetKey(keyId: number) {
  for (const [k, v] of cache) if (v.cred?.keyId === keyId) cache.delete(k);
}

// The row as the credential it is, its JSON arrays still text.
type KeyRow = Pick<Credential, "keyId" | "name" | "type" | "expiresAt"> & {
  hash: string;
  scopes: string;
  allowedOrigins: string;
};

// One statement both finds a live key and records its use (at most once per TTL per isolate).
const K = sqlNames(apiKeysTable);
const LOOKUP = `UPDATE ${K.$} SET ${K.lastUsedAt} = ?2 WHERE ${K.hash} = ?1 AND ${K.revokedAt} IS NULL
  RETURNING ${K.id} AS keyId, ${K.name} AS name, ${K.type} AS type, ${K.scopes} AS scopes,
    ${K.allowedOrigins} AS allowedOrigins, ${K.expiresAt} AS expiresAt, ${K.hash} AS hash`;

async function storedKey(c: Context<AppEnv>, key: string, now: number): Promise<Credential | null> {
  const hash = await sha256(key);
  let hit = cache.get(hash);
  if (!hit || hit.until <= now) {
    const row = await c.env.DB.prepare(LOOKUP).bind(hash, now).first<KeyRow>();
    const { hash: _hash, ...fields } = row ?? {};
    const cred: Credential | null = row && {
      ...(fields as Omit<KeyRow, "hash">),
      scopes: JSON.parse(row.scopes),
      allowedOrigins: JSON.parse(row.allowedOrigins),
      apiKeyIndex: null,
    };
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value as string);
    hit = { cred, until: now + VERIFY_TTL_MS, hash: row?.hash ?? "" };
    cache.set(hash, hit);
  }
  // The index found the row by hash; compare it once more without early exit all the same.
  if (!hit.cred || !(await timingSafeEqual(hit.hash, hash))) return null;
  if (hit.cred.expiresAt !== null && hit.cred.expiresAt <= now) return null;
  return hit.cred;
}

/** The configured keys: API_KEY may hold several, comma-separated, for rotation (docs/api.md, "Authentication"). */
export function apiKeys(secret: string | undefined): string[] {
  return (secret ?? "")
    .split(",")
    .map((k) => k.trim())
    .filter(Boolean);
}

/**
 * The credential of the API_KEY variable's key at `index` (docs/keys.md): every scope, no origin
 * list, no expiry.
 */
export const bootstrapCredential = (index: number): Credential => ({
  keyId: null,
  name: "API_KEY",
  type: "secret",
  scopes: ALL_SCOPES,
  allowedOrigins: [],
  expiresAt: null,
  apiKeyIndex: index,
});

/**
 * A secret key handed over as such (the sign-in body of POST /v1/sessions, or a Basic or Bearer
 * header's key): a live stored secret key, or an entry of the bootstrap API_KEY.
 */
export async function verifySecretKey(c: Context<AppEnv>, key: string, now = Date.now()): Promise<Credential | null> {
  if (key.startsWith(SECRET_PREFIX)) {
    const cred = await storedKey(c, key, now);
    if (cred?.type === "secret") return cred;
  }
  // Compare against every entry of API_KEY, without stopping early, so timing says nothing about which.
  const equal = await Promise.all(apiKeys(c.env.API_KEY).map((k) => timingSafeEqual(k, key)));
  const index = equal.indexOf(true);
  return index < 0 ? null : bootstrapCredential(index);
}

/**
 * THE credential resolution of every /v1 request (docs/keys.md): who is calling, or null.
 * `X-Publishable-Key: pk_...`; else `Authorization: Bearer sk_...`; else the admin's session
 * cookie (docs/admin.md, "Sessions") when the request carries no key header. Any other
 * Authorization header is Basic's: "basic" leaves it to `basic` below.
 */
async function resolveCredential(c: Context<AppEnv>, now = Date.now()): Promise<Credential | null | "basic"> {
  const publishable = c.req.header("x-publishable-key");
  // An empty header is no header (some clients cannot leave a default one out).
  const authorization = c.req.header("authorization") || undefined;
  if (publishable !== undefined) {
    if (authorization !== undefined || !publishable.startsWith(PUBLISHABLE_PREFIX)) return null;
    const cred = await storedKey(c, publishable, now);
    return cred?.type === "publishable" ? cred : null;
  }
  if (authorization === undefined) {
    const session = sessionCookie(c);
    return session === undefined ? null : sessionCredential(c, session, now);
  }
  const bearer = /^bearer +(\S+) *$/i.exec(authorization)?.[1];
  if (bearer === undefined) return "basic";
  // The bootstrap key is Basic only, as it always was.
  if (!bearer.startsWith(SECRET_PREFIX)) return null;
  const cred = await verifySecretKey(c, bearer, now);
  return cred?.keyId === null ? null : cred;
}

/**
 * Basic authentication (docs/api.md, "Authentication"): Hono's basicAuth parses the header, and
 * the key is both user name and password, an entry of API_KEY or a stored secret key, compared in
 * constant time. A verified key's credential is set on the context for `auth` to admit.
 */
const basic = basicAuth({
  realm: "store",
  verifyUser: async (user, password, c) => {
    // Both are what the client sent: comparing them tells it nothing it does not know.
    if (!user || user !== password) return false;
    const cred = await verifySecretKey(c, user);
    if (cred) c.set("credential", cred);
    return cred !== null;
  },
  invalidUserMessage: envelope(401, "missing or invalid credentials"),
});

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
// own key's list.
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
async function storefrontCors(c: Context<AppEnv>, cred: Credential | null) {
  const origin = c.req.header("origin");
  if (!origin || c.req.header("x-publishable-key") === undefined) return undefined;
  if (cred?.type === "publishable" && cred.allowedOrigins.includes(origin)) return headersFor(origin);
  return (await allowedAnywhere(c, origin, Date.now())) ? headersFor(origin) : undefined;
}

/**
 * The middleware of every /v1 request: resolves the credential (Basic through Hono's basicAuth),
 * then admits it to the route. Fails closed when no API_KEY is configured.
 */
export const auth = createMiddleware<AppEnv>(async (c, next) => {
  const keys = apiKeys(c.env.API_KEY);
  if (keys.length === 0) throw new ApiError(500, "no API key is configured");
  // Sign-in carries its key in the body; src/sessions/route.ts verifies it.
  if (ruleOf(c)?.session === "sign-in") return next();
  const cred = await resolveCredential(c);
  if (cred !== "basic") return enter(c, cred, next);
  let verified = false;
  try {
    await basic(c, () => {
      verified = true;
      return enter(c, c.var.credential ?? null, next);
    });
  } catch (e) {
    // basicAuth's refusal is answered as any failed authentication: counted against the address,
    // our envelope, the challenge unless the request opts out.
    if (!verified && e instanceof HTTPException) return failed(c);
    throw e;
  }
});

/** Admits the credential to the rest of the request, with a storefront's CORS on every answer. */
async function enter(c: Context<AppEnv>, cred: Credential | null, next: Next) {
  const cors = await storefrontCors(c, cred);
  try {
    await admit(c, cred);
  } catch (e) {
    // A storefront reads why it was refused (docs/keys.md, "CORS").
    if (cors && e instanceof ApiError) throw new ApiError(e.status, e.message, e.errors, { ...e.headers, ...cors });
    throw e;
  }
  c.set("credential", cred as Credential);
  await next();
  // After next(): on the final answer, errors included, so a storefront can read them too.
  if (cors) for (const [k, v] of Object.entries(cors)) c.res.headers.set(k, v);
}

/**
 * Throws unless the credential may make this request: 401, 429 or 403. With
 * RATE_LIMIT_PER_KEY="true", each key is held to KEY_REQUESTS, counted by `owner` (never the key).
 */
async function admit(c: Context<AppEnv>, cred: Credential | null): Promise<void> {
  if (!cred) return failed(c);
  if (c.env.RATE_LIMIT_PER_KEY === "true") {
    if (!(await c.env.KEY_REQUESTS.limit({ key: owner(cred) })).success) throw tooMany("requests for this key");
  }
  authorize(c, cred);
  // A session cookie travels with every request the browser makes; a write must also prove it
  // comes from the admin's page (docs/admin.md, "Sessions").
  if (cred.session && c.req.method !== "GET" && c.req.method !== "HEAD") await checkSessionWrite(c, cred.session);
  // A publishable key's request from a browser must come from an origin the key allows.
  const origin = c.req.header("origin");
  if (cred.type === "publishable" && origin && !cred.allowedOrigins.includes(origin)) {
    throw new ApiError(403, `origin ${origin} is not allowed for this key`);
  }
}

/**
 * The route this request runs (not a middleware's), if any: the first method route that matched,
 * as Hono runs them in registration order (/v1/products/count before /:product_id).
 */
const handlerRoute = (c: Context<AppEnv>) => matchedRoutes(c).find((r) => r.method !== "ALL");
/** The rule of the route this request runs, if any. */
export const ruleOf = (c: Context<AppEnv>, r = handlerRoute(c)): RouteRule | undefined =>
  r && ROUTE_SCOPES[`${r.method} ${r.path}`];

/**
 * 403 unless the credential may call this request's route. A route of the app without a rule is
 * refused to every key but the bootstrap one (it cannot happen: the scopes test enumerates them);
 * a path with no route at all goes on to the 404.
 */
export function authorize(c: Context<AppEnv>, cred: Credential): void {
  const route = handlerRoute(c);
  if (!route) return;
  const rule = ruleOf(c, route);
  if (cred.type === "publishable") {
    if (!rule?.publishable) throw new ApiError(403, "a publishable key may not call this route");
  } else if (!rule) {
    if (cred.keyId !== null) throw new ApiError(403, "this route has no scope; only the bootstrap API_KEY may call it");
  } else if (!rule.session && !cred.scopes.includes(rule.scope)) {
    throw new ApiError(403, `this key lacks the scope ${rule.scope}`);
  }
}

/**
 * 403 unless the credential also holds the scope this route's rule names for an answer carrying
 * `what` (docs/keys.md, "Scopes"); a route without `carries` needs nothing more.
 */
export function authorizeCarried(c: Context<AppEnv>, what: Carried): void {
  const need = ruleOf(c)?.carries?.[what];
  const cred = c.var.credential;
  if (need && !cred?.scopes.includes(need)) {
    throw new ApiError(
      403,
      `this key lacks the scope ${need}, which reading ${what === "order" ? "an order" : "a product"} needs`,
    );
  }
}

/**
 * `Cache-Control: no-store` on every /v1 answer but a publishable key's (docs/api.md,
 * "Caching"): what a secret key or the admin's session reads (customers, orders, keys) must not
 * stay in a browser's or proxy's cache; refusals included. The storefront catalogue keeps the
 * caching src/products/version.ts gives it.
 */
export const noStore = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  if (c.var.credential?.type === "publishable" || c.req.header("x-publishable-key") !== undefined) return;
  c.res.headers.set("Cache-Control", "no-store");
});

/**
 * One JSON line per request (Workers Logs indexes its fields): request id, method, route pattern,
 * status, duration and the counts a handler recorded with c.set("logCounts", ...). Deliberately no
 * header value, query, body or credential: only what is listed here is ever written.
 */
export const requestLog = createMiddleware<AppEnv>(async (c, next) => {
  const start = Date.now();
  try {
    await next();
  } finally {
    // The pattern of the route that ran, not the raw path, so ids in paths do not end up in logs
    // and lines group by route.
    const line: Record<string, unknown> = {
      level: "info",
      msg: "request",
      requestId: c.var.requestId,
      method: c.req.method,
      route: handlerRoute(c)?.path ?? null,
      status: c.res.status,
      durationMs: Date.now() - start,
    };
    const counts: LogCounts | undefined = c.var.logCounts;
    if (counts) line.counts = counts;
    console.log(JSON.stringify(line));
  }
});
