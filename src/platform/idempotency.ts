import { eq } from "drizzle-orm";
import { createMiddleware } from "hono/factory";
import { idempotencyKeys, orders } from "../db/schema";
import type { AppEnv, Credential } from "../env";
import { sqlNames } from "./columns";
import { type DB, runBatch, stmt } from "./d1";
import { ApiError } from "./errors";
import { sha256 } from "./hash";

// Idempotent retries (docs/security.md, "Guarantees"). The record is written in the same D1 batch as the
// effect, first in the batch, so that a second request with the key fails on its primary key
// before anything else runs, rolls back whole, and then reads the winner's record. The stored body
// is the first answer; rows created by the batch are referred to by the token the Worker gave them
// ({"$order": token}), because their ids exist only once the batch ran, and a feature may store a
// snapshot of its rows taken inside the batch (snapshotStatement) to build its answer from. A
// replay answers what the first request answered, never the rows' current state.

/**
 * Whose a request's idempotency keys and per-key request budget are: a stored key by its id, an
 * API_KEY entry by its position (never the key itself); a session is the key it was signed in
 * with (docs/api.md, "Idempotency-Key").
 */
export function owner(cred: Credential): string {
  return cred.keyId !== null ? `id-${cred.keyId}` : `key-${cred.apiKeyIndex}`;
}

/**
 * `key` is the client's Idempotency-Key inside its credential's namespace (`id-3:<key>`,
 * `key-0:<key>`: `owner`), so the same key from two credentials is two
 * records and a replay answers only the credential that made the first request; every statement
 * of the record, the lookup of a lost race's winner included, uses this one.
 */
export type Idem = { key: string; hash: string };

const I = sqlNames(idempotencyKeys);
const O = sqlNames(orders);

/** Records are kept 24 hours (docs/security.md, "Guarantees"), then purged by the scheduled job. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export async function purgeIdempotencyKeys(d1: D1Database, now = Date.now()) {
  await d1
    .prepare(`DELETE FROM ${I.$} WHERE ${I.createdAt} < ?1`)
    .bind(now - IDEMPOTENCY_TTL_MS)
    .run();
}

/** Thrown by a service whose write batch lost the race for its idempotency key. */
export class IdempotencyConflict extends Error {
  constructor(readonly idem: Idem) {
    super("idempotency key taken");
  }
}

const KEY = /^[\x21-\x7e][\x20-\x7e]{0,254}$/;

// SQLite's words for a second claim of a key: "UNIQUE constraint failed: idempotency_keys.key".
const CONFLICT = `${I.$}.${I.key}`;

export function isIdempotencyConflict(e: unknown): boolean {
  for (let x = e; x instanceof Error; x = x.cause) if (x.message.includes(CONFLICT)) return true;
  return false;
}

/** Keys whose request wrote (or tried to write) its record; the others never reached a write. */
const claimed = new WeakSet<Idem>();

/** Builds the statements that record a request's answer, given its planned item outcomes. */
export type Claim<P> = (planned: P) => D1PreparedStatement[];

/**
 * Runs a write batch with the claim's statements first. Returns the results of `stmts` only; a
 * lost race for the key becomes IdempotencyConflict (the batch was rolled back whole).
 */
export async function runClaimed(
  db: DB,
  idem: Idem | undefined,
  head: D1PreparedStatement[],
  stmts: D1PreparedStatement[],
) {
  if (idem && head.length) claimed.add(idem);
  try {
    return (await runBatch(db, [...head, ...stmts])).slice(head.length);
  } catch (e) {
    if (idem && isIdempotencyConflict(e)) throw new IdempotencyConflict(idem);
    throw e;
  }
}

/** Statements that claim the key: an expired record of the same key is replaced, a live one fails. */
export function recordStatements(db: DB, idem: Idem, status: number, template: unknown, now: number) {
  return [
    stmt(db, `DELETE FROM ${I.$} WHERE ${I.key} = ?1 AND ${I.createdAt} < ?2`, idem.key, now - IDEMPOTENCY_TTL_MS),
    stmt(
      db,
      `INSERT INTO ${I.$} (${I.key}, ${I.requestHash}, ${I.status}, ${I.body}, ${I.createdAt}) VALUES (?1, ?2, ?3, ?4, ?5)`,
      idem.key,
      idem.hash,
      status,
      JSON.stringify(template),
      now,
    ),
  ];
}

/** Completes a record claimed with a provisional answer by the same request. */
export function completeStatements(db: DB, idem: Idem, status: number, template: unknown) {
  return [
    stmt(
      db,
      `UPDATE ${I.$} SET ${I.status} = ?3, ${I.body} = ?4 WHERE ${I.key} = ?1 AND ${I.requestHash} = ?2`,
      idem.key,
      idem.hash,
      status,
      JSON.stringify(template),
    ),
  ];
}

/**
 * The last statement of a keyed write batch whose answer shows rows as they are after the batch:
 * it stores, next to the recorded answer, `snapshot` (a SELECT of one JSON value, built by the
 * feature with `?1..?n` for `params`) as that value was inside the batch. A replay then builds the
 * answer from that snapshot, never from the rows' current state. Runs after the claim, in the same
 * batch, so it commits exactly when the effect does. A snapshot that would make the record larger
 * than D1 stores in one row is left out; that replay reads the current rows instead (docs/orders.md,
 * "Idempotency").
 */
export function snapshotStatement(db: DB, idem: Idem, snapshot: string, ...params: unknown[]) {
  const key = params.length + 1;
  return stmt(
    db,
    `UPDATE ${I.$} SET ${I.body} = (
       SELECT iif(length(CAST(s AS BLOB)) + length(CAST(${I.body} AS BLOB)) > ${MAX_SNAPSHOT_BYTES}, ${I.body},
         json_object('$answer', json(${I.body}), '$snapshot', json(s)))
       FROM (SELECT (${snapshot}) AS s))
     WHERE ${I.key} = ?${key} AND ${I.requestHash} = ?${key + 1}`,
    ...params,
    idem.key,
    idem.hash,
  );
}

/** Below D1's 2,000,000 bytes per row, with room for the key and hash. */
const MAX_SNAPSHOT_BYTES = 1_900_000;

/**
 * Completes a stored answer for a replay: `template` is the recorded answer, `snapshot` what
 * snapshotStatement stored with it (undefined when none was). A feature whose answers refer to
 * rows by reference passes one to idempotencyWith; the platform itself knows no resource.
 */
export type Resolver = (db: DB, template: unknown, snapshot: unknown) => Promise<unknown>;

function collectOrders(v: unknown, refs: Set<string>) {
  if (Array.isArray(v)) for (const x of v) collectOrders(x, refs);
  else if (v && typeof v === "object") {
    const o = v as Record<string, unknown>;
    if (typeof o.$order === "string") refs.add(o.$order);
    else for (const x of Object.values(o)) collectOrders(x, refs);
  }
}

function fillOrders(v: unknown, orders: Map<string, number>): unknown {
  if (Array.isArray(v)) return v.map((x) => fillOrders(x, orders));
  if (v && typeof v === "object") {
    const o = v as Record<string, unknown>;
    if (typeof o.$order === "string") return orders.get(o.$order) ?? null;
    return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, fillOrders(x, orders)]));
  }
  return v;
}

/**
 * The stored answer for `idem`, with its references resolved; undefined when the key has no
 * record; 422 when it was recorded for another body. An order reference becomes the order's id
 * (which never changes); anything else is the resolver's.
 */
export async function replay(db: DB, idem: Idem, resolve?: Resolver) {
  const i = idempotencyKeys;
  const row = await db
    .select({ requestHash: i.requestHash, status: i.status, body: i.body })
    .from(i)
    .where(eq(i.key, idem.key))
    .get();
  if (!row) return undefined;
  if (row.requestHash !== idem.hash) {
    throw new ApiError(422, "this Idempotency-Key was used with a different request");
  }
  const stored = JSON.parse(row.body);
  const wrapped = stored !== null && typeof stored === "object" && Object.hasOwn(stored, "$answer");
  let body: unknown = wrapped ? stored.$answer : stored;
  const refs = new Set<string>();
  collectOrders(body, refs);
  if (refs.size) {
    const { results } = await stmt(
      db,
      `SELECT ${O.id} AS id, ${O.token} AS token FROM ${O.$} WHERE ${O.token} IN (SELECT value FROM json_each(?1))`,
      JSON.stringify([...refs]),
    ).all<{ id: number; token: string }>();
    body = fillOrders(body, new Map(results.map((r) => [r.token, r.id])));
  }
  if (resolve) body = await resolve(db, body, wrapped ? stored.$snapshot : undefined);
  return { status: row.status, body };
}

/**
 * Reads the Idempotency-Key header into `c.var.idem` (with a hash of method, path and body), and
 * answers a request whose write lost the race for its key with the winner's stored answer.
 */
export const idempotencyWith = (resolve?: Resolver) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const key = c.req.header("idempotency-key");
    if (key !== undefined) {
      if (!KEY.test(key)) {
        throw new ApiError(400, "invalid Idempotency-Key", ["Idempotency-Key: must be 1 to 255 printable characters"]);
      }
      const cred = c.var.credential;
      // Every /v1 route runs behind the auth middleware; a keyed write without a credential would
      // share one namespace with every other, so it is an internal error, never a shared key.
      if (!cred) throw new Error("an Idempotency-Key without a credential");
      const hash = await sha256(`${c.req.method} ${c.req.path}\n${JSON.stringify(c.var.body)}`);
      c.set("idem", { key: `${owner(cred)}:${key}`, hash });
    }
    await next();
    const idem = c.var.idem;
    if (!idem) return;
    // A request refused before its write (every item invalid) has no record of its own, but the
    // key may be taken already: then it is a retry (replay) or a reuse with another body (422).
    // A request that failed (5xx) answers as it is: its client retries with the key anyway.
    const lost = c.error instanceof IdempotencyConflict;
    if (!lost && (c.error || claimed.has(idem))) return;
    const stored = await replay(c.var.db, idem, resolve);
    if (stored) {
      c.res = undefined;
      c.res = c.json(stored.body, stored.status as 200, { "Idempotent-Replayed": "true" });
    } else if (lost) {
      // The winner's record is gone already (purged between the two): the request may be resent.
      throw new ApiError(409, "a request with this Idempotency-Key is being processed: retry");
    }
  });

/** The middleware for routes whose stored answers need no resolver (see idempotencyWith). */
export const idempotency = idempotencyWith();
