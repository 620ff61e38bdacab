import { createMiddleware } from "hono/factory";
import type { DB } from "../db/client";
import type { AppEnv } from "../env";
import { presentReads, productReads } from "../products/read";
import { runBatch, stmt } from "./d1";
import { ApiError } from "./errors";

// Idempotent retries (contract 3.3). The record is written in the same D1 batch as the effect,
// first in the batch, so that a second request with the key fails on its primary key before
// anything else runs, rolls back whole, and then reads the winner's record. The stored body is a
// template: rows created by the batch are referred to by the token the Worker gave them
// ({"$order": token}, {"$product": token or id}), because their ids exist only once the batch ran;
// a replay resolves them with one read.

export type Idem = { key: string; hash: string };

/** Records are kept 24 hours (README, "Idempotency"), then purged by the scheduled job. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export async function purgeIdempotencyKeys(d1: D1Database, now = Date.now()) {
  await d1
    .prepare("DELETE FROM idempotency_keys WHERE created_at < ?1")
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

async function sha256(text: string) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export function isIdempotencyConflict(e: unknown): boolean {
  for (let x = e; x instanceof Error; x = x.cause) if (/idempotency_keys\.key/.test(x.message)) return true;
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
    stmt(db, "DELETE FROM idempotency_keys WHERE key = ?1 AND created_at < ?2", idem.key, now - IDEMPOTENCY_TTL_MS),
    stmt(
      db,
      "INSERT INTO idempotency_keys (key, request_hash, status, body, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
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
      "UPDATE idempotency_keys SET status = ?3, body = ?4 WHERE key = ?1 AND request_hash = ?2",
      idem.key,
      idem.hash,
      status,
      JSON.stringify(template),
    ),
  ];
}

type Refs = { orders: Set<string>; productTokens: Set<string>; productIds: Set<number> };

function collect(v: unknown, refs: Refs) {
  if (Array.isArray(v)) for (const x of v) collect(x, refs);
  else if (v && typeof v === "object") {
    const o = v as Record<string, unknown>;
    if (typeof o.$order === "string") refs.orders.add(o.$order);
    else if (typeof o.$product === "string") refs.productTokens.add(o.$product);
    else if (typeof o.$product === "number") refs.productIds.add(o.$product);
    else for (const x of Object.values(o)) collect(x, refs);
  }
}

function fill(v: unknown, orders: Map<string, number>, products: Map<string | number, unknown>): unknown {
  if (Array.isArray(v)) return v.map((x) => fill(x, orders, products));
  if (v && typeof v === "object") {
    const o = v as Record<string, unknown>;
    if (typeof o.$order === "string") return orders.get(o.$order) ?? null;
    if (typeof o.$product === "string" || typeof o.$product === "number") return products.get(o.$product) ?? null;
    return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, fill(x, orders, products)]));
  }
  return v;
}

/**
 * The stored answer for `idem`, with its references resolved; undefined when the key has no
 * record; 422 when it was recorded for another body.
 */
export async function replay(db: DB, idem: Idem) {
  const row = await stmt(db, "SELECT request_hash, status, body FROM idempotency_keys WHERE key = ?1", idem.key).first<{
    request_hash: string;
    status: number;
    body: string;
  }>();
  if (!row) return undefined;
  if (row.request_hash !== idem.hash) {
    throw new ApiError(422, "this Idempotency-Key was used with a different request");
  }
  const template = JSON.parse(row.body);
  const refs: Refs = { orders: new Set(), productTokens: new Set(), productIds: new Set() };
  collect(template, refs);
  const orders = new Map<string, number>();
  const found = new Map<string | number, unknown>();
  if (refs.orders.size || refs.productTokens.size || refs.productIds.size) {
    const tokens = JSON.stringify([...refs.productTokens]);
    const ids = JSON.stringify([...refs.productIds]);
    const wanted = "(p.token IN (SELECT value FROM json_each(?1)) OR p.id IN (SELECT value FROM json_each(?2)))";
    const [o, ps, vs] = await runBatch(db, [
      stmt(
        db,
        "SELECT id, token FROM orders WHERE token IN (SELECT value FROM json_each(?1))",
        JSON.stringify([...refs.orders]),
      ),
      ...productReads(db, wanted, tokens, ids),
    ]);
    for (const r of o.results) orders.set(r.token as string, r.id as number);
    const { rows, products: out } = presentReads(ps, vs);
    out.forEach((product, i) => {
      found.set(rows[i].id, product);
      if (rows[i].token) found.set(rows[i].token as string, product);
    });
  }
  return { status: row.status, body: fill(template, orders, found) };
}

/**
 * Reads the Idempotency-Key header into `c.var.idem` (with a hash of method, path and body), and
 * answers a request whose write lost the race for its key with the winner's stored answer.
 */
export const idempotency = createMiddleware<AppEnv>(async (c, next) => {
  const key = c.req.header("idempotency-key");
  if (key !== undefined) {
    if (!KEY.test(key)) {
      throw new ApiError(400, "invalid Idempotency-Key", ["Idempotency-Key: must be 1 to 255 printable characters"]);
    }
    c.set("idem", { key, hash: await sha256(`${c.req.method} ${c.req.path}\n${JSON.stringify(c.var.body)}`) });
  }
  await next();
  const idem = c.var.idem;
  if (!idem) return;
  // A request refused before its write (every item invalid) has no record of its own, but the
  // key may be taken already: then it is a retry (replay) or a reuse with another body (422).
  // A request that failed (5xx) answers as it is: its client retries with the key anyway.
  const lost = c.error instanceof IdempotencyConflict;
  if (!lost && (c.error || claimed.has(idem))) return;
  const stored = await replay(c.var.db, idem);
  if (stored) {
    c.res = undefined;
    c.res = c.json(stored.body, stored.status as 200, { "Idempotent-Replayed": "true" });
  } else if (lost) {
    // The winner's record is gone already (purged between the two): the request may be resent.
    throw new ApiError(409, "a request with this Idempotency-Key is being processed: retry");
  }
});
