import { products, productVersions } from "../../db/schema";
import { sqlNames } from "../../platform/columns";
import { afterLostRace, type DB, isConstraintError, runBatch, stmt } from "../../platform/d1";
import { runClaimed } from "../../platform/idempotency";
import { committed, type PendingEvent } from "../../webhooks/outbox";
import { ProductText } from "../present";
import { presentReads, productReads } from "../read";
import type { IfMatch, ItemOutcome, ProductRef, Recorder, WriteOptions, Written } from "../route";
import type { Located } from "../variants";
import { productETag } from "../version";
import { type Plan, plan } from "./plan";
import { type Failed, fail, readSnapshot, select, type UpdateItem } from "./select";
import { carriesList } from "./states";
import { writeBatch } from "./write";

export type { UpdateItem } from "./select";

const P = sqlNames(products);
const PV = sqlNames(productVersions);

// PUT /v1/products (docs/products.md, "Updating products"), every body form through one path
// (docs/design.md, "Writes"): per round, one read batch of what the body names (./select.ts), a
// plan per item in JS from it (./plan.ts, which words every refusal), then one write batch of
// what changed (./write.ts), guarded so that a concurrent change of what the plans depend on
// fails it whole (./write.ts) and the round is planned again from a fresh read.

const VERSIONS = `SELECT ${PV.productId} AS product_id, ${PV.version} AS version FROM ${PV.$}
  WHERE ${PV.productId} IN (SELECT value FROM json_each(?1))`;

/** The 412 of an If-Match that names another version (docs/stock.md): the product as it is now, and its ETag. */
async function changedSince(db: DB, id: number, ifMatch: IfMatch): Promise<Failed> {
  const [ps, vs, v] = await runBatch(db, [...productReads(db, `p.${P.id} = ?1`, id), stmt(db, VERSIONS, `[${id}]`)]);
  const current = presentReads(ps, vs).products[0];
  ifMatch.etag = productETag(id, v.results[0]?.version);
  const changed = `If-Match: product ${id} changed since that ETag; products holds it as it is now, with its ETag in the ETag header`;
  return { ok: false, status: 412, errors: [changed], current };
}

// Items of one round are planned against the catalog as read, so two may each take a SKU or slug
// no product has yet: the later one (in the body's order) is refused, as the write would fail on
// the registry or the unique index.

/** The SKUs and slugs the items of a round accepted so far claim. */
class RoundClaims {
  private readonly skus = new Map<string, string>();
  private readonly slugs = new Map<string, string>();

  /** The 409 of item `index` when an earlier item claims one of its SKUs or its slug; else takes them. */
  take(index: number, skus: Located<string>[], slug: string | undefined): Failed | undefined {
    const clash = skus.filter((c) => this.skus.has(c.entry));
    const slugClash = slug !== undefined && this.slugs.get(slug);
    if (clash.length || slugClash) {
      const errors = clash.map(
        (c) => `${c.path}: SKU ${c.entry} is also claimed by item ${this.skus.get(c.entry)} of this request`,
      );
      if (slugClash) errors.push(`slug: ${slug} is also claimed by item ${slugClash} of this request`);
      return { ok: false, status: 409, errors };
    }
    for (const c of skus) this.skus.set(c.entry, `[${index}]`);
    if (slug !== undefined) this.slugs.set(slug, `[${index}]`);
    return undefined;
  }
}

/**
 * Updates products, each item on its own and atomically. Items naming a product again are
 * planned on what the item before left in the same round, unless one of them matches a variant
 * list or gives a new SKU: those go to the next round, which reads afresh.
 */
export async function updateProducts(
  db: DB,
  items: UpdateItem[],
  now: number,
  recorder?: Recorder,
  options: WriteOptions = {},
): Promise<Written> {
  const { ifMatch } = options;
  const outcomes = new Map<number, ItemOutcome>();
  const events: PendingEvent[] = [];
  // Every product a batch of this request wrote, for the snapshot of the last one.
  const touched = new Set<number>();
  let pending = items;
  let attempt = 0;
  let recorded = false;
  let moved = false;
  while (pending.length) {
    const snap = await readSnapshot(db, pending);
    const plans = new Map<number, Plan & { items: number[] }>();
    const later: UpdateItem[] = [];
    // Products an item of this round went to the next round for, or was refused on: the items
    // after it follow in the next round (which sees what this one writes, a SKU freed included).
    const deferred = new Set<number>();
    const failed = new Map<number, ItemOutcome>();
    const claimed = new RoundClaims();
    for (const item of pending) {
      const t = select(item, snap);
      if ("ok" in t) {
        failed.set(item.index, t);
        continue;
      }
      const prior = plans.get(t.product.id);
      if (deferred.has(t.product.id) || (prior && (prior.alone || carriesList(item.data)))) {
        deferred.add(t.product.id);
        later.push(item);
        continue;
      }
      if (ifMatch) {
        const version = snap.read.get(t.product.id)?.version;
        if (!ifMatch.any && !ifMatch.tags.includes(productETag(t.product.id, version))) {
          failed.set(item.index, await changedSince(db, t.product.id, ifMatch));
          continue;
        }
        t.version = version;
      }
      const planned = plan(t, snap, prior);
      if ("ok" in planned) {
        failed.set(item.index, planned);
        if (!prior) deferred.add(t.product.id);
        continue;
      }
      const priorSkus = new Set(prior?.claims.map((c) => c.entry));
      const clash = claimed.take(
        item.index,
        planned.claims.filter((c) => !priorSkus.has(c.entry)),
        planned.slugClaim === prior?.slugClaim ? undefined : planned.slugClaim,
      );
      if (clash) {
        failed.set(item.index, clash);
        if (!prior) deferred.add(t.product.id);
      } else plans.set(t.product.id, { ...planned, items: [...(prior?.items ?? []), item.index] });
    }
    const round = [...plans.values()];
    // Items naming one product again after a list are the only requests with more than one round.
    // The key is claimed in the first batch (so of concurrent requests with it exactly one takes
    // effect) and its answer completed in the last, which knows every outcome; a request stopped
    // between rounds leaves the record's "stopped partway" answer for its retries.
    let head: D1PreparedStatement[] = [];
    // The final answer's record also stores the products as this batch leaves them (replays).
    let tail: D1PreparedStatement[] = [];
    if (recorder && later.length && !recorded) head = recorder.pending();
    else if (recorder && !later.length) {
      // Every product answered so far goes by reference: the record resolves it from the snapshot.
      const planned = new Map<number, ItemOutcome<ProductRef>>();
      for (const [i, o] of [...outcomes, ...failed]) {
        planned.set(i, o.ok ? { ok: true, product: { $product: (o.product as ProductText).product_id } } : o);
      }
      for (const p of round) for (const i of p.items) planned.set(i, { ok: true, product: { $product: p.productId } });
      head = recorded ? recorder.complete(planned) : recorder.claim(planned);
      const ids = JSON.stringify([...touched, ...round.map((p) => p.productId)]);
      tail = [recorder.snapshot(`p.${P.id} IN (SELECT value FROM json_each(?1))`, ids)];
    }
    // The version the write leaves, for the answer's ETag: read in the batch, so no later change slips in.
    if (ifMatch) tail.push(stmt(db, VERSIONS, JSON.stringify(round.map((p) => p.productId))));
    if (!round.length) {
      if (head.length) await runClaimed(db, recorder?.idem, head, tail);
      if (head.length) recorded = true;
      for (const [i, o] of failed) outcomes.set(i, o);
      pending = later;
      continue;
    }
    const { statements, changes } = writeBatch(db, round, snap.products, now, options);
    let results: D1Result<Record<string, unknown>>[];
    try {
      results = await runClaimed(db, recorder?.idem, head, [...statements, ...tail]);
    } catch (e) {
      if (!isConstraintError(e)) throw e;
      // What a plan depended on changed since the read (or a SKU was taken meanwhile): the round
      // is planned again from a fresh read, which words any refusal.
      await afterLostRace(++attempt, "the product");
      continue;
    }
    for (const [i, o] of failed) outcomes.set(i, o);
    if (head.length) recorded = true;
    const version = ifMatch && results[results.length - 1].results[0];
    if (version) ifMatch.etag = productETag(Number(version.product_id), version.version);
    events.push(...committed(changes, results));
    if (changes.length) moved = true;
    for (const p of round) touched.add(p.productId);
    const texts = results[results.length - tail.length - 1].results;
    // SQLite's text of each product, full or minimal, carried into the answer (src/products/route.ts).
    const out = new Map(texts.map((r) => [Number(r.id), ProductText.of(r)]));
    for (const p of round) {
      const product = out.get(p.productId);
      for (const i of p.items) {
        outcomes.set(i, product ? { ok: true, product } : fail(404, `product ${p.productId} was deleted meanwhile`));
      }
    }
    pending = later;
  }
  return moved ? { outcomes, events } : { outcomes, events, unchanged: true };
}
