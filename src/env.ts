import type { DB } from "./db/client";
import type { Idem } from "./services/idempotency";

// Secrets are not in wrangler.toml, so `wrangler types` cannot see them: declared here.
export type Bindings = Env & { API_KEY?: string };

export type AppEnv = {
  Bindings: Bindings;
  Variables: { requestId: string; db: DB; body: unknown; idem?: Idem };
};
