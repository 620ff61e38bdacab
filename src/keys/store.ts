import type { DB } from "../db/client";
import { stmt } from "../platform/d1";
import { randomHex } from "../platform/hash";
import type { KeyInput } from "./schema";
import { MAX_KEYS } from "./schema";
import { PUBLISHABLE_PREFIX, SECRET_PREFIX, sha256 } from "./verify";

// Keys as data (docs/keys.md): created, listed and revoked here; verified in verify.ts.

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
/** Last use is kept to the minute: it is written at most once a minute per isolate anyway. */
const isoMinute = (ms: number | null) => (ms === null ? null : new Date(ms - (ms % 60_000)).toISOString());

/** A new key: its prefix, then 192 random bits as 48 hex digits (recognisable by secret scanners). */
function newKey(type: KeyInput["type"]): string {
  return (type === "secret" ? SECRET_PREFIX : PUBLISHABLE_PREFIX) + randomHex(24);
}

type Row = {
  id: number;
  name: string;
  type: string;
  prefix: string;
  scopes: string;
  allowed_origins: string;
  expires_at: number | null;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
};

function present(r: Row) {
  return {
    id: r.id,
    name: r.name,
    type: r.type,
    prefix: r.prefix,
    scopes: JSON.parse(r.scopes) as string[],
    allowed_origins: JSON.parse(r.allowed_origins) as string[],
    expires_at: iso(r.expires_at),
    created_at: iso(r.created_at),
    last_used_at: isoMinute(r.last_used_at),
    revoked: r.revoked_at !== null,
    revoked_at: iso(r.revoked_at),
  };
}

const COLUMNS = "id, name, type, prefix, scopes, allowed_origins, expires_at, created_at, last_used_at, revoked_at";

/** Creates a key; answers it with the key itself (shown this once), or null at MAX_KEYS live keys. */
export async function createKey(db: DB, k: KeyInput, now: number) {
  const key = newKey(k.type);
  const row = await stmt(
    db,
    `INSERT INTO api_keys (name, type, prefix, hash, scopes, allowed_origins, expires_at, created_at)
     SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8
     WHERE (SELECT count(*) FROM api_keys WHERE revoked_at IS NULL) < ${MAX_KEYS}
     RETURNING ${COLUMNS}`,
    k.name,
    k.type,
    key.slice(0, 11),
    await sha256(key),
    JSON.stringify(k.scopes ?? []),
    JSON.stringify(k.allowed_origins ?? []),
    k.expires_at === undefined ? null : Date.parse(k.expires_at),
    now,
  ).first<Row>();
  return row && { ...present(row), key };
}

export async function listKeys(db: DB) {
  const { results } = await stmt(db, `SELECT ${COLUMNS} FROM api_keys ORDER BY id`).all<Row>();
  return results.map(present);
}

/** Revokes a key (again is fine); false when there is no such key. */
export async function revokeKey(db: DB, id: number, now: number): Promise<boolean> {
  const row = await stmt(
    db,
    "UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?2) WHERE id = ?1 RETURNING id",
    id,
    now,
  ).first();
  return row !== null;
}
