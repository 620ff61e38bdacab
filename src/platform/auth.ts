import type { Context } from "hono";
import { basicAuth } from "hono/basic-auth";
import { createMiddleware } from "hono/factory";
import { HTTPException } from "hono/http-exception";
import { timingSafeEqual } from "hono/utils/buffer";
import type { AppEnv } from "../env";
import { clientAddress } from "./client";
import { ApiError } from "./errors";

/** The configured keys: API_KEY may hold several, comma-separated, for rotation (docs/api.md, "Authentication"). */
export function apiKeys(secret: string | undefined): string[] {
  return (secret ?? "")
    .split(",")
    .map((k) => k.trim())
    .filter(Boolean);
}

// The windows of wrangler.toml's [[ratelimits]] (docs/operations.md, "Rate limits"): a refused client may try
// again after at most one period.
const RETRY_AFTER = "60";

const unauthorized = () =>
  new ApiError(401, "missing or invalid credentials", undefined, { "WWW-Authenticate": 'Basic realm="store"' });

const tooMany = (what: string) =>
  new ApiError(429, `too many ${what}, retry later`, undefined, { "Retry-After": RETRY_AFTER });

/**
 * A failed authentication counts against the client's address (docs/operations.md, "Rate limits"). Over the
 * limit the answer is 429 instead of 401, so guessing keys stops at AUTH_FAILURES' rate. Only
 * failures pay for the check: a client with a valid key never waits on it.
 */
async function failed(c: Context<AppEnv>): Promise<never> {
  if (!(await c.env.AUTH_FAILURES.limit({ key: clientAddress(c) })).success) throw tooMany("failed authentications");
  throw unauthorized();
}

/**
 * Basic auth with the API key as both user name and password (docs/api.md, "Authentication"). Built
 * per request because the keys live in `c.env`; fails closed when none is configured. With
 * RATE_LIMIT_PER_KEY="true", each key is also held to KEY_REQUESTS (counted by its position in
 * API_KEY, so the key itself never leaves the Worker).
 */
export const auth = createMiddleware<AppEnv>(async (c, next) => {
  const keys = apiKeys(c.env.API_KEY);
  if (keys.length === 0) throw new ApiError(500, "no API key is configured");
  let matched = -1;
  const mw = basicAuth({
    realm: "store",
    verifyUser: async (user, password) => {
      // Compare against every key, without stopping early, so timing says nothing about which.
      for (const [i, key] of keys.entries()) {
        const [u, p] = await Promise.all([timingSafeEqual(key, user), timingSafeEqual(key, password)]);
        if (u && p && matched < 0) matched = i;
      }
      return matched >= 0;
    },
    onAuthSuccess: async (c) => {
      if (c.env.RATE_LIMIT_PER_KEY !== "true") return;
      if (!(await c.env.KEY_REQUESTS.limit({ key: `key-${matched}` })).success) throw tooMany("requests for this key");
    },
  });
  try {
    return await mw(c, next);
  } catch (e) {
    // basicAuth refuses with its own bare response; answer with the envelope (and X-Request-Id).
    if (matched < 0 && e instanceof HTTPException && e.status === 401) return failed(c);
    throw e;
  }
});
