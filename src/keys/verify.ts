import type { Context } from "hono";
import { basicAuth } from "hono/basic-auth";
import { timingSafeEqual } from "hono/utils/buffer";
import { apiKeys as apiKeysTable } from "../db/schema";
import type { AppEnv, Credential } from "../env";
import { apiKeys } from "../platform/auth";
import { sqlNames } from "../platform/columns";
import { envelope } from "../platform/errors";
import { sha256 } from "../platform/hash";
import { sessionCookie, sessionCredential } from "../sessions/store";
import { bootstrapCredential } from "./scopes";

/**
 * How long an isolate trusts what it learned about a stored key: a revocation (or expiry of a
 * cached negative) takes effect everywhere within this bound, and at once in the isolate that
 * revoked it (docs/keys.md, "Revocation").
 */
export const VERIFY_TTL_MS = 60_000;
const MAX_CACHED = 1_000;

type Cached = { cred: Credential | null; until: number; hash: string };
// Per isolate, keyed by the key's SHA-256: the happy path of a known key costs no D1 query.
const cache = new Map<string, Cached>();

export const SECRET_PREFIX = "sk_";
export const PUBLISHABLE_PREFIX = "pk_";

/** Forgets a key at once in this isolate (after its revocation here). */
export function forgetKey(keyId: number) {
  for (const [k, v] of cache) if (v.cred?.keyId === keyId) cache.delete(k);
}

// The row as the credential it is, its JSON arrays still text.
type KeyRow = Pick<Credential, "keyId" | "name" | "type" | "expiresAt"> & {
  hash: string;
  scopes: string;
  allowedOrigins: string;
};

// One statement both finds a live key and records its use (at most once per TTL per isolate).
const K = sqlNames(apiKeysTable);
const LOOKUP = `UPDATE ${K.$} SET ${K.lastUsedAt} = ?2 WHERE ${K.hash} = ?1 AND ${K.revokedAt} IS NULL
  RETURNING ${K.id} AS keyId, ${K.name} AS name, ${K.type} AS type, ${K.scopes} AS scopes,
    ${K.allowedOrigins} AS allowedOrigins, ${K.expiresAt} AS expiresAt, ${K.hash} AS hash`;

async function storedKey(c: Context<AppEnv>, key: string, now: number): Promise<Credential | null> {
  const hash = await sha256(key);
  let hit = cache.get(hash);
  if (!hit || hit.until <= now) {
    const row = await c.env.DB.prepare(LOOKUP).bind(hash, now).first<KeyRow>();
    const { hash: _hash, ...fields } = row ?? {};
    const cred: Credential | null = row && {
      ...(fields as Omit<KeyRow, "hash">),
      scopes: JSON.parse(row.scopes),
      allowedOrigins: JSON.parse(row.allowedOrigins),
      apiKeyIndex: null,
    };
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value as string);
    hit = { cred, until: now + VERIFY_TTL_MS, hash: row?.hash ?? "" };
    cache.set(hash, hit);
  }
  // The index found the row by hash; compare it once more without early exit all the same.
  if (!hit.cred || !(await timingSafeEqual(hit.hash, hash))) return null;
  if (hit.cred.expiresAt !== null && hit.cred.expiresAt <= now) return null;
  return hit.cred;
}

/**
 * A secret key handed over as such (the sign-in body of POST /v1/sessions, or a Basic or Bearer
 * header's key): a live stored secret key, or an entry of the bootstrap API_KEY.
 */
export async function verifySecretKey(c: Context<AppEnv>, key: string, now = Date.now()): Promise<Credential | null> {
  if (key.startsWith(SECRET_PREFIX)) {
    const cred = await storedKey(c, key, now);
    if (cred?.type === "secret") return cred;
  }
  // Compare against every entry of API_KEY, without stopping early, so timing says nothing about which.
  const equal = await Promise.all(apiKeys(c.env.API_KEY).map((k) => timingSafeEqual(k, key)));
  const index = equal.indexOf(true);
  return index < 0 ? null : bootstrapCredential(index);
}

/**
 * THE credential resolution of every /v1 request (docs/keys.md): who is calling, or null.
 * `X-Publishable-Key: pk_...`; else `Authorization: Bearer sk_...`; else the admin's session
 * cookie (docs/admin.md, "Sessions") when the request carries no key header. Any other
 * Authorization header is Basic's: "basic" leaves it to `basic` below.
 */
export async function resolveCredential(c: Context<AppEnv>, now = Date.now()): Promise<Credential | null | "basic"> {
  const publishable = c.req.header("x-publishable-key");
  // An empty header is no header (some clients cannot leave a default one out).
  const authorization = c.req.header("authorization") || undefined;
  if (publishable !== undefined) {
    if (authorization !== undefined || !publishable.startsWith(PUBLISHABLE_PREFIX)) return null;
    const cred = await storedKey(c, publishable, now);
    return cred?.type === "publishable" ? cred : null;
  }
  if (authorization === undefined) {
    const session = sessionCookie(c);
    return session === undefined ? null : sessionCredential(c, session, now);
  }
  const bearer = /^bearer +(\S+) *$/i.exec(authorization)?.[1];
  if (bearer === undefined) return "basic";
  // The bootstrap key is Basic only, as it always was.
  if (!bearer.startsWith(SECRET_PREFIX)) return null;
  const cred = await verifySecretKey(c, bearer, now);
  return cred?.keyId === null ? null : cred;
}

/**
 * Basic authentication (docs/api.md, "Authentication"): Hono's basicAuth parses the header, and
 * the key is both user name and password, an entry of API_KEY or a stored secret key, compared in
 * constant time. A verified key's credential is set on the context for the auth middleware to
 * admit; a refusal is the middleware's HTTPException, which src/keys/auth.ts answers as every
 * failed authentication is answered (counted, the envelope, the challenge rules).
 */
export const basic = basicAuth({
  realm: "store",
  verifyUser: async (user, password, c) => {
    // Both are what the client sent: comparing them tells it nothing it does not know.
    if (!user || user !== password) return false;
    const cred = await verifySecretKey(c, user);
    if (cred) c.set("credential", cred);
    return cred !== null;
  },
  invalidUserMessage: envelope(401, "missing or invalid credentials"),
});
