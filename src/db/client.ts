import { type DrizzleD1Database, drizzle } from "drizzle-orm/d1";

export type DB = DrizzleD1Database & { $client: D1Database };

// One Drizzle wrapper per D1 binding object: building it is cheap but not free, and a Worker
// isolate serves many requests with the same binding.
const cache = new WeakMap<D1Database, DB>();

export function getDb(d1: D1Database): DB {
  let db = cache.get(d1);
  if (!db) {
    db = drizzle(d1) as DB;
    cache.set(d1, db);
  }
  return db;
}
