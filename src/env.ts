import type { DB } from "./db/client";
import type { Idem } from "./platform/idempotency";

// Secrets are not in wrangler.toml, so `wrangler types` cannot see them: declared here.
export type Bindings = Env & { API_KEY?: string };

/** What a handler touched, for the request's log line (src/platform/log.ts). */
export type LogCounts = { products?: number; variants?: number; orders?: number };

export type AppEnv = {
  Bindings: Bindings;
  Variables: { requestId: string; db: DB; body: unknown; idem?: Idem; logCounts?: LogCounts };
};
