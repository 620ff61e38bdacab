import type { DB } from "../../db/client";
import { products, skus, staleReads } from "../../db/schema";
import { sqlNames } from "../../platform/columns";
import { afterLostRace, jsonChunks, stmt } from "../../platform/d1";
import { runClaimed } from "../../platform/idempotency";
import { uncarried } from "../../platform/quotes";
import type { PendingEvent } from "../../webhooks/outbox";
import type { IfMatch, ItemOutcome, ProductRef, Recorder, WriteOptions, Written } from "../create";
import { ProductText } from "../own-json";
import type { ProductOut } from "../present";
import { changedSince } from "./changed";
import { diagnose, diagnoseRound } from "./diagnose";
import type { UpdateItem } from "./select";
import { type Resolved, type SqlList, variantInSql } from "./variants-route";
import { ROUND, type RoundItem, writeRound } from "./variants-sql";

// A PUT of several items carrying variant lists, in the SQL plan's rounds (docs/design.md,
// "Writes"): each round writes the first item of each product named, every item's list bound in
// one JSON list, so the batch has the same statements for 2 items or 100; items naming a product
// again go to later rounds, in order. A refused batch wrote nothing: one read batch runs the plan
// again and words each item's refusal (./variants-sql.ts, `diagnose`), and the round is written
// again without the refused items. What that read cannot word (the forms ./refusals.ts leaves to
// the JavaScript plan, a refusal between two items of the round such as two claiming one new SKU,
// a concurrent writer) is handed with the items not yet written to the JavaScript plan
// (./index.ts), which words it as it does for any request; the record of the Idempotency-Key
// travels with them. Items the rounds do not take (no list, or a list only the JavaScript plan
// takes) follow in the JavaScript plan when each names by id a product the rounds do not write
// (so each product's items stay in order) and gives no SKU or slug (it would see what the rounds
// freed, where the JavaScript plan reads the catalog once for every item).

const P = sqlNames(products);
const K = sqlNames(skus);
const STALE = sqlNames(staleReads);

// Items of one round are each planned against the catalog as read, as the JavaScript plan plans
// them: a SKU (?1: [[product id, SKU]]) or slug (?2) another product has as the batch begins is
// refused, though another item of the round frees it.
const CLAIMS_GUARD = `
  INSERT INTO ${STALE.$} (${STALE.productId})
  SELECT k.${K.productId} FROM json_each(?1) AS r JOIN ${K.$} AS k ON k.${K.sku} = r.value->>1
    WHERE k.${K.productId} <> r.value->>0
  UNION ALL SELECT p.${P.id} FROM json_each(?2) AS r JOIN ${P.$} AS p ON p.${P.slug} = r.value->>1
    WHERE p.${P.id} <> r.value->>0`;

/** The SKUs and slugs the items of a round give, for CLAIMS_GUARD. */
function claimsGuard(db: DB, round: RoundItem[]): D1PreparedStatement[] {
  if (round.length < 2) return [];
  const skus: [number, string][] = [];
  const slugs: [number, string][] = [];
  for (const { list, resolved } of round) {
    const d = list.item.data;
    const id = resolved.productId;
    if (typeof d.sku === "string") skus.push([id, d.sku]);
    if (typeof d.slug === "string") slugs.push([id, d.slug]);
    for (const l of [d.variants?.sync, d.variants?.add, d.variants?.update]) {
      for (const e of l ?? []) if (typeof e.sku === "string") skus.push([id, e.sku]);
    }
  }
  if (!skus.length && !slugs.length) return [];
  return jsonChunks(skus).map((part, i) => stmt(db, CLAIMS_GUARD, part, i ? "[]" : JSON.stringify(slugs)));
}

/** Where the rounds leave the request: outcomes so far, and the items the JavaScript plan takes on. */
export type Rounds = {
  outcomes: Map<number, ItemOutcome>;
  events: PendingEvent[];
  /** The products a batch of this request changed, for the record's snapshot. */
  touched: Set<number>;
  /** Whether a batch claimed the Idempotency-Key's record. */
  recorded: boolean;
  rest: UpdateItem[];
};

/**
 * The items the rounds take (each naming its product by id, with a list they take) and the others
 * of a body of several, which the JavaScript plan takes after them; undefined when an item the
 * rounds do not take may name a product they write (it would not be applied in order).
 */
export function listsInSql(items: UpdateItem[]): { sql: RoundItem[]; rest: UpdateItem[] } | undefined {
  if (items.length < 2) return undefined;
  const sql: RoundItem[] = [];
  const rest: UpdateItem[] = [];
  for (const item of items) {
    const list = variantInSql(item);
    // Items that need a read first (./variants-route.ts, resolve) or are refused as they are: the JavaScript plan.
    const simple = list && "productId" in list.selector && !list.stored && !list.refused && !list.lead;
    if (list && simple && "productId" in list.selector)
      sql.push({ list, resolved: { productId: list.selector.productId } });
    else rest.push(item);
  }
  const written = new Set(sql.map((r) => r.resolved.productId));
  const apart = rest.every((i) => i.data.product_id !== undefined && !written.has(i.data.product_id));
  // An item after the rounds giving a SKU or slug would see what the rounds freed; the JavaScript
  // plan reads every item's catalog as it was, so such a body is its to plan whole.
  const clash = rest.some((i) => claims(i).length > 0);
  return sql.length && apart && !clash ? { sql, rest } : undefined;
}

/** The SKUs and slug an item gives. */
function claims({ data: d }: UpdateItem): string[] {
  const out = typeof d.slug === "string" ? [`slug ${d.slug}`] : [];
  if (typeof d.sku === "string") out.push(`sku ${d.sku}`);
  for (const l of [d.variants?.sync, d.variants?.add, d.variants?.update]) {
    for (const e of l ?? []) if (typeof e.sku === "string") out.push(`sku ${e.sku}`);
  }
  return out;
}

/**
 * An outcome as an Idempotency-Key record or an answer of presented products takes it: a product
 * SQLite built (carried text, src/platform/quotes.ts) parsed. Only requests of several rounds, or
 * handed to the JavaScript plan, need it.
 */
export function plain(o: ItemOutcome): ItemOutcome {
  if (!o.ok || !(o.product instanceof ProductText)) return o;
  return { ok: true, product: uncarried(o.product.text) as ProductOut };
}

/** Writes the items in rounds; `rest`, the items the JavaScript plan takes after them. */
export async function writeRounds(
  db: DB,
  { sql, rest }: { sql: RoundItem[]; rest: UpdateItem[] },
  now: number,
  recorder: Recorder | undefined,
  options: WriteOptions,
): Promise<Rounds> {
  const state: Rounds = { outcomes: new Map(), events: [], touched: new Set(), recorded: false, rest };
  let pending = sql;
  while (pending.length) {
    const named = new Set<number>();
    let round: RoundItem[] = [];
    const later: RoundItem[] = [];
    for (const r of pending) {
      (named.has(r.resolved.productId) ? later : round).push(r);
      named.add(r.resolved.productId);
    }
    for (let rewritten = false; ; rewritten = true) {
      const last = !later.length && !rest.length;
      const { head, tail } = record(recorder, state, round, last);
      if (!round.length) {
        // Every item of the round refused: only the last records the answer.
        if (head.length && last) await runClaimed(db, recorder?.idem, head, tail);
        break;
      }
      const guards = claimsGuard(db, round);
      const written = await writeRound(db, round, now, options, head, tail, recorder?.idem, guards);
      if (written) {
        state.recorded ||= head.length > 0;
        for (const [i, o] of written.outcomes) state.outcomes.set(i, o);
        state.events.push(...written.events);
        for (const r of round) state.touched.add(r.resolved.productId);
        break;
      }
      const refused = await diagnoseRound(db, round);
      const failed = round.filter((r) => {
        const o = refused.get(r.list.item.index);
        return o !== undefined && o !== "plan";
      });
      if (rewritten || !failed.length || [...refused.values()].includes("plan")) {
        const handed = [...round, ...later].map((r) => r.list.item);
        state.rest = [...handed, ...rest].sort((a, b) => a.index - b.index);
        return state;
      }
      for (const r of failed) state.outcomes.set(r.list.item.index, refused.get(r.list.item.index) as ItemOutcome);
      round = round.filter((r) => !failed.includes(r));
    }
    pending = later;
  }
  return state;
}

/**
 * The Idempotency-Key's statements around a round's batch: the key claimed with a "stopped
 * partway" answer in the first batch of several rounds, and the whole answer (with the products
 * as the batch leaves them) in the last, as ./index.ts records.
 */
function record(recorder: Recorder | undefined, state: Rounds, round: RoundItem[], last: boolean) {
  const none = { head: [] as D1PreparedStatement[], tail: [] as D1PreparedStatement[] };
  if (!recorder) return none;
  if (!last) return state.recorded ? none : { head: recorder.pending(), tail: [] };
  const planned = new Map<number, ItemOutcome<ProductRef>>();
  for (const [i, o] of state.outcomes) planned.set(i, plain(o) as ItemOutcome<ProductRef>);
  for (const r of round) planned.set(r.list.item.index, { ok: true, product: { $product: r.resolved.productId } });
  const ids = JSON.stringify([...state.touched, ...round.map((r) => r.resolved.productId)]);
  return {
    head: state.recorded ? recorder.complete(planned) : recorder.claim(planned),
    tail: [recorder.snapshot(`p.${P.id} IN (${ROUND})`, ids)],
  };
}

/**
 * Writes one item's lists in one batch, with the request's Idempotency-Key record when it has one.
 * A refused batch wrote nothing: a read batch then finds and words the refusal (./refusals.ts),
 * and the refusal is recorded under the key; when the read finds nothing refused (a concurrent
 * writer changed the product in between) the write is tried again. Undefined: a refusal
 * ./refusals.ts does not word, which the JavaScript path words.
 */
export async function writeVariants(
  db: DB,
  list: SqlList,
  product: Resolved,
  now: number,
  options: WriteOptions,
  recorder?: Recorder,
): Promise<Written | undefined> {
  let resolved = product;
  for (let attempt = 1; ; attempt++) {
    const round = [{ list, resolved }];
    // The record's answer names the product, resolved from the snapshot stored with it (as ./index.ts records).
    const head = recorder?.claim(new Map([[list.item.index, { ok: true, product: { $product: resolved.productId } }]]));
    const tail = recorder ? [recorder.snapshot(`p.${P.id} = ?1`, resolved.productId)] : [];
    // A body refused whatever is stored (./variants-route.ts, Refused) or by what `resolve` read,
    // or under an If-Match the product's version no longer meets, is not written.
    const skip = list.refused || resolved.changed || resolved.refused;
    const written = !skip && (await writeRound(db, round, now, options, head ?? [], tail, recorder?.idem));
    if (written) return written;
    const diagnosis = resolved.changed ? "changed" : await diagnose(db, list, resolved);
    const refused =
      diagnosis === "changed" ? await changedSince(db, resolved.productId, options.ifMatch as IfMatch) : diagnosis;
    // Nothing refused now: a concurrent change, which a body refused as it is or paths merged as read
    // (a stale read) leave to the JavaScript plan.
    if (refused === "plan" || (!refused && (list.refused || resolved.categories !== undefined))) return undefined;
    if (refused && "slug" in refused) {
      // A product without a slug gets the one the read derived, written in the batch again.
      if (resolved.slugless) return undefined;
      resolved = { ...resolved, slugless: true, fields: { ...resolved.fields, slug: refused.slug } };
      continue;
    }
    if (refused) {
      const outcome = new Map([[list.item.index, refused]]);
      if (recorder) {
        const none = recorder.snapshot(`p.${P.id} IN (${ROUND})`, "[]");
        await runClaimed(db, recorder.idem, recorder.claim(outcome), [none]);
      }
      return { outcomes: outcome, events: [] };
    }
    // A concurrent change: planned again from the product as it is (a slug derived may be given now).
    resolved = product;
    await afterLostRace(attempt, "the product");
  }
}
