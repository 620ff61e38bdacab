import type { DB } from "../../db/client";
import { products, productVersions, skus, staleReads, variants } from "../../db/schema";
import { sqlNames } from "../../platform/columns";
import { stmt } from "../../platform/d1";
import { STOCK } from "../entries";
import { MODE, type RoundItem } from "./variants-route";

// The one-product conditions of the SQL plan's batch (./variants-sql.ts): what `resolve` read
// (./variants-route.ts) still as read, the counts an item expects as stored, and what an empty
// sync or an update's merged entries need. Each fails the batch through stale_reads' always-false
// CHECK, so nothing is written and the refusal is worded from a read (./diagnose.ts).

const P = sqlNames(products);
const V = sqlNames(variants);
const K = sqlNames(skus);
const STALE = sqlNames(staleReads);
const PV = sqlNames(productVersions);

// An empty sync plans nothing: the product must be there, with a slug unless the batch writes one
// (?2: 1; see PLAN).
export const EMPTY_GUARD = `
  INSERT INTO ${STALE.$} (${STALE.productId})
  SELECT ?1 WHERE NOT EXISTS (SELECT 1 FROM ${P.$} WHERE ${P.id} = ?1 AND (${P.slug} IS NOT NULL OR ?2))`;
// A slug derived where the product had none (./variants-route.ts, Resolved.slugless): still none.
const SLUGLESS_GUARD = `
  INSERT INTO ${STALE.$} (${STALE.productId})
  SELECT ?1 WHERE (SELECT ${P.slug} FROM ${P.$} WHERE ${P.id} = ?1) IS NOT NULL`;

// ?2: [variant id, amount] pairs: counts an update list's merged entries reach on the way (the
// stored count, as the lists before leave it, moved by the amounts so far), past the largest.
export const RANGE_GUARD = `
  INSERT INTO ${STALE.$} (${STALE.productId})
  SELECT ?1 FROM json_each(?2) AS j WHERE abs((SELECT v.${V.qty} FROM ${V.$} AS v
    WHERE v.${V.id} = j.value->>0 AND v.${V.productId} = ?1) + (j.value->>1)) > ${STOCK}`;
// ?2: the product's own stock the item expects (beside an empty sync), as stored.
export const OWN_EXPECTED_GUARD = `
  INSERT INTO ${STALE.$} (${STALE.productId})
  SELECT ?1 WHERE (SELECT ${P.stock} FROM ${P.$} WHERE ${P.id} = ?1) IS NOT ?2`;

// The conditions of a resolved item (./variants-route.ts): the version an If-Match named, and the
// variant or SKU owner a selection read, still as read when the batch runs.
const VERSION_GUARD = `
  INSERT INTO ${STALE.$} (${STALE.productId})
  SELECT ?1 WHERE (SELECT ${PV.version} FROM ${PV.$} WHERE ${PV.productId} = ?1) IS NOT ?2`;
const SELECTED_GUARD = `
  INSERT INTO ${STALE.$} (${STALE.productId})
  SELECT ?1 WHERE NOT EXISTS (SELECT 1 FROM ${V.$} WHERE ${V.id} = ?2 AND ${V.productId} = ?1)`;
// ?2: [variant id, qty] pairs, update entries' expected_qty beside a sync, of the counts as stored
// before the lists run (./plan.ts checks them against the read).
const EXPECTED_GUARD = `
  INSERT INTO ${STALE.$} (${STALE.productId})
  SELECT ?1 FROM json_each(?2) AS j WHERE (SELECT v.${V.qty} FROM ${V.$} AS v
    WHERE v.${V.id} = j.value->>0 AND v.${V.productId} = ?1) IS NOT j.value->>1`;
// The stored categories a head category was merged into (./variants-route.ts, resolve).
const CATEGORIES_GUARD = `
  INSERT INTO ${STALE.$} (${STALE.productId})
  SELECT ?1 WHERE (SELECT ${P.categories} FROM ${P.$} WHERE ${P.id} = ?1) IS NOT ?2`;
const OWNER_GUARD = `
  INSERT INTO ${STALE.$} (${STALE.productId})
  SELECT ?1 WHERE NOT EXISTS (SELECT 1 FROM ${K.$} WHERE ${K.sku} = ?2 AND ${K.productId} = ?1 AND ${K.variantId} IS ?3)`;

/** The statements that re-check what `resolve` read, and the counts an item expects as stored. */
export function conditions(db: DB, { list, resolved: r }: RoundItem): D1PreparedStatement[] {
  const out = r.version === undefined ? [] : [stmt(db, VERSION_GUARD, r.productId, r.version)];
  const s = r.selected;
  if (s && "sku" in s) out.push(stmt(db, OWNER_GUARD, r.productId, s.sku, s.variantId));
  else if (s) out.push(stmt(db, SELECTED_GUARD, r.productId, s.variantId));
  if (r.categories !== undefined) out.push(stmt(db, CATEGORIES_GUARD, r.productId, r.categories));
  if (list.expected) out.push(stmt(db, EXPECTED_GUARD, r.productId, list.expected));
  if (r.slugless && list.item.data.slug === undefined) out.push(stmt(db, SLUGLESS_GUARD, r.productId));
  return out;
}

// The same conditions for the items of a round of several (./variants-rounds.ts), each a fixed
// statement over one JSON list of the round's items, so their number does not grow with the items.
const r0 = "r.value->>0";
const VERSIONS_GUARD = `
  INSERT INTO ${STALE.$} (${STALE.productId})
  SELECT ${r0} FROM json_each(?1) AS r
  WHERE (SELECT ${PV.version} FROM ${PV.$} WHERE ${PV.productId} = ${r0}) IS NOT r.value->>1`;
const SELECTED_ROUND = `
  INSERT INTO ${STALE.$} (${STALE.productId})
  SELECT ${r0} FROM json_each(?1) AS r
  WHERE NOT EXISTS (SELECT 1 FROM ${V.$} WHERE ${V.id} = r.value->>1 AND ${V.productId} = ${r0})`;
const OWNERS_ROUND = `
  INSERT INTO ${STALE.$} (${STALE.productId})
  SELECT ${r0} FROM json_each(?1) AS r WHERE NOT EXISTS (SELECT 1 FROM ${K.$}
    WHERE ${K.sku} = r.value->>1 AND ${K.productId} = ${r0} AND ${K.variantId} IS r.value->>2)`;
const CATEGORIES_ROUND = `
  INSERT INTO ${STALE.$} (${STALE.productId})
  SELECT ${r0} FROM json_each(?1) AS r
  WHERE (SELECT ${P.categories} FROM ${P.$} WHERE ${P.id} = ${r0}) IS NOT r.value->>1`;
// ?1: [product id, [[variant id, qty]]] per item.
const EXPECTED_ROUND = `
  INSERT INTO ${STALE.$} (${STALE.productId})
  SELECT ${r0} FROM json_each(?1) AS r, json_each(r.value->1) AS j WHERE (SELECT v.${V.qty} FROM ${V.$} AS v
    WHERE v.${V.id} = j.value->>0 AND v.${V.productId} = ${r0}) IS NOT j.value->>1`;

// ?1: [[product id]] of items whose slug was derived where the product had none: still none.
const SLUGLESS_ROUND = `
  INSERT INTO ${STALE.$} (${STALE.productId})
  SELECT ${r0} FROM json_each(?1) AS r WHERE (SELECT ${P.slug} FROM ${P.$} WHERE ${P.id} = ${r0}) IS NOT NULL`;

/** `conditions` of every item of a round, one statement per kind of condition. */
export function roundConditions(db: DB, round: RoundItem[]): D1PreparedStatement[] {
  if (round.length === 1) return conditions(db, round[0]);
  const rows: unknown[][][] = [[], [], [], [], [], []];
  for (const { list, resolved: r } of round) {
    const s = r.selected;
    if (r.version !== undefined) rows[0].push([r.productId, r.version]);
    if (s && "sku" in s) rows[1].push([r.productId, s.sku, s.variantId]);
    else if (s) rows[2].push([r.productId, s.variantId]);
    if (r.categories !== undefined) rows[3].push([r.productId, r.categories]);
    if (list.expected) rows[4].push([r.productId, JSON.parse(list.expected)]);
    if (r.slugless && list.item.data.slug === undefined) rows[5].push([r.productId]);
  }
  const sqls = [VERSIONS_GUARD, OWNERS_ROUND, SELECTED_ROUND, CATEGORIES_ROUND, EXPECTED_ROUND, SLUGLESS_ROUND];
  return rows.flatMap((list, i) => (list.length ? [stmt(db, sqls[i], JSON.stringify(list))] : []));
}

// An empty sync's product (?1: [[product id, whether the batch writes its slug]]), its own stock expected ([[product id, qty]]) and an
// update's running counts ([[product id, [[variant id, amount]]]]), for a round of several.
const EMPTY_ROUND = `
  INSERT INTO ${STALE.$} (${STALE.productId})
  SELECT ${r0} FROM json_each(?1) AS r
  WHERE NOT EXISTS (SELECT 1 FROM ${P.$} WHERE ${P.id} = ${r0} AND (${P.slug} IS NOT NULL OR r.value->>1))`;
const OWN_EXPECTED_ROUND = `
  INSERT INTO ${STALE.$} (${STALE.productId})
  SELECT ${r0} FROM json_each(?1) AS r WHERE (SELECT ${P.stock} FROM ${P.$} WHERE ${P.id} = ${r0}) IS NOT r.value->>1`;
const RANGE_ROUND = `
  INSERT INTO ${STALE.$} (${STALE.productId})
  SELECT ${r0} FROM json_each(?1) AS r, json_each(r.value->1) AS j WHERE abs((SELECT v.${V.qty} FROM ${V.$} AS v
    WHERE v.${V.id} = j.value->>0 AND v.${V.productId} = ${r0}) + (j.value->>1)) > ${STOCK}`;

// ?1: [[product id, option names]] of items whose sync takes the names another list gives
// (./variants-route.ts, borrowNames): the product has none, or those.
const NAMES_ROUND = `
  INSERT INTO ${STALE.$} (${STALE.productId})
  SELECT ${r0} FROM json_each(?1) AS r JOIN ${P.$} AS p ON p.${P.id} = ${r0}
  WHERE p.${P.optionNames} <> '[]' AND json(p.${P.optionNames}) <> json(r.value->1)`;

/** NAMES_ROUND before the k-th lists, for the items whose k-th list is a sync that borrowed names. */
function namesGuard(db: DB, at: RoundItem[], k: number): D1PreparedStatement[] {
  const rows = at.flatMap(({ list, resolved }) =>
    list.borrowed && list.lists[k].mode === MODE.sync ? [[resolved.productId, list.borrowed]] : [],
  );
  return rows.length ? [stmt(db, NAMES_ROUND, JSON.stringify(rows))] : [];
}

/**
 * The guards before the k-th lists of a round (`at`, `empty` those that are an empty sync): one
 * statement per item for a round of one, one per kind of guard for a round of several.
 */
export function listGuards(db: DB, at: RoundItem[], empty: RoundItem[], k: number): D1PreparedStatement[] {
  if (at.length === 1) {
    const [{ list, resolved }] = at;
    const id = resolved.productId;
    const { ranges } = list.lists[k];
    return [
      ...namesGuard(db, at, k),
      ...(empty.length ? [stmt(db, EMPTY_GUARD, id, slugged(at[0]).d ?? 0)] : []),
      ...(empty.length && list.ownExpected !== undefined ? [stmt(db, OWN_EXPECTED_GUARD, id, list.ownExpected)] : []),
      ...(ranges ? [stmt(db, RANGE_GUARD, id, ranges)] : []),
    ];
  }
  const expected = empty.flatMap(({ list, resolved }) =>
    list.ownExpected === undefined ? [] : [[resolved.productId, list.ownExpected]],
  );
  const ranges = at.flatMap(({ list, resolved }) => {
    const r = list.lists[k].ranges;
    return r ? [[resolved.productId, JSON.parse(r)]] : [];
  });
  return [
    ...namesGuard(db, at, k),
    ...(empty.length
      ? [stmt(db, EMPTY_ROUND, JSON.stringify(empty.map((r) => [r.resolved.productId, slugged(r).d ?? 0])))]
      : []),
    ...(expected.length ? [stmt(db, OWN_EXPECTED_ROUND, JSON.stringify(expected))] : []),
    ...(ranges.length ? [stmt(db, RANGE_ROUND, JSON.stringify(ranges))] : []),
  ];
}

/** `d: 1` when the batch writes the item's slug: given, derived again, or derived where the product has none. */
export const slugged = ({ list, resolved }: RoundItem) =>
  list.item.data.slug !== undefined || resolved.fields?.slug !== undefined ? { d: 1 } : {};
