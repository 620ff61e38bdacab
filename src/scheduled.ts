import type { Bindings } from "./env";
import { expireUnpaidOrders } from "./orders/hold";
import { purgeIdempotencyKeys } from "./platform/idempotency";
import { purgeSessions } from "./sessions/store";
import { sweepEvents } from "./webhooks/sweep";

/** The cron of wrangler.toml: every job that keeps the store tidy, each bounded per run. */
export async function scheduled(env: Bindings, now = Date.now()) {
  await purgeIdempotencyKeys(env.DB, now);
  await expireUnpaidOrders(env, now);
  await sweepEvents(env, now);
  await purgeSessions(env.DB, now);
}
