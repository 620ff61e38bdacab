import type { Context, Next } from "hono";
import { createMiddleware } from "hono/factory";
import { HTTPException } from "hono/http-exception";
import type { AppEnv, Credential } from "../env";
import { apiKeys, failed, owner, tooMany } from "../platform/auth";
import { ApiError } from "../platform/errors";
import { checkSessionWrite } from "../sessions/store";
import { checkOrigin, storefrontCors } from "./cors";
import { authorize, ruleOf } from "./scopes";
import { basic, resolveCredential } from "./verify";

/**
 * Authentication and authorization of every /v1 request (docs/api.md, "Authentication"; docs/keys.md):
 * resolves the credential (src/keys/verify.ts; Basic through Hono's basicAuth), then checks the
 * route's scope in the one table of src/keys/scopes.ts. Fails closed when no API_KEY is
 * configured. With RATE_LIMIT_PER_KEY="true", each key is also held to KEY_REQUESTS (a bootstrap
 * key counted by its position in API_KEY, so the key itself never leaves the Worker; a stored key
 * by its id; a session as the key it was signed in with).
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
    // our envelope, the challenge unless the request opts out (src/platform/auth.ts, `failed`).
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

/** Throws unless the credential may make this request: 401, 429 or 403. */
async function admit(c: Context<AppEnv>, cred: Credential | null): Promise<void> {
  if (!cred) return failed(c);
  if (c.env.RATE_LIMIT_PER_KEY === "true") {
    if (!(await c.env.KEY_REQUESTS.limit({ key: owner(cred) })).success) throw tooMany("requests for this key");
  }
  authorize(c, cred);
  // A session cookie travels with every request the browser makes; a write must also prove it
  // comes from the admin's page (docs/admin.md, "Sessions").
  if (cred.session && c.req.method !== "GET" && c.req.method !== "HEAD") await checkSessionWrite(c, cred.session);
  checkOrigin(c, cred);
}

/**
 * `Cache-Control: no-store` on every /v1 answer but a publishable key's (docs/api.md,
 * "Caching"): what a secret key or the admin's session reads (customers, orders, keys) must not
 * stay in a browser's or proxy's cache; refusals included. The storefront catalogue keeps the
 * caching src/products/edge.ts gives it.
 */
export const noStore = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  if (c.var.credential?.type === "publishable" || c.req.header("x-publishable-key") !== undefined) return;
  c.res.headers.set("Cache-Control", "no-store");
});
