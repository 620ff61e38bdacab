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
import { type Bare, diagnose, diagnoseRound } from "./diagnose";
import { type Plan, plan } from "./plan";
import type { Refusal } from "./refusals";
import { type Failed, type Snapshot, select, snapshotOf, snapshotReads, type UpdateItem } from "./select";
import { readRoundItems } from "./variants-round-read";
import { type Resolved, type RoundItem, resolve, type SqlList, variantInSql } from "./variants-route";
import { ROUND, writeRound } from "./variants-sql";

// A PUT of several items carrying variant lists, in the SQL plan's rounds (docs/design.md,
// "Writes"): each round writes the first item of each product named, every item's list bound in
// one JSON list, so the batch has the same statements for 2 items or 100; items naming a product
// again go to later rounds, in order. Items selecting their product by variant id or SKU, or
// deriving fields from the stored product, are read first, all in one statement
// (./variants-round-read.ts), and the batch re-checks what was read. Items refused as they are
// (./variants-route.ts, Refused) are worded from one read before their round writes. A refused
// batch wrote nothing: one read batch runs the plan again and words each item's refusal
// (./diagnose.ts, `diagnoseRound`; two items claiming one new SKU or slug: the later one,
// ./claims.ts), and the round is written again without the refused
// items; a round refused again is read again. A product without a slug yet gets the slug the read
// derives, and the round is written again with it. When the read finds nothing refused (a
// concurrent writer), the round is read and written again. Items without a variant list are
// planned by the general planner (./plan.ts) from a read in the round's first call and written in
// the round's batch, so a body is one batch per round whatever its items.

const P = sqlNames(products);
const K = sqlNames(skus);
const STALE = sqlNames(staleReads);

// Items of one round are each planned against the catalog as read, as the general planner plans
// them: a SKU (?1: [[product id, SKU]]) or slug (?2) another product has as the batch begins is
// refused, though another item of the round frees it.
const CLAIMS_GUARD = `
  INSERT INTO ${STALE.$} (${STALE.productId})
  SELECT k.${K.productId} FROM json_each(?1) AS r JOIN ${K.$} AS k ON k.${K.sku} = r.value->>1
    WHERE k.${K.productId} <> r.value->>0
  UNION ALL SELECT p.${P.id} FROM json_each(?2) AS r JOIN ${P.$} AS p ON p.${P.slug} = r.value->>1
    WHERE p.${P.id} <> r.value->>0`;

/** The SKUs and slugs the items of a round give, for CLAIMS_GUARD; `bare`: its items without a list. */
function claimsGuard(db: DB, round: RoundItem[], bare: Planned[]): D1PreparedStatement[] {
  if (round.length + bare.length < 2) return [];
  const skus: [number, string][] = [];
  const slugs: [number, string][] = [];
  const given = [
    ...round.map(({ list, resolved }): [UpdateItem, number, boolean] => [list.item, resolved.productId, !!list.lead]),
    ...bare.map(({ item, plan }): [UpdateItem, number, boolean] => [item, plan.productId, false]),
  ];
  for (const [item, id, lead] of given) {
    const d = item.data;
    // A selected variant's SKU is checked on what the lists leave (./lead-sku.ts): a list may delete it.
    if (typeof d.sku === "string" && !lead) skus.push([id, d.sku]);
    if (typeof d.slug === "string") slugs.push([id, d.slug]);
    for (const l of [d.variants?.sync, d.variants?.add, d.variants?.update]) {
      for (const e of l ?? []) if (typeof e.sku === "string") skus.push([id, e.sku]);
    }
  }
  if (!skus.length && !slugs.length) return [];
  return jsonChunks(skus).map((part, i) => stmt(db, CLAIMS_GUARD, part, i ? "[]" : JSON.stringify(slugs)));
}

/** Where the rounds leave the request. */
type Rounds = {
  outcomes: Map<number, ItemOutcome>;
  events: PendingEvent[];
  /** The products a batch of this request changed, for the record's snapshot. */
  touched: Set<number>;
  /** Whether a batch claimed the Idempotency-Key's record. */
  recorded: boolean;
};

/** A body of several items as the rounds take it: items with their lists, and items without a list. */
export type RoundsBody = { lists: SqlList[]; bare: UpdateItem[] };

/** A round's item without a list, as ./plan.ts planned it. */
type Planned = { item: UpdateItem; plan: Plan };

/**
 * The items of a body of several, one at least with a list: each item with its list bound (naming
 * its product by id, variant id or SKU), or without a list. Undefined: one item, or none with a
 * list (./index.ts plans those with the general planner).
 */
export function listsInSql(items: UpdateItem[]): RoundsBody | undefined {
  if (items.length < 2) return undefined;
  const body: RoundsBody = { lists: [], bare: [] };
  for (const item of items) {
    const { sync, add, update } = item.data.variants ?? {};
    // An empty add or update changes nothing: the item is planned as one without a list.
    if (sync === undefined && !add?.length && !update?.length) {
      body.bare.push(item);
      continue;
    }
    const list = variantInSql(item);
    if (!list) return undefined;
    body.lists.push(list);
  }
  return body.lists.length ? body : undefined;
}

/**
 * An outcome as an Idempotency-Key record or an answer of presented products takes it: a product
 * SQLite built (carried text, src/platform/quotes.ts) parsed. Only requests of several rounds need it.
 */
function plain(o: ItemOutcome): ItemOutcome {
  if (!o.ok || !(o.product instanceof ProductText)) return o;
  return { ok: true, product: uncarried(o.product.text) as ProductOut };
}

/** Writes the items in rounds. */
export async function writeRounds(
  db: DB,
  body: RoundsBody,
  now: number,
  recorder: Recorder | undefined,
  options: WriteOptions,
): Promise<Rounds> {
  const state: Rounds = { outcomes: new Map(), events: [], touched: new Set(), recorded: false };
  // What the items select and derive, read for all of them at once (./variants-round-read.ts),
  // before the first round and again before each later one whose items need it: as the general
  // planner reads each round, a later item finds what the rounds before it left; a selection that
  // finds nothing is its 404.
  // A round whose read finds nothing it refused, or a selection naming another product now (a
  // concurrent writer): read again, each item routed afresh (a list keeps what its read resolved),
  // after the wait of a lost race.
  let attempt = 0;
  const afresh = async (lists: SqlList[]) => {
    await afterLostRace(++attempt, "the product");
    return lists.sort((a, b) => a.item.index - b.item.index).map((l) => variantInSql(l.item) ?? l);
  };
  let pending = body.lists;
  let pendingBare = body.bare;
  while (pending.length || pendingBare.length) {
    // Items without a list are read as the general planner reads them, in the same call.
    const read = await readRoundItems(db, pending, pendingBare.length ? snapshotReads(db, pendingBare) : []);
    if (!read) throw unworded();
    for (const [i, o] of read.missing) state.outcomes.set(i, o);
    const snap = pendingBare.length ? snapshotOf(read.more) : undefined;
    let { round, bare, later, laterBare } = place(read.items, pendingBare, snap, state.outcomes);
    const unwritten = () => [...bare.map((b) => b.item), ...laterBare];
    // Items refused as they are hold their product for the round, as in the general planner's, and
    // are worded from one read before the round writes (the catalog as their round finds it).
    const refused = round.filter(asIs);
    const rest = refused.length ? await wordRefused(db, refused, state) : "worded";
    if (rest === "plan") throw unworded();
    if (rest === "again") {
      pendingBare = unwritten();
      pending = await afresh([...round.map((r) => r.list), ...later]);
      continue;
    }
    round = round.filter((r) => !asIs(r));
    let again = false;
    for (;;) {
      const last = !later.length && !laterBare.length;
      const { head, tail } = record(recorder, state, round, bare, last);
      if (!round.length && !bare.length) {
        // Every item of the round refused: only the last records the answer.
        if (head.length && last) await runClaimed(db, recorder?.idem, head, tail);
        break;
      }
      const plans = bare.map((b) => b.plan);
      const guards = claimsGuard(db, round, bare);
      const written = await writeRound(db, round, now, options, head, tail, recorder?.idem, guards, plans);
      if (written) {
        state.recorded ||= head.length > 0;
        for (const [i, o] of written.outcomes) state.outcomes.set(i, o);
        state.events.push(...written.events);
        for (const r of round) state.touched.add(r.resolved.productId);
        for (const p of plans) state.touched.add(p.productId);
        break;
      }
      const diagnosed = await diagnoseRound(
        db,
        round,
        bare.map((b): Bare => ({ item: b.item, productId: b.plan.productId })),
      );
      const failed = (index: number) => worded(diagnosed.get(index));
      const slugless = round.filter((r) => derived(diagnosed.get(r.list.item.index)) !== undefined);
      // Nothing worded nor derived (a concurrent writer): the round is read again. A round refused again is read again,
      // without the items worded before.
      if ([...diagnosed.values()].includes("plan")) throw unworded();
      const any = round.some((r) => failed(r.list.item.index)) || bare.some((b) => failed(b.item.index));
      if (!any && !slugless.length) {
        again = true;
        break;
      }
      for (const [i, o] of diagnosed) if (worded(o)) state.outcomes.set(i, o);
      // A product without a slug gets the one the read derived, written in the round again.
      for (const r of slugless) {
        const slug = derived(diagnosed.get(r.list.item.index));
        r.resolved = { ...r.resolved, slugless: true, fields: { ...r.resolved.fields, slug } };
      }
      round = round.filter((r) => !failed(r.list.item.index));
      bare = bare.filter((b) => !failed(b.item.index));
    }
    if (again) {
      pendingBare = unwritten();
      pending = await afresh([...round.map((r) => r.list), ...later]);
    } else {
      pending = later;
      pendingBare = laterBare;
    }
  }
  return state;
}

/**
 * A round's items in the body's order: the first item naming each product; one naming a product
 * an earlier item of the round names waits for a later round. Items without a list are selected
 * and planned from `snap` as the general planner does (./index.ts): a refused one holds its product.
 */
function place(items: RoundItem[], plainItems: UpdateItem[], snap: Snapshot | undefined, outcomes: Rounds["outcomes"]) {
  const inRound = new Set<number>();
  const round: RoundItem[] = [];
  const later: SqlList[] = [];
  const bare: Planned[] = [];
  const laterBare: UpdateItem[] = [];
  const at = (r: RoundItem | UpdateItem) => ("list" in r ? r.list.item.index : r.index);
  for (const r of [...items, ...plainItems].sort((a, b) => at(a) - at(b))) {
    if ("list" in r) {
      if (inRound.has(r.resolved.productId)) later.push(r.list);
      else round.push(r);
      inRound.add(r.resolved.productId);
      continue;
    }
    const t = select(r, snap as Snapshot);
    if ("ok" in t) outcomes.set(r.index, t);
    else if (inRound.has(t.product.id)) laterBare.push(r);
    else {
      inRound.add(t.product.id);
      const planned = plan(t, snap as Snapshot);
      if ("ok" in planned) outcomes.set(r.index, planned);
      else bare.push({ item: r, plan: planned });
    }
  }
  return { round, bare, later, laterBare };
}

/**
 * Words items refused as they are (./variants-route.ts, Refused) from one read; of a product
 * without a slug, from a second one once the slug is derived (the plan gives it no rows before).
 * "plan": a form the read does not word (`unworded`); "again": a read finds nothing refused or
 * a selection naming another product now (a concurrent writer).
 */
async function wordRefused(db: DB, refused: RoundItem[], state: Rounds): Promise<"worded" | "plan" | "again"> {
  for (let items = refused; items.length; ) {
    const words = await diagnoseRound(db, items);
    const slugless = [];
    for (const r of items) {
      const w = words.get(r.list.item.index);
      const slug = derived(w);
      if (slug !== undefined) {
        r.resolved = { ...r.resolved, slugless: true, fields: { ...r.resolved.fields, slug } };
        slugless.push(r);
      } else if (worded(w)) state.outcomes.set(r.list.item.index, w);
      else return w === "plan" ? "plan" : "again";
    }
    items = slugless;
  }
  return "worded";
}

/**
 * An item refused as it is (./variants-route.ts, Refused), or by what the rounds' read found (a
 * head category merged into the stored paths past the bound): worded before its round writes.
 */
const asIs = (r: RoundItem) => r.list.refused !== undefined || r.resolved.refused === true;

/**
 * A form the SQL plan's reads do not word ("plan": a refusal of rows the plan did not match, a
 * selection an If-Match names; the general plan matches no lists): none is known to reach here,
 * and one that does fails as an internal error, nothing of its round written.
 */
const unworded = () => new Error("PUT: a refused variant list the SQL plan's read does not word");

/** A refusal the read worded (not "plan", not a slug derived, not nothing refused). */
const worded = (r: Refusal): r is Failed => r !== undefined && r !== "plan" && !("slug" in r);

/** The slug the read derived for a product without one. */
const derived = (r: Refusal) => (r !== undefined && r !== "plan" && "slug" in r ? r.slug : undefined);

/**
 * The Idempotency-Key's statements around a round's batch: the key claimed with a "stopped
 * partway" answer in the first batch of several rounds, and the whole answer (with the products
 * as the batch leaves them) in the last, as ./index.ts records.
 */
function record(recorder: Recorder | undefined, state: Rounds, round: RoundItem[], bare: Planned[], last: boolean) {
  const none = { head: [] as D1PreparedStatement[], tail: [] as D1PreparedStatement[] };
  if (!recorder) return none;
  if (!last) return state.recorded ? none : { head: recorder.pending(), tail: [] };
  const planned = new Map<number, ItemOutcome<ProductRef>>();
  for (const [i, o] of state.outcomes) planned.set(i, plain(o) as ItemOutcome<ProductRef>);
  const written = [
    ...round.map((r): [number, number] => [r.list.item.index, r.resolved.productId]),
    ...bare.map((b): [number, number] => [b.item.index, b.plan.productId]),
  ];
  for (const [i, id] of written) planned.set(i, { ok: true, product: { $product: id } });
  const ids = JSON.stringify([...state.touched, ...written.map(([, id]) => id)]);
  return {
    head: state.recorded ? recorder.complete(planned) : recorder.claim(planned),
    tail: [recorder.snapshot(`p.${P.id} IN (${ROUND})`, ids)],
  };
}

/**
 * Writes one item's lists in one batch, with the request's Idempotency-Key record when it has one.
 * A refused batch wrote nothing: a read batch then finds and words the refusal (./refusals.ts),
 * and the refusal is recorded under the key, as is the 404 of a selection that finds nothing;
 * when the read finds nothing refused (a concurrent writer changed the product in between) the
 * item is routed and resolved again from the catalog as it is and the write tried again.
 */
export async function writeVariants(
  db: DB,
  sql: SqlList,
  product: Resolved | Failed,
  now: number,
  options: WriteOptions,
  recorder?: Recorder,
): Promise<Written> {
  let list = sql;
  let resolved = product;
  for (let attempt = 1; ; attempt++) {
    if ("ok" in resolved) return refusedOne(db, list, resolved, recorder);
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
    if (refused === "plan") throw unworded();
    if (refused && "slug" in refused) {
      // A product without a slug gets the one the read derived, written in the batch again.
      if (resolved.slugless) throw unworded();
      resolved = { ...resolved, slugless: true, fields: { ...resolved.fields, slug: refused.slug } };
      continue;
    }
    if (refused) return refusedOne(db, list, refused, recorder);
    // Nothing refused now: a concurrent writer changed the product (or what `resolve` read) in
    // between. Routed and resolved again from the catalog as it is.
    await afterLostRace(attempt, "the product");
    const again = variantInSql(list.item);
    if (!again) throw unworded();
    list = again;
    const fresh = await resolve(db, list, options.ifMatch);
    if (!fresh) throw unworded();
    resolved = fresh;
  }
}

/** One item's refusal (or 404), recorded under the request's Idempotency-Key. */
async function refusedOne(db: DB, list: SqlList, refused: Failed, recorder?: Recorder): Promise<Written> {
  const outcome = new Map([[list.item.index, refused]]);
  if (recorder) {
    const none = recorder.snapshot(`p.${P.id} IN (${ROUND})`, "[]");
    await runClaimed(db, recorder.idem, recorder.claim(outcome), [none]);
  }
  return { outcomes: outcome, events: [] };
}
