import { type DrizzleD1Database, drizzle } from "drizzle-orm/d1";

/**
 * Drizzle over one request's D1 session (docs/operations.md, "Read replicas"). `$client` runs the raw
 * statements (src/platform/d1.ts) in that same session; `$binding` is the D1 binding itself, the
 * stable key for what an isolate keeps across requests.
 */
export type DB = DrizzleD1Database & { $client: D1Database | D1DatabaseSession; $binding: D1Database };

// One Drizzle wrapper per D1 binding object for callers without a session (the cron): building it
// is cheap but not free, and a Worker isolate serves many requests with the same binding.
const cache = new WeakMap<D1Database, DB>();

export function getDb(d1: D1Database, session?: D1DatabaseSession): DB {
  if (session) return Object.assign(drizzle(session as unknown as D1Database), { $binding: d1 }) as DB;
  let db = cache.get(d1);
  if (!db) {
    db = Object.assign(drizzle(d1), { $binding: d1 }) as DB;
    cache.set(d1, db);
  }
  return db;
}
