import { eq, getTableColumns, sql } from "drizzle-orm";
import { apiKeys } from "../db/schema";
import { sqlNames } from "../platform/columns";
import { type DB, rowMapper, stmt } from "../platform/d1";
import { randomHex, sha256 } from "../platform/hash";
import { PUBLISHABLE_PREFIX, SECRET_PREFIX } from "./auth";
import { type KeyInput, MAX_KEYS } from "./schema";

// Keys as data (docs/keys.md): created, listed and revoked here; verified in auth.ts.

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
/** Last use is kept to the minute: it is written at most once a minute per isolate anyway. */
const isoMinute = (ms: number | null) => (ms === null ? null : new Date(ms - (ms % 60_000)).toISOString());

/** A new key: its prefix, then 192 random bits as 48 hex digits (recognisable by secret scanners). */
function newKey(type: KeyInput["type"]): string {
  return (type === "secret" ? SECRET_PREFIX : PUBLISHABLE_PREFIX) + randomHex(24);
}

const k = apiKeys;
const K = sqlNames(apiKeys);

/** What a key's answer shows: every column but its hash. */
const { hash: _hash, ...SHOWN } = getTableColumns(apiKeys);
type Row = Omit<typeof apiKeys.$inferSelect, "hash">;

function present(r: Row) {
  return {
    id: r.id,
    name: r.name,
    type: r.type,
    prefix: r.prefix,
    scopes: JSON.parse(r.scopes) as string[],
    allowed_origins: JSON.parse(r.allowedOrigins) as string[],
    expires_at: iso(r.expiresAt),
    created_at: iso(r.createdAt),
    last_used_at: isoMinute(r.lastUsedAt),
    revoked: r.revokedAt !== null,
    revoked_at: iso(r.revokedAt),
  };
}

const COLUMNS = Object.values(SHOWN)
  .map((c) => c.name)
  .join(", ");
const toRow = rowMapper(apiKeys);

// The bound on live keys is part of the INSERT, so concurrent creations cannot pass it together.
const INSERT = `
INSERT INTO ${K.$} (${K.name}, ${K.type}, ${K.prefix}, ${K.hash}, ${K.scopes}, ${K.allowedOrigins}, ${K.expiresAt}, ${K.createdAt})
SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8
WHERE (SELECT count(*) FROM ${K.$} WHERE ${K.revokedAt} IS NULL) < ${MAX_KEYS}
RETURNING ${COLUMNS}`;

/** Creates a key; answers it with the key itself (shown this once), or null at MAX_KEYS live keys. */
export async function createKey(db: DB, k: KeyInput, now: number) {
  const key = newKey(k.type);
  const row = await stmt(
    db,
    INSERT,
    k.name,
    k.type,
    key.slice(0, 11),
    await sha256(key),
    JSON.stringify(k.scopes ?? []),
    JSON.stringify(k.allowed_origins ?? []),
    k.expires_at === undefined ? null : Date.parse(k.expires_at),
    now,
  ).first();
  return row && { ...present(toRow(row)), key };
}

export async function listKeys(db: DB) {
  const rows = await db.select(SHOWN).from(k).orderBy(k.id).all();
  return rows.map(present);
}

/** Revokes a key (again is fine); false when there is no such key. */
export async function revokeKey(db: DB, id: number, now: number): Promise<boolean> {
  const row = await db
    .update(k)
    .set({ revokedAt: sql`coalesce(${k.revokedAt}, ${now})` })
    .where(eq(k.id, id))
    .returning({ id: k.id })
    .get();
  return row !== undefined;
}
