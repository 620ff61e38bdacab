import { z } from "zod";
import { opt, str } from "../platform/fields";
import { PUBLISHABLE_SCOPES, SCOPES } from "./scope-names";
import { ALL_SCOPES } from "./scopes";

// Wire schema of POST /v1/keys (docs/keys.md). What depends on the key's type (which scopes, whether
// origins) is checked after the shape by `keyProblems`.

export const MAX_KEYS = 100;
export const MAX_ORIGINS = 20;

/** An exact origin, as a browser sends it in `Origin`: scheme, host and port only, no wildcard. */
const origin = z.string({ error: "must be an origin" }).refine(
  (s) => {
    try {
      const u = new URL(s);
      return (u.protocol === "https:" || u.protocol === "http:") && u.origin === s;
    } catch {
      return false;
    }
  },
  {
    error: (iss) =>
      `must be an exact origin such as https://shop.example (no path, no wildcard), not ${JSON.stringify(iss.input)}`,
  },
);

// The .meta descriptions are the OpenAPI document's (src/keys/openapi.ts): what keyProblems checks.
export const keyCreate = z.object({
  name: str(100).meta({ minLength: 1 }),
  type: z.enum(["secret", "publishable"], { error: "must be secret or publishable" }).meta({
    description:
      "A publishable key reads the catalogue and creates orders: only a key holding products:read and orders:write creates one (403).",
  }),
  scopes: opt(
    z
      .array(z.string({ error: "must be a scope" }), { error: "must be an array of scopes" })
      .max(ALL_SCOPES.length)
      .refine((a) => new Set(a).size === a.length, { error: "must not repeat a scope" })
      .meta({
        items: { type: "string", enum: [...ALL_SCOPES] },
        uniqueItems: true,
        description: `Secret keys: at least one of ${SCOPES.join(", ")}, and ${PUBLISHABLE_SCOPES.join(", ")} to grant them to publishable keys. Publishable keys: ${PUBLISHABLE_SCOPES.join(", ")} or none. A key grants only scopes it holds (403).`,
      }),
  ),
  allowed_origins: opt(
    z
      .array(origin.meta({ description: "An exact origin: https://shop.example" }), {
        error: "must be an array of origins",
      })
      .max(MAX_ORIGINS, { error: `must list at most ${MAX_ORIGINS} origins` })
      .meta({ description: "Publishable keys: the browser origins CORS answers." }),
  ),
  expires_at: opt(
    z.iso.datetime({ offset: true, error: "must be an ISO 8601 date-time" }).meta({
      description:
        "In the future, and no later than the creating key's own expiry: required when that key expires (400).",
    }),
  ),
});
export type KeyInput = z.output<typeof keyCreate>;

/**
 * The errors of a shape-valid body that depend on the key's type, the time and the expiry of the
 * key creating it (`makerExpiresAt`; null for one that never expires): no key outlives its maker.
 */
export function keyProblems(k: KeyInput, now: number, makerExpiresAt: number | null = null): string[] {
  const errors: string[] = [];
  const allowed: readonly string[] = k.type === "secret" ? ALL_SCOPES : PUBLISHABLE_SCOPES;
  for (const s of k.scopes ?? []) {
    if (!allowed.includes(s))
      errors.push(`scopes: ${JSON.stringify(s)} is not a ${k.type} scope; one of ${allowed.join(", ")}`);
  }
  const own = (k.scopes ?? []).filter((s) => (SCOPES as readonly string[]).includes(s));
  if (k.type === "secret" && !own.length)
    errors.push(`scopes: a secret key needs at least one of ${SCOPES.join(", ")}`);
  if (k.type === "secret" && k.allowed_origins?.length) {
    errors.push("allowed_origins: only publishable keys are used from browsers");
  }
  const expires = k.expires_at === undefined ? undefined : Date.parse(k.expires_at);
  if (expires !== undefined && expires <= now) errors.push("expires_at: must be in the future");
  else if (makerExpiresAt !== null && (expires === undefined || expires > makerExpiresAt)) {
    const own = new Date(makerExpiresAt).toISOString();
    errors.push(
      expires === undefined
        ? `expires_at: required, and no later than this key's own expiry (${own})`
        : `expires_at: must be no later than this key's own expiry (${own})`,
    );
  }
  return errors;
}
