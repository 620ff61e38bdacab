import { and, eq, isNull, sql } from "drizzle-orm";
import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import { apiKeys as apiKeysTable, sessions } from "../db/schema";
import type { AppEnv, Credential } from "../env";
// ../keys/auth.ts imports this module too: each uses the other only inside functions, never at load.
import { apiKeys, bootstrapCredential } from "../keys/auth";
import { sqlNames } from "../platform/columns";
import { type DB, stmt } from "../platform/d1";
import { ApiError } from "../platform/errors";
import { randomHex, sha256 } from "../platform/hash";

// The admin's browser sessions (docs/admin.md, "Sessions"): an HttpOnly cookie standing for the
// secret key, so the key never stays in the browser, looked up on every request so that a sign-out
// or a key's revocation ends it at once.

/** `__Host-`: the browser keeps it only when Secure, Path=/ and no Domain, so no subdomain can set it. */
export const SESSION_COOKIE = "__Host-session";
/** A session lasts this long from sign-in, however busy (then the merchant signs in again). */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
/** A session unused this long has ended (SESSION_IDLE_MINUTES overrides it). */
export const SESSION_IDLE_MINUTES = 30;
/** The last use is recorded at most this often, so a busy admin's reads are not each a write. */
const SEEN_EVERY_MS = 60_000;
const MAX_USER_AGENT = 200;

/** The idle timeout in milliseconds: SESSION_IDLE_MINUTES when a whole number of minutes from 1, else 30. */
export function idleMs(env: { SESSION_IDLE_MINUTES?: string }): number {
  const n = Number(env.SESSION_IDLE_MINUTES);
  return (Number.isInteger(n) && n >= 1 ? n : SESSION_IDLE_MINUTES) * 60_000;
}

/** The session's CSRF token, derived from its cookie (whoever can read it holds the cookie), the same in every tab. */
export const csrfToken = (cookie: string) => sha256(`csrf:${cookie}`);
export const CSRF_HEADER = "x-csrf-token";

const SESSION_ID = /^[0-9a-f]{64}$/;
type SessionRow = typeof sessions.$inferSelect;
const ATTRIBUTES = "Path=/; HttpOnly; Secure; SameSite=Strict";

export const sessionSetCookie = (id: string) =>
  `${SESSION_COOKIE}=${id}; Max-Age=${SESSION_TTL_MS / 1000}; ${ATTRIBUTES}`;
export const sessionClearCookie = () => `${SESSION_COOKIE}=; Max-Age=0; ${ATTRIBUTES}`;

/** The session cookie's value, when the request carries one (well-formed or not). */
export const sessionCookie = (c: Context<AppEnv>): string | undefined => getCookie(c, SESSION_COOKIE);

/** A LOOKUP row: the session's columns (as Drizzle names them), its last use, and its stored key's. */
type Row = Pick<SessionRow, "id" | "keyId" | "keyHash" | "csrf" | "expiresAt"> & {
  seen: number;
  name: string | null;
  scopes: string | null;
  keyExpiresAt: number | null;
};

// A live session of a live secret key: revoked or expired keys end their sessions at once.
const S = sqlNames(sessions);
const K = sqlNames(apiKeysTable);
const SEEN = `coalesce(s.${S.lastSeenAt}, s.${S.createdAt})`;
const LIVE = `s.${S.revokedAt} IS NULL AND s.${S.expiresAt} > ?2 AND ${SEEN} > ?2 - ?3`;
const LOOKUP = `SELECT s.${S.id} AS id, s.${S.keyId} AS keyId, s.${S.keyHash} AS keyHash, s.${S.csrf} AS csrf,
    s.${S.expiresAt} AS expiresAt, ${SEEN} AS seen,
    k.${K.name} AS name, k.${K.scopes} AS scopes, k.${K.expiresAt} AS keyExpiresAt
  FROM ${S.$} AS s LEFT JOIN ${K.$} AS k ON k.${K.id} = s.${S.keyId}
  WHERE s.${S.id} = ?1 AND ${LIVE}
    AND (s.${S.keyId} IS NULL OR (k.${K.type} = 'secret' AND k.${K.revokedAt} IS NULL AND (k.${K.expiresAt} IS NULL OR k.${K.expiresAt} > ?2)))`;
const SEEN_NOW = `UPDATE ${S.$} SET ${S.lastSeenAt} = ?2 WHERE ${S.id} = ?1`;

/** The credential a session cookie stands for, or null when it is unknown, ended or its key is gone. */
export async function sessionCredential(c: Context<AppEnv>, cookie: string, now: number): Promise<Credential | null> {
  if (!SESSION_ID.test(cookie)) return null;
  const idle = idleMs(c.env);
  const row = await c.env.DB.prepare(LOOKUP)
    .bind(await sha256(cookie), now, idle)
    .first<Row>();
  if (!row) return null;
  const stale = now - row.seen >= SEEN_EVERY_MS;
  if (stale) await c.env.DB.prepare(SEEN_NOW).bind(row.id, now).run();
  const { id, csrf, keyHash, expiresAt } = row;
  const session = { id, csrf, keyHash, expiresAt, idleExpiresAt: (stale ? now : row.seen) + idle };
  if (row.keyId !== null) {
    return {
      keyId: row.keyId,
      name: row.name ?? "",
      type: "secret",
      scopes: JSON.parse(row.scopes ?? "[]"),
      allowedOrigins: [],
      expiresAt: row.keyExpiresAt,
      apiKeyIndex: null,
      session,
    };
  }
  // The bootstrap key's session lives only while that entry is still in API_KEY (rotation ends it).
  const configured = await Promise.all(apiKeys(c.env.API_KEY).map(sha256));
  const index = configured.indexOf(row.keyHash ?? "");
  if (index < 0) return null;
  return { ...bootstrapCredential(index), session };
}

/** 403 when the browser says the request comes from another site's page. */
export function checkOrigin(c: Context<AppEnv>) {
  const origin = c.req.header("origin");
  if (origin !== undefined && origin !== new URL(c.req.url).origin) {
    throw new ApiError(403, `a session may not write from origin ${origin}`);
  }
}

/** A write with the session cookie must prove it comes from the admin's page: the CSRF token, and this origin. */
export async function checkSessionWrite(c: Context<AppEnv>, session: { csrf: string }) {
  checkOrigin(c);
  const token = c.req.header(CSRF_HEADER);
  if (!token) throw new ApiError(403, "a write with a session needs its X-CSRF-Token header");
  if ((await sha256(token)) !== session.csrf) throw new ApiError(403, "X-CSRF-Token does not match the session");
}

/**
 * Opens a session for a verified secret key; answers the cookie's value and the CSRF token. The
 * browser's earlier session (`replaces`) ends in the same batch: its cookie is overwritten.
 */
export async function createSession(
  db: DB,
  key: { keyId: number | null; bootstrap?: string },
  now: number,
  opts: { userAgent?: string; replaces?: string } = {},
) {
  const id = randomHex(32);
  const csrf = await csrfToken(id);
  const expiresAt = now + SESSION_TTL_MS;
  const insert = stmt(
    db,
    `INSERT INTO ${S.$} (${S.id}, ${S.keyId}, ${S.keyHash}, ${S.csrf}, ${S.createdAt}, ${S.expiresAt}, ${S.lastSeenAt}, ${S.userAgent})
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?5, ?7)`,
    await sha256(id),
    key.keyId,
    key.keyId === null ? await sha256(key.bootstrap ?? "") : null,
    await sha256(csrf),
    now,
    expiresAt,
    opts.userAgent?.slice(0, MAX_USER_AGENT) ?? null,
  );
  const replaced = opts.replaces && SESSION_ID.test(opts.replaces) ? await sha256(opts.replaces) : undefined;
  await db.$client.batch(replaced ? [revokeStatement(db, replaced, now), insert] : [insert]);
  return { id, csrf, expiresAt };
}

const revokeStatement = (db: DB, idHash: string, now: number) =>
  stmt(db, `UPDATE ${S.$} SET ${S.revokedAt} = ?2 WHERE ${S.id} = ?1 AND ${S.revokedAt} IS NULL`, idHash, now);

/** Ends a session at once (sign-out, or the keys page's end button); answers whether it was live. */
export async function revokeSession(db: DB, idHash: string, now: number): Promise<boolean> {
  const r = await revokeStatement(db, idHash, now).run();
  return r.meta.changes > 0;
}

/** Ends every session of one key (sign-out everywhere): a stored key by id, API_KEY by its entry's hash. */
export async function revokeKeySessions(db: DB, key: { keyId: number | null; keyHash: string | null }, now: number) {
  const s = sessions;
  const ofKey =
    key.keyId === null
      ? and(isNull(s.keyId), key.keyHash === null ? sql`0` : eq(s.keyHash, key.keyHash))
      : eq(s.keyId, key.keyId);
  const r = await db
    .update(s)
    .set({ revokedAt: now })
    .where(and(isNull(s.revokedAt), ofKey))
    .run();
  return r.meta.changes;
}

/** The live sessions of every key, newest first, as GET /v1/sessions lists them. */
export async function listSessions(db: DB, now: number, idle: number, current?: string) {
  const { results } = await stmt(
    db,
    `SELECT s.${S.id} AS id, s.${S.keyId} AS keyId, CASE WHEN s.${S.keyId} IS NULL THEN 'API_KEY' ELSE k.${K.name} END AS keyName,
       s.${S.createdAt} AS createdAt, ${SEEN} AS seen, s.${S.expiresAt} AS expiresAt, s.${S.userAgent} AS userAgent
     FROM ${S.$} AS s LEFT JOIN ${K.$} AS k ON k.${K.id} = s.${S.keyId}
     WHERE ${LIVE} AND (s.${S.keyId} IS NULL OR k.${K.revokedAt} IS NULL)
     ORDER BY s.${S.createdAt} DESC LIMIT 500`,
    null,
    now,
    idle,
  ).all<
    Pick<SessionRow, "id" | "keyId" | "createdAt" | "expiresAt" | "userAgent"> & { keyName: string; seen: number }
  >();
  const iso = (ms: number) => new Date(ms).toISOString();
  return results.map((r) => ({
    id: r.id,
    key: { id: r.keyId, name: r.keyName },
    created_at: iso(r.createdAt),
    last_seen_at: iso(r.seen),
    expires_at: iso(Math.min(r.expiresAt, r.seen + idle)),
    user_agent: r.userAgent,
    current: r.id === current,
  }));
}

/** The cron's part: sessions ended over a day ago are forgotten. */
export async function purgeSessions(d1: D1Database, now: number) {
  await d1
    .prepare(`DELETE FROM ${S.$} WHERE ${S.expiresAt} < ?1 OR ${S.revokedAt} < ?1`)
    .bind(now - 86_400_000)
    .run();
}
