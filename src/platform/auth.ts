import type { Context } from "hono";
import type { AppEnv } from "../env";
import { clientAddress } from "./client";
import { ApiError } from "./errors";

// What every credential check shares; the middleware that resolves credentials and checks scopes
// is src/keys/auth.ts.

/** The configured keys: API_KEY may hold several, comma-separated, for rotation (src/docs/api.md, "Authentication"). */
export function apiKeys(secret: string | undefined): string[] {
  return (secret ?? "")
    .split(",")
    .map((k) => k.trim())
    .filter(Boolean);
}

// The windows of wrangler.toml's [[ratelimits]] (src/docs/operations.md, "Rate limits"): a refused client may try
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
 * Whether a 401 may carry the Basic challenge. A browser answers one with its login dialog, even
 * for a script's fetch (which then hangs until the dialog is dismissed): so no challenge for a
 * script's request (Sec-Fetch-Mode other than navigate), nor for one with the admin's session
 * cookie (src/docs/admin.md, "Sessions"). curl, servers and SDKs send no Sec-Fetch-Mode.
 */
function challenges(c: Context<AppEnv>): boolean {
  const mode = c.req.header("sec-fetch-mode");
  return (mode === undefined || mode === "navigate") && !/(?:^|;\s*)__Host-session=/.test(c.req.header("cookie") ?? "");
}

export const tooMany = (what: string) =>
  new ApiError(429, `too many ${what}, retry later`, undefined, { "Retry-After": RETRY_AFTER });

/**
 * A failed authentication counts against the client's address (src/docs/operations.md, "Rate limits"). Over the
 * limit the answer is 429 instead of 401, so guessing keys stops at AUTH_FAILURES' rate. Only
 * failures pay for the check: a client with a valid key never waits on it.
 */
export async function failed(c: Context<AppEnv>, challenge = true): Promise<never> {
  if (!(await c.env.AUTH_FAILURES.limit({ key: clientAddress(c) })).success) throw tooMany("failed authentications");
  throw unauthorized(challenge && challenges(c));
}
