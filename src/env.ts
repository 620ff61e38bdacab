import type { DB } from "./platform/d1";
import type { Idem } from "./platform/idempotency";

// The optional vars are not in wrangler.toml, so `wrangler types` cannot see them: declared here
// (docs/operations.md, "Configuration"). wrangler types the vars it sees by their value ("SEK"); a store sets
// its own currency, and API_KEY may be missing (the service then fails closed).
export type Bindings = Omit<
  Env,
  | "DEFAULT_CURRENCY"
  | "API_KEY"
  | "STORE_URL"
  | "STOREFRONT_MAX_LINE_QTY"
  | "STOREFRONT_MAX_HELD_UNITS"
  | "STORE_TIMEZONE"
> & {
  DEFAULT_CURRENCY: string;
  /** Units of one item a storefront order may take (docs/storefront.md, "Storefront orders"); unset: 50. */
  STOREFRONT_MAX_LINE_QTY?: string;
  /** Units the unpaid storefront orders from one client address may hold together; unset: 200. */
  STOREFRONT_MAX_HELD_UNITS?: string;
  /** The store's IANA time zone (src/platform/timezone.ts); unset or invalid: UTC. */
  STORE_TIMEZONE?: string;
  /** The storefront's base URL for product urls (docs/products.md, "Categories, URLs and images"); "" or unset: none. */
  STORE_URL?: string;
  API_KEY?: string;
  /** Minutes an unpaid order holds its stock before the scheduled job cancels it; unset: forever. */
  UNPAID_ORDER_HOLD_MINUTES?: string;
  /** Minutes an unpaid order made with a publishable key holds its stock; unset: 60. */
  STOREFRONT_HOLD_MINUTES?: string;
  /** Days an order's token reads it back with its publishable key; unset: 30. */
  ORDER_TOKEN_DAYS?: string;
  /** "true": webhook URLs may be http and local or private hosts (local development only). */
  ALLOW_LOCAL_WEBHOOKS?: string;
  /**
   * "true" under local development (`npm run dev` sets it): CF-Connecting-IP is not Cloudflare's
   * there, so per-client limits share one bucket (src/platform/client.ts).
   */
  LOCAL_DEV?: string;
  /** Minutes an admin session may go unused before it ends (default 30; docs/admin.md, "Sessions"). */
  SESSION_IDLE_MINUTES?: string;
  /** "true": the KEY_REQUESTS rate limit applies per API key. */
  RATE_LIMIT_PER_KEY?: string;
};

/**
 * Who made a request (src/keys/auth.ts): a stored key, or the bootstrap API_KEY (keyId null,
 * every scope). Scopes are strings so that src/env.ts imports no resource.
 */
export type Credential = {
  keyId: number | null;
  name: string;
  type: "secret" | "publishable";
  scopes: readonly string[];
  allowedOrigins: readonly string[];
  expiresAt: number | null;
  /**
   * The position in API_KEY of the bootstrap key this credential is, or (a session) was signed
   * in with; null for a stored key. With keyId it names whose idempotency keys and request
   * budget a request uses (src/platform/idempotency.ts, `owner`), without the key itself.
   */
  apiKeyIndex: number | null;
  /**
   * Set when the credential is the admin's session cookie (src/sessions/store.ts): the SHA-256 of
   * its id and of its CSRF token, which every write must send (docs/admin.md, "Sessions"); the
   * SHA-256 of the API_KEY entry it stands for (null for a stored key); when it ends, absolutely
   * and when idle from now on.
   */
  session?: { id: string; csrf: string; keyHash: string | null; expiresAt: number; idleExpiresAt: number };
};

/** What a handler touched, for the request's log line (src/keys/auth.ts). */
export type LogCounts = { products?: number; variants?: number; orders?: number };

export type AppEnv = {
  Bindings: Bindings;
  Variables: {
    requestId: string;
    credential?: Credential;
    db: DB;
    body: unknown;
    idem?: Idem;
    logCounts?: LogCounts;
    /** The answer is streamed (src/platform/stream.ts): the edge cache does not keep it. */
    streamed?: true;
    /** The write changed nothing a catalogue read shows: the edge's version entry stays (src/products/version.ts). */
    catalogKept?: true;
  };
};
