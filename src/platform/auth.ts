import type { Context } from "hono";
import type { AppEnv, Credential } from "../env";
import { clientAddress } from "./client";
import { ApiError } from "./errors";

// What every credential check shares; the middleware that resolves credentials and checks scopes
// is src/keys/auth.ts.

/** The configured keys: API_KEY may hold several, comma-separated, for rotation (docs/api.md, "Authentication"). */
export function apiKeys(secret: string | undefined): string[] {
  return (secret ?? "")
    .split(",")
    .map((k) => k.trim())
    .filter(Boolean);
}

/**
 * Whose a request's idempotency keys and per-key request budget are: a stored key by its id, an
 * API_KEY entry by its position (never the key itself); a session is the key it was signed in
 * with (docs/api.md, "Idempotency-Key").
 */
export function owner(cred: Credential): string {
  return cred.keyId !== null ? `id-${cred.keyId}` : `key-${cred.apiKeyIndex}`;
}

// The windows of wrangler.toml's [[ratelimits]] (docs/operations.md, "Rate limits"): a refused client may try
// again after at most one period.
const RETRY_AFTER = "60";

const unauthorized = (challenge: boolean) =>
  new ApiError(
    401,
    "missing or invalid credentials",
    undefined,
    challenge ? { "WWW-Authenticate": 'Basic realm="store"' } : undefined,
  );

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

export const tooMany = (what: string) =>
  new ApiError(429, `too many ${what}, retry later`, undefined, { "Retry-After": RETRY_AFTER });

/**
 * A failed authentication counts against the client's address (docs/operations.md, "Rate limits"). Over the
 * limit the answer is 429 instead of 401, so guessing keys stops at AUTH_FAILURES' rate. Only
 * failures pay for the check: a client with a valid key never waits on it.
 */
export async function failed(c: Context<AppEnv>, challenge = true): Promise<never> {
  if (!(await c.env.AUTH_FAILURES.limit({ key: clientAddress(c) })).success) throw tooMany("failed authentications");
  throw unauthorized(challenge && challenges(c));
}
