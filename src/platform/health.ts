import type { Context } from "hono";
import { LATEST_MIGRATION } from "../db/migrations";
import type { AppEnv } from "../env";
import { envelope } from "./errors";
import { timeZoneWarning } from "./timezone";

/** What a query against a database without this version's tables fails with (SQLite's words). */
export const isSchemaMissing = (message: string) => /no such (table|column)/i.test(message);

export const SCHEMA_NOT_APPLIED = "database schema is not applied: run the migrations";

/** What GET /health warns of when STORE_URL is unset (docs/products.md, "URL and slug"). */
export const STORE_URL_UNSET =
  'STORE_URL is not set: no product has a url ("" in the modelled dialect, null in ours); set the var to the storefront\'s product base URL';

/** Configuration that works but leaves something out: said by GET /health, the admin and the deploy. */
export function configWarnings(env: Pick<AppEnv["Bindings"], "STORE_URL" | "STORE_TIMEZONE">): string[] {
  const zone = timeZoneWarning(env);
  return [...((env.STORE_URL ?? "").trim() ? [] : [STORE_URL_UNSET]), ...(zone ? [zone] : [])];
}

/**
 * GET /health (docs/operations.md, "Health"): 200 only when the database answers and has this version's
 * latest migration applied, in one query; otherwise 503 naming the cause. A 200 lists the
 * configuration's warnings, if any (configWarnings).
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
  if (applied?.latest) {
    const warnings = configWarnings(c.env);
    return c.json(warnings.length ? { status: "ok" as const, warnings } : { status: "ok" as const });
  }
  const at = applied?.newest ? `at ${applied.newest}` : "empty";
  return c.json(
    envelope(503, `database schema is ${at}, this version needs ${LATEST_MIGRATION}: run the migrations`),
    503,
  );
}
