import type { DB } from "./db/client";

// Secrets are not in wrangler.toml, so `wrangler types` cannot see them: declared here.
export type Bindings = Env & { API_KEY?: string };

export type AppEnv = {
  Bindings: Bindings;
  Variables: { requestId: string; db: DB; body: unknown };
};
