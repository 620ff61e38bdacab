import type { DB } from "../../db/client";
import { products, productVersions, skus, staleReads, variants } from "../../db/schema";
import { sqlNames } from "../../platform/columns";
import { stmt } from "../../platform/d1";
import { STOCK } from "../entries";
import type { RoundItem } from "./variants-sql";

// The one-product conditions of the SQL plan's batch (./variants-sql.ts): what `resolve` read
// (./variants-route.ts) still as read, the counts an item expects as stored, and what an empty
// sync or an update's merged entries need. Each fails the batch through stale_reads' always-false
// CHECK, so nothing is written and the refusal is worded from a read (./diagnose.ts) or by the
// JavaScript plan.

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
