import type { DB } from "../../db/client";
import { products } from "../../db/schema";
import { sqlNames } from "../../platform/columns";
import { afterLostRace, isConstraintError, stmt } from "../../platform/d1";
import { runClaimed } from "../../platform/idempotency";
import { committed, newEvent, type PendingEvent } from "../../webhooks/outbox";
import type { ItemOutcome, ProductRef, Recorder, WriteOptions, Written } from "../create";
import { type presentReads, readBack } from "../read";
import { productETag } from "../version";
import { changedSince, VERSIONS } from "./changed";
import { RoundClaims } from "./claims";
import { type Plan, plan } from "./plan";
import { fail, readSnapshot, select, type UpdateItem } from "./select";
import { stockItems, stockUpdate } from "./stock";
import { listsInSql, writeRounds, writeVariants } from "./variants-rounds";
import { resolve, variantsInSql } from "./variants-route";
import { writeBatch } from "./write";

export type { UpdateItem } from "./select";

const P = sqlNames(products);

// PUT /v1/products (docs/products.md, "Updating products"). Stock-tool bodies take their own
// one-batch path (./stock.ts), items carrying variant lists the SQL plan (./variants-sql.ts, one
// item; several in rounds, ./variants-rounds.ts; docs/design.md, "Writes", lists the forms).
// Items without a list (product fields, a selected variant's own fields), per round: one read
// batch (the selected products, their variants, the owners of every SKU the body names), a plan
// per product in JS (./plan.ts, which matches no variant lists), then one write batch for all of
// them, its rows bound as one JSON parameter each, so the number of statements is fixed whatever
// the number of products (docs/security.md, "Guarantees").

/**
 * Updates products, each item on its own and atomically. Items naming the same product are
 * applied in order, one per round (each round reads afresh), since a plan is only valid against
 * the state it was made from. A write batch that fails on a constraint (a concurrent change
 * since the read) rolled back whole and is planned again from a fresh read.
 */
export async function updateProducts(
  db: DB,
  items: UpdateItem[],
  now: number,
  recorder?: Recorder,
  options: WriteOptions = {},
): Promise<Written> {
  const { ifMatch } = options;
  // An If-Match write depends on the version it reads, which the plans below guard.
  const stock = !ifMatch && stockItems(items);
  if (stock) return stockUpdate(db, stock, now, recorder, options.keyId ?? null);
  // A body carrying a variant list is planned in SQL when it can be (./variants-route.ts), which
  // also words its refusals (./refusals.ts); undefined: a list it does not take after all, planned below.
  const list = variantsInSql(items);
  const resolved = list && (await resolve(db, list, ifMatch));
  const written = resolved && (await writeVariants(db, list, resolved, now, options, recorder));
  if (written) return written;
  // Several items, one at least with a list: the SQL plan's rounds (./variants-rounds.ts; items
  // without a list planned by ./plan.ts in the rounds' batches).
  const rounds = !ifMatch && listsInSql(items);
  return rounds ? writeRounds(db, rounds, now, recorder, options) : updateInJs(db, items, now, recorder, options);
}

/**
 * Tests watch the items handed to the general planner: none carrying a variant list should be,
 * once the SQL plan takes every form (test/products.variants.one-path.test.ts).
 */
export const toJsPlan: { watch?: (items: UpdateItem[]) => void } = {};

/** Whether an item carries a variant list (a sync, even empty, or an add or update with entries). */
const carriesList = (d: UpdateItem["data"]) =>
  d.variants?.sync !== undefined || !!d.variants?.add?.length || !!d.variants?.update?.length;

/**
 * The general planner's rounds (see updateProducts), for items without a variant list: ./plan.ts
 * no longer matches lists, so an item with one reaching it is a routing bug, and fails loudly (an
 * internal error, 500, nothing written) rather than being written as if its list were not there.
 */
async function updateInJs(
  db: DB,
  items: UpdateItem[],
  now: number,
  recorder: Recorder | undefined,
  options: WriteOptions,
): Promise<Written> {
  toJsPlan.watch?.(items);
  const listed = items.find((i) => carriesList(i.data));
  if (listed) throw new Error(`PUT item ${listed.index}: a variant list reached the general plan, which plans none`);
  const back = readBack(options.minimal);
  const { ifMatch } = options;
  const outcomes = new Map<number, ItemOutcome>();
  const events: PendingEvent[] = [];
  // Every product a batch of this request changed, for the snapshot of the last one.
  const touched = new Set<number>();
  let pending = items;
  let attempt = 0;
  let recorded = false;
  while (pending.length) {
    const snap = await readSnapshot(db, pending);
    const plans: Plan[] = [];
    const later: UpdateItem[] = [];
    const inRound = new Set<number>();
    const claimed = new RoundClaims();
    for (const item of pending) {
      const t = select(item, snap);
      if ("ok" in t) {
        outcomes.set(item.index, t);
        continue;
      }
      if (inRound.has(t.product.id)) {
        later.push(item);
        continue;
      }
      if (ifMatch) {
        const version = snap.versions.get(t.product.id);
        if (!ifMatch.any && !ifMatch.tags.includes(productETag(t.product.id, version))) {
          outcomes.set(item.index, await changedSince(db, t.product.id, ifMatch));
          continue;
        }
        t.version = version;
      }
      inRound.add(t.product.id);
      const planned = plan(t, snap);
      if ("ok" in planned) {
        outcomes.set(item.index, planned);
        continue;
      }
      const clash = claimed.take(item.index, planned.claims, planned.slugClaim);
      if (clash) outcomes.set(item.index, clash);
      else plans.push(planned);
    }
    // Items naming one product twice are the only requests with more than one round. The key is
    // claimed in the first batch that writes (so of concurrent requests with it exactly one takes
    // effect) and its answer completed in the last, which knows every outcome; a request stopped
    // between rounds leaves the record's "stopped partway" answer for its retries.
    let head: D1PreparedStatement[] = [];
    // The final answer's record also stores the products as this batch leaves them (replays).
    let tail: D1PreparedStatement[] = [];
    if (recorder && later.length && !recorded) head = recorder.pending();
    else if (recorder && !later.length) {
      const planned = new Map<number, ItemOutcome<ProductRef>>(outcomes as Map<number, ItemOutcome<never>>);
      for (const p of plans) planned.set(p.index, { ok: true, product: { $product: p.productId } });
      head = recorded ? recorder.complete(planned) : recorder.claim(planned);
      const ids = JSON.stringify([...touched, ...plans.map((p) => p.productId)]);
      tail = [recorder.snapshot(`p.${P.id} IN (SELECT value FROM json_each(?1))`, ids)];
    }
    // The version the write leaves, for the answer's ETag: read in the batch, so no later change slips in.
    if (ifMatch) tail.push(stmt(db, VERSIONS, JSON.stringify(plans.map((p) => p.productId))));
    if (!plans.length && head.length) {
      await runClaimed(db, recorder?.idem, head, tail);
      recorded = true;
    }
    if (plans.length) {
      const changes = plans.map((p) => newEvent("product.update", { productId: p.productId, keyId: options.keyId }));
      let results: D1Result<Record<string, unknown>>[];
      try {
        results = await runClaimed(db, recorder?.idem, head, [
          ...writeBatch(db, plans, now, changes, back.reads),
          ...tail,
        ]);
      } catch (e) {
        if (!isConstraintError(e)) throw e;
        await afterLostRace(++attempt, "the product");
        continue;
      }
      if (head.length) recorded = true;
      const version = ifMatch && results[results.length - 1].results[0];
      if (version) ifMatch.etag = productETag(Number(version.product_id), version.version);
      events.push(...committed(changes, results));
      for (const p of plans) touched.add(p.productId);
      const [ps, vs] = results.slice(results.length - tail.length - 2);
      // A minimal product stands in for the full one (writeProducts answers it as it is).
      const { products } = back.present(ps, vs) as ReturnType<typeof presentReads>;
      const out = new Map(products.map((p) => [p.product_id, p]));
      for (const plan of plans) {
        const product = out.get(plan.productId);
        outcomes.set(
          plan.index,
          product ? { ok: true, product } : fail(404, `product ${plan.productId} was deleted meanwhile`),
        );
      }
    }
    pending = later;
  }
  return { outcomes, events };
}
