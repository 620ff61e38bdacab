import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import type { DB } from "../db/client";
import type { AppEnv, Credential } from "../env";
import { ALL_SCOPES } from "../keys/scopes";
import { apiKeys } from "../platform/auth";
import { stmt } from "../platform/d1";
import { ApiError } from "../platform/errors";
import { randomHex, sha256 } from "../platform/hash";

// The admin's browser sessions (src/docs/admin.md, "Sessions"): an HttpOnly cookie that stands for
// the secret key signed in with, so the key itself never stays in the browser. Looked up in D1 on
// every request that carries it, so a sign-out or a key's revocation ends it at once.

/** `__Host-`: the browser keeps it only when Secure, Path=/ and no Domain, so no subdomain can set it. */
export const SESSION_COOKIE = "__Host-session";
/** A session lasts this long from sign-in, however busy (then the merchant signs in again). */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
export const CSRF_HEADER = "x-csrf-token";

const SESSION_ID = /^[0-9a-f]{64}$/;
const ATTRIBUTES = "Path=/; HttpOnly; Secure; SameSite=Strict";

export const sessionSetCookie = (id: string) =>
  `${SESSION_COOKIE}=${id}; Max-Age=${SESSION_TTL_MS / 1000}; ${ATTRIBUTES}`;
export const sessionClearCookie = () => `${SESSION_COOKIE}=; Max-Age=0; ${ATTRIBUTES}`;

/** The session cookie's value, when the request carries one (well-formed or not). */
export const sessionCookie = (c: Context<AppEnv>): string | undefined => getCookie(c, SESSION_COOKIE);

type Row = {
  id: string;
  key_id: number | null;
  key_hash: string | null;
  csrf: string;
  name: string | null;
  scopes: string | null;
  key_expires_at: number | null;
};

// A live session of a live secret key: revoked or expired keys end their sessions at once.
const LOOKUP = `SELECT s.id, s.key_id, s.key_hash, s.csrf, k.name, k.scopes, k.expires_at AS key_expires_at
  FROM sessions AS s LEFT JOIN api_keys AS k ON k.id = s.key_id
  WHERE s.id = ?1 AND s.revoked_at IS NULL AND s.expires_at > ?2
    AND (s.key_id IS NULL OR (k.type = 'secret' AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > ?2)))`;

/** The credential a session cookie stands for, or null when it is unknown, ended or its key is gone. */
export async function sessionCredential(c: Context<AppEnv>, cookie: string, now: number): Promise<Credential | null> {
  if (!SESSION_ID.test(cookie)) return null;
  const row = await c.env.DB.prepare(LOOKUP)
    .bind(await sha256(cookie), now)
    .first<Row>();
  if (!row) return null;
  const session = { id: row.id, csrf: row.csrf };
  if (row.key_id !== null) {
    return {
      keyId: row.key_id,
      name: row.name ?? "",
      type: "secret",
      scopes: JSON.parse(row.scopes ?? "[]"),
      allowedOrigins: [],
      expiresAt: row.key_expires_at,
      session,
    };
  }
  // The bootstrap key's session lives only while that entry is still in API_KEY (rotation ends it).
  const configured = await Promise.all(apiKeys(c.env.API_KEY).map(sha256));
  if (!configured.includes(row.key_hash ?? "")) return null;
  return {
    keyId: null,
    name: "API_KEY",
    type: "secret",
    scopes: ALL_SCOPES,
    allowedOrigins: [],
    expiresAt: null,
    session,
  };
}

/** 403 when the browser says the request comes from another site's page. */
export function checkOrigin(c: Context<AppEnv>) {
  const origin = c.req.header("origin");
  if (origin !== undefined && origin !== new URL(c.req.url).origin) {
    throw new ApiError(403, `a session may not write from origin ${origin}`);
  }
}

/**
 * A write made with the session cookie must prove it comes from the admin's own page: the
 * session's CSRF token in X-CSRF-Token, and, when the browser says where it comes from, this origin.
 */
export async function checkSessionWrite(c: Context<AppEnv>, session: { csrf: string }) {
  checkOrigin(c);
  const token = c.req.header(CSRF_HEADER);
  if (!token) throw new ApiError(403, "a write with a session needs its X-CSRF-Token header");
  if ((await sha256(token)) !== session.csrf) throw new ApiError(403, "X-CSRF-Token does not match the session");
}

/** Opens a session for a verified secret key; answers the cookie's value and the CSRF token (shown once). */
export async function createSession(db: DB, key: { keyId: number | null; bootstrap?: string }, now: number) {
  const id = randomHex(32);
  const csrf = randomHex(32);
  const expiresAt = now + SESSION_TTL_MS;
  await stmt(
    db,
    `INSERT INTO sessions (id, key_id, key_hash, csrf, created_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)`,
    await sha256(id),
    key.keyId,
    key.keyId === null ? await sha256(key.bootstrap ?? "") : null,
    await sha256(csrf),
    now,
    expiresAt,
  ).run();
  return { id, csrf, expiresAt };
}

/** Ends a session at once (sign-out). */
export async function revokeSession(db: DB, idHash: string, now: number) {
  await stmt(db, "UPDATE sessions SET revoked_at = coalesce(revoked_at, ?2) WHERE id = ?1", idHash, now).run();
}

/** The cron's part: sessions ended over a day ago are forgotten. */
export async function purgeSessions(d1: D1Database, now: number) {
  await d1
    .prepare("DELETE FROM sessions WHERE expires_at < ?1 OR revoked_at < ?1")
    .bind(now - 86_400_000)
    .run();
}
