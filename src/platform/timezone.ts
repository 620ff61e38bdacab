import type { AppEnv } from "../env";

// STORE_TIMEZONE (docs/operations.md, "Configuration"): the IANA zone whose calendar days the
// admin counts in. A name Intl does not know falls back to UTC rather than failing the Worker:
// orders are stored in UTC and nothing but the admin's day boundaries depends on it, so GET
// /health (and with it the admin's banner) warns instead.

/**
 * The zone's canonical name, or undefined when `name` is not an IANA time zone (Intl also takes
 * bare offsets such as "+01:00", which have no summer time and are refused).
 */
function canonical(name: string): string | undefined {
  if (/^[+-]/.test(name)) return undefined;
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

type Env = Pick<AppEnv["Bindings"], "STORE_TIMEZONE">;
const configured = (env: Env) => (env.STORE_TIMEZONE ?? "").trim();

/** The store's time zone: STORE_TIMEZONE when it names one, else UTC. */
export const storeTimeZone = (env: Env): string => canonical(configured(env) || "UTC") ?? "UTC";

/** GET /health's warning when STORE_TIMEZONE is set to something that is not a time zone. */
export function timeZoneWarning(env: Env): string | undefined {
  const name = configured(env);
  if (!name || canonical(name)) return undefined;
  return `STORE_TIMEZONE "${name}" is not an IANA time zone (such as Europe/Stockholm): the admin counts days in UTC until it is`;
}
