import type { DB } from "../../db/client";
import { runBatch, stmt } from "../../platform/d1";
import { VERSION_OF } from "../version";
import { RoundClaims } from "./claims";
import { plan } from "./plan";
import { type Read, readOf, refusalReads } from "./refusal-read";
import { type Claims, type Refusal, refusal } from "./refusals";
import { type Failed, type Snapshot, select, snapshotOf, snapshotReads, type Target, type UpdateItem } from "./select";
import { CLEAR, MATCHES, plans } from "./variants-match";
import { MODE, type Resolved, type RoundItem, type SqlList } from "./variants-route";

// What a refused batch of the SQL plan refused (docs/design.md, "Writes"): the batch wrote
// nothing and said only that a constraint failed; a read batch runs the same plan again into the
// scratch table, reads what the wording needs and empties the table, and ./refusals.ts words it
// from the plan's matches. "plan": a form ./refusals.ts does not word (none is known; the caller
// fails it as an internal error); undefined: nothing is refused now (a concurrent writer changed the product in between),
// and the write is tried again from a fresh read.
// Of two or three lists (a selected variant's leading entry is one) the read runs the plan of the
// first list of the body (the leading entry aside), which matches the variants as stored, and
// ./refusals.ts applies the lists after it to the states it leaves.

/**
 * One item's refusal: from the lean read first, and from the full one when only the answer size
 * can be refused (./refusal-read.ts).
 */
export async function diagnose(db: DB, list: SqlList, resolved: Resolved): Promise<Refusal | "changed"> {
  const own = byEntries(list);
  // "changed": the If-Match's version is no longer the product's (its guard refused the batch).
  if (resolved.version !== undefined && !list.refused && !resolved.refused) {
    const [now] = await runBatch(db, [stmt(db, VERSION_OF, resolved.productId)]);
    if (Number(now.results[0]?.version) !== resolved.version) return "changed";
  }
  if (own) return entriesRefusal(db, { list, resolved }, own);
  // The lean read holds only other products' SKUs, so a selection is found again in the full one;
  // it reads one list.
  const several = list.lists.length > 1;
  const lean = resolved.selected || several ? "full" : await diagnosed(db, { list, resolved }, true);
  if (lean !== "full") return lean;
  const full = await diagnosed(db, { list, resolved }, false);
  return full === "full" ? undefined : full;
}

/** The list whose matches the wording reads: the first, or the one after a leading entry. */
const first = (list: SqlList) => (list.lead && list.lists.length > 1 ? 1 : 0);

/** The item with the lists its wording matches: those after a leading entry. */
function afterLead(r: RoundItem): RoundItem {
  const k = first(r.list);
  return k ? { ...r, list: { ...r.list, lists: r.list.lists.slice(k) } as SqlList } : r;
}

/**
 * Lists whose entries are matched without the plan: any after an empty sync (nothing is left to
 * match), and an update alone naming a variant twice (matched by id; the plan merges its entries,
 * the wording applies them in order).
 */
function byEntries({ item, lists, lead }: SqlList): "emptied" | "merged" | undefined {
  const { sync, add, update } = item.data.variants ?? {};
  if (lead || lists.length > (sync ? 2 : 1)) return undefined;
  if (sync?.length === 0 && (add?.length || update?.length)) return "emptied";
  const ids = new Set(update?.map((e) => e.variant_id));
  return !sync && !add?.length && update && ids.size < update.length ? "merged" : undefined;
}

/** The refusal of lists matched without the plan (`byEntries`), from the full read alone. */
async function entriesRefusal(db: DB, { list, resolved }: RoundItem, by: "emptied" | "merged"): Promise<Refusal> {
  const snap = snapshotOf(await runBatch(db, snapshotReads(db, [list.item])));
  const t = select(list.item, snap);
  if ("ok" in t) return t;
  const words = refusal(t, entriesRead(t, snap, by), false, { several: by === "emptied", slugless: resolved.slugless });
  return words === "full" ? undefined : words;
}

/**
 * The matches of lists matched without the plan: after an empty sync the lists after it apply to
 * no variant (the sync matched none); a merged update's entries name their variants by id.
 */
function entriesRead(t: Target, snap: Snapshot, by: "emptied" | "merged"): Read {
  const { update = [] } = t.item.data.variants ?? {};
  const of = (id: number) => (snap.variantById.get(id)?.productId === t.product.id ? id : null);
  return { snap, matches: by === "merged" ? update.map((e) => of(e.variant_id)) : [], sound: 0 };
}

async function diagnosed(db: DB, item: RoundItem, lean: boolean): Promise<Refusal | "full"> {
  const { list, resolved } = item;
  // Entries that disagree on names travel as no list: their words need no match.
  const k = first(list);
  const mode = list.lists[k]?.mode ?? MODE.update;
  const { sync, add, update } = list.item.data.variants ?? {};
  const count = list.lists.length ? (sync ?? add ?? update ?? []).length : 0;
  const of = {
    item: list.item,
    productId: resolved.productId,
    sync: mode === MODE.sync,
    add: mode === MODE.add,
    count,
  };
  const ps = plans(db, [item], k);
  const results = await runBatch(db, [...ps, ...refusalReads(db, of, lean), stmt(db, CLEAR)]);
  const read = readOf(results.slice(ps.length, -1), of, lean);
  if (read === "full") return read;
  const t = select(list.item, read.snap);
  if ("ok" in t) return t;
  if (mode === MODE.sync) afterLeadSku(t, read);
  return refusal(t, read, lean, { several: list.lists.length > 1, slugless: resolved.slugless });
}

/**
 * A variant selected by id that takes a SKU (or none) in its leading entry no longer has its old
 * one when the sync after it matches by SKU, as ./plan.ts matches it (the plan of the sync read
 * here matched the SKUs as stored): an entry naming the old SKU matches nothing, one naming the
 * new SKU the selected variant, or another variant of the product that has it and comes later.
 */
function afterLeadSku(t: Target, read: Read) {
  const s = t.variant;
  const sku = t.item.data.sku;
  if (!s || t.bySku || sku === undefined || sku === s.sku) return;
  const order = read.snap.variants.get(t.product.id) ?? [];
  const at = (id: number) => order.findIndex((v) => v.id === id);
  t.item.data.variants?.sync?.forEach((e, i) => {
    if (e.sku === undefined || e.sku === null) return;
    if (e.sku === s.sku) read.matches[i] = null;
    else if (e.sku === sku) {
      const other = read.matches[i];
      if (other === null || at(s.id) > at(other)) read.matches[i] = s.id;
    }
  });
}

/**
 * Each item's refusal of a refused round of several (./variants-rounds.ts), from one full read:
 * its own, or, in the body's order, a SKU or slug an earlier item nothing refuses claims too; for
 * a product without a slug, the slug derived (the round is written again with it). "plan": an item
 * under an If-Match (rounds take none). Undefined: nothing refused, or a selection naming another
 * product now (a concurrent writer), which the rounds read again. `bare`: the round's items
 * without a variant list and their products, planned again by ./plan.ts from the same read.
 */
export async function diagnoseRound(db: DB, round: RoundItem[], bare: Bare[] = []): Promise<Map<number, Refusal>> {
  const out = new Map<number, Refusal>();
  const worded = round.filter(({ list, resolved }) => {
    const ok = resolved.version === undefined;
    if (!ok) out.set(list.item.index, "plan");
    return ok;
  });
  if (!worded.length && !bare.length) return out;
  // A leading entry's item is matched by the list after it, as one item's read matches it.
  const ps = worded.length ? plans(db, worded.map(afterLead), 0) : [];
  const items = [...worded.map((r) => r.list.item), ...bare.map((b) => b.item)];
  const results = await runBatch(db, [...ps, stmt(db, MATCHES), ...snapshotReads(db, items), stmt(db, CLEAR)]);
  const [matched, ...read] = results.slice(ps.length);
  const snap = snapshotOf(read.slice(0, -1));
  const matches = new Map<number, (number | null)[]>();
  for (const r of matched.results) {
    const pid = Number(r.pid);
    if (!matches.has(pid)) matches.set(pid, []);
    matches.get(pid)?.push(r.vid === null ? null : Number(r.vid));
  }
  const claimed = new RoundClaims();
  const inOrder = [...worded, ...bare].sort((a, b) => indexOf(a) - indexOf(b));
  for (const r of inOrder) {
    if (!("list" in r)) {
      out.set(r.item.index, bareRefusal(r, snap, claimed));
      continue;
    }
    const { list, resolved } = r;
    const t = select(list.item, snap);
    // A selection that names another product now (a concurrent writer): nothing to word, the
    // rounds read it again.
    if (!("ok" in t) && t.product.id !== resolved.productId) {
      out.set(list.item.index, undefined);
      continue;
    }
    const by = byEntries(list);
    const read =
      by && !("ok" in t)
        ? entriesRead(t, snap, by)
        : { snap, matches: matches.get(resolved.productId) ?? [], sound: 0 };
    if (!by && !("ok" in t) && list.lists[first(list)]?.mode === MODE.sync) afterLeadSku(t, read);
    const claims: Claims = { skus: [] };
    const several = by ? by === "emptied" : list.lists.length > 1;
    const words = "ok" in t ? t : refusal(t, read, false, { several, claims, slugless: resolved.slugless });
    const own = words === "full" ? undefined : words;
    out.set(list.item.index, own ?? claimed.take(list.item.index, claims.skus, claims.slug));
  }
  return out;
}

/** An item of a round without a variant list, and the product it was planned for. */
export type Bare = { item: UpdateItem; productId: number };

const indexOf = (r: RoundItem | Bare) => ("list" in r ? r.list.item.index : r.item.index);

/** A round's item without a list planned again from the read: refused, a claim an earlier item takes, or nothing. */
function bareRefusal(b: Bare, snap: Snapshot, claimed: RoundClaims): Failed | undefined {
  const t = select(b.item, snap);
  if ("ok" in t) return t;
  // It names another product now (a concurrent writer): not refused. It stays planned as read, or,
  // when nothing else of the round is refused either, the rounds read it again.
  if (t.product.id !== b.productId) return undefined;
  const planned = plan(t, snap);
  return "ok" in planned ? planned : claimed.take(b.item.index, planned.claims, planned.slugClaim);
}
