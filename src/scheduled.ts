import type { Bindings } from "./env";

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** Cron (wrangler.toml): idempotency records are kept 24 hours (contract 3.3), then purged. */
export async function purgeIdempotencyKeys(env: Bindings, now = Date.now()) {
  await env.DB.prepare("DELETE FROM idempotency_keys WHERE created_at < ?1")
    .bind(now - IDEMPOTENCY_TTL_MS)
    .run();
}
