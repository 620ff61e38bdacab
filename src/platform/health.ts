import type { Context } from "hono";
import { LATEST_MIGRATION } from "../db/migrations";
import type { AppEnv } from "../env";
import { envelope } from "./errors";

/** What a query against a database without this version's tables fails with (SQLite's words). */
export const isSchemaMissing = (message: string) => /no such (table|column)/i.test(message);

export const SCHEMA_NOT_APPLIED = "database schema is not applied: run the migrations";

/**
 * GET /health (docs/operations.md, "Health"): 200 only when the database answers and has this version's
 * latest migration applied, in one query; otherwise 503 naming the cause.
 */
export async function health(c: Context<AppEnv>) {
  let applied: { latest: string | null; newest: string | null } | null;
  try {
    applied = await c.env.DB.prepare(
      `SELECT (SELECT name FROM d1_migrations WHERE name = ?1) AS latest,
              (SELECT name FROM d1_migrations ORDER BY id DESC LIMIT 1) AS newest`,
    )
      .bind(LATEST_MIGRATION)
      .first();
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    if (isSchemaMissing(message)) return c.json(envelope(503, SCHEMA_NOT_APPLIED), 503);
    console.error(JSON.stringify({ level: "error", requestId: c.var.requestId, error: message }));
    return c.json(envelope(503, "the database is unavailable"), 503, { "Retry-After": "5" });
  }
  if (applied?.latest) return c.json({ status: "ok" as const });
  const at = applied?.newest ? `at ${applied.newest}` : "empty";
  return c.json(
    envelope(503, `database schema is ${at}, this version needs ${LATEST_MIGRATION}: run the migrations`),
    503,
  );
}
