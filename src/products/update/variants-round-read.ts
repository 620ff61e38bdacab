import type { DB } from "../../db/client";
import { products, skus, variants } from "../../db/schema";
import { sqlNames } from "../../platform/columns";
import { runBatch, stmt } from "../../platform/d1";
import type { ItemOutcome } from "../create";
import { VERSION_SQL } from "../version";
import { misplaced, notFound, type ResolveRow, type RoundItem, resolvedFrom, type SqlList } from "./variants-route";

// The read before the rounds (./variants-rounds.ts) of a body whose items need one: a selection by
// variant id or SKU, or product fields derived from the stored product (a head category merged
// into its paths, a slug from its title). One statement for every item of the body, its selectors
// bound as one JSON list, reading what RESOLVE (./variants-route.ts) reads for one item; each
// round's batch re-checks it (./variants-guards.ts, roundConditions). It runs before each round
// whose items need it, as the general planner reads the catalog before each of its rounds: a
// selection that finds nothing is the 404 it answers, and an item of a later round finds what the
// rounds before it left (a SKU synced away, a title its slug derives from).

const P = sqlNames(products);
const V = sqlNames(variants);
const K = sqlNames(skus);

// ?1: [[product id, variant id, SKU]] per item (nulls but for its selector); `at`: the item's place.
const RESOLVE_ROUND = `
  SELECT r.key AS at, p.${P.id} AS id, ${VERSION_SQL} AS version, p.${P.categories} AS categories, p.${P.title} AS title,
    (SELECT k.${K.variantId} FROM ${K.$} AS k WHERE k.${K.sku} = r.value->>2) AS variant
  FROM json_each(?1) AS r JOIN ${P.$} AS p ON p.${P.id} = coalesce(r.value->>0,
    (SELECT v.${V.productId} FROM ${V.$} AS v WHERE v.${V.id} = r.value->>1),
    (SELECT k.${K.productId} FROM ${K.$} AS k WHERE k.${K.sku} = r.value->>2))`;

/** Whether the item's product or fields are known only from a read. */
export const needsRead = ({ selector: s, stored }: SqlList) =>
  !("productId" in s || "none" in s) || stored !== undefined;

/**
 * The round items with their products, and the outcomes of selections that find nothing;
 * undefined when an item's read cannot route it (the product's own SKU selected with variant
 * fields that `variantInSql` does not take without them; none is known). `more`: statements read in
 * the same call (the read of the round's items without a list), their results in `more`.
 */
export async function readRoundItems(
  db: DB,
  lists: SqlList[],
  more: D1PreparedStatement[] = [],
): Promise<
  { items: RoundItem[]; missing: Map<number, ItemOutcome>; more: D1Result<Record<string, unknown>>[] } | undefined
> {
  const read = lists.filter(needsRead);
  const rows = new Map<number, ResolveRow>();
  const selectors = read.map(({ selector: s }) => [
    "productId" in s ? s.productId : null,
    "variantId" in s ? s.variantId : null,
    "sku" in s ? s.sku : null,
  ]);
  const resolve = read.length ? [stmt(db, RESOLVE_ROUND, JSON.stringify(selectors))] : [];
  const results = resolve.length || more.length ? await runBatch(db, [...resolve, ...more]) : [];
  for (const row of resolve.length ? results[0].results : []) rows.set(Number(row.at), row as ResolveRow);
  const items: RoundItem[] = [];
  const missing = new Map<number, ItemOutcome>();
  let at = 0;
  for (const list of lists) {
    // An item naming no product: the 400 ./select.ts words, without a read.
    if ("none" in list.selector) {
      missing.set(list.item.index, notFound(list));
      continue;
    }
    if (!needsRead(list)) {
      items.push({ list, resolved: { productId: (list.selector as { productId: number }).productId } });
      continue;
    }
    const row = rows.get(at++);
    if (!row) {
      missing.set(list.item.index, notFound(list));
      continue;
    }
    // A variant of another product than the one given beside it: the 404 ./select.ts words.
    const other = misplaced(list, row);
    if (other) {
      missing.set(list.item.index, other);
      continue;
    }
    // Refused by what was read (`refused`: a head category merged past the bound), the item is
    // held as one refused as it is (./variants-rounds.ts), worded from the rounds' read.
    const resolved = resolvedFrom(list, row);
    if (!resolved) return undefined;
    items.push({ list, resolved });
  }
  return { items, missing, more: results.slice(resolve.length) };
}
