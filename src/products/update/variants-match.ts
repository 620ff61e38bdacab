import type { DB } from "../../db/client";
import { products, skus, variantSync, variants } from "../../db/schema";
import { optionColumn, sqlNames } from "../../platform/columns";
import { MAX_JSON_BYTES, stmt } from "../../platform/d1";
import { STOCK } from "../entries";
import { ADJUST, at, EXPECTED, given, SLOTS, VARIANT_ID, value } from "../packed";
import { slugged } from "./variants-guards";
import { MODE, type RoundItem, type SqlList } from "./variants-route";

// The match of a variant list planned in SQL (./variants-sql.ts): PLAN matches each entry against
// the variants where they are (a sync by SKU through the registry, else by option values through
// the unique combination index; an update by variant id; an add matches nothing) and writes the
// match into the scratch table, one row per entry: the variant it matched, the option values it
// leaves, whether the rules refuse it, and the entry. The write batch (./variants-sql.ts) guards
// and applies those rows; the read batch that words a refusal (./diagnose.ts) runs the same PLAN
// and reads them back (MATCHES), so the entries are matched by this plan only.

const each = (f: (n: number) => string, sep: string) => SLOTS.map(f).join(sep);

// Tables and columns through the schema (src/platform/columns.ts).
const P = sqlNames(products);
const V = sqlNames(variants);
const S = sqlNames(variantSync);
const K = sqlNames(skus);
/** Option slot n's column of the variants (vo) and of the scratch table (so). */
const vo = (n: number) => optionColumn(V, n);
const so = (n: number) => optionColumn(S, n);

/**
 * An entry's place in the scratch table: its item's place in the round times PLACE, plus its
 * position (the entry's place in its list, after the product's last variant for an add).
 */
const PLACE = 4_294_967_296;

/** SQL: the position an entry's variant takes, from the entry's place in the scratch table. */
export const positionOf = (entry: string) => `${entry} % ${PLACE}`;

// The product's own SKU (the registry's row without a variant) is taken from an add's entry unless
// the fields beside the list give the product another (k: [that SKU, or null]): the batch writes
// them before the new variants (the product's fields apply first).
const ownSkuTaken = `(k.${K.variantId} IS NOT NULL OR r.own IS NULL OR k.${K.sku} IS r.own->>0)`;

/** k of PLAN's ?1: the SKU the fields beside the list give the product, if they give one. */
const ownSku = (list: SqlList) => (list.product && "sku" in list.product ? { k: [list.product.sku] } : {});

/**
 * ?1 the round's items [{p: product id, m: list (MODE), n: the option names the entries give
 * (null: none), f: the place of the first entry in its list, s: the place of the first in ?2, c:
 * their number, o: the item's place in the round, d: 1 when the batch writes its slug, k: the
 * SKU the fields beside the list give the product, ownSku}], ?2 their packed entries, one list. The
 * names are the product's unless a sync gives others (a rename: every entry then gives values,
 * unless the count of options stays) or it has none yet (its first variants). Entries of an add
 * or update whose names differ, or of a product that has no slug yet unless the batch writes one
 * (derived after a read finds none: ./variants-rounds.ts, writeVariants), give no rows, which the
 * guard refuses (./variants-sql.ts, GUARD). A sync matches by SKU, else by the values (an
 * entry naming a variant by SKU without values keeps its values); an update by id, changing the
 * values it gives; an add matches nothing (a combination or an own SKU that exists is refused)
 * and places its entries after the product's last variant.
 */
const plan = (stock: boolean) => `
  INSERT INTO ${S.$} (${S.entry}, ${S.productId}, ${S.variantId}, ${each(so, ", ")}, ${S.bad}, ${S.data})
  WITH i AS MATERIALIZED (
    SELECT i.value->>'p' AS pid, i.value->>'m' AS mode, i.value->>'n' AS names, i.value->>'f' AS off,
      i.value->>'s' AS start, i.value->>'c' AS cnt, i.value->>'o' AS ord, i.value->>'d' AS slugged, i.value->'k' AS own
    FROM json_each(?1) AS i
  ), p AS MATERIALIZED (
    SELECT p.${P.id} AS pid, i.mode, i.off, i.start, i.cnt, i.ord, i.own,
      json_array_length(coalesce(i.names, p.${P.optionNames})) AS n, json_array_length(p.${P.optionNames}) AS cur,
      iif(i.mode = ${MODE.add}, (SELECT coalesce(max(v.${V.position}), -1) + 1 FROM ${V.$} AS v WHERE v.${V.productId} = p.${P.id}), 0) AS first
    FROM i JOIN ${P.$} AS p ON p.${P.id} = i.pid
    WHERE (p.${P.slug} IS NOT NULL OR i.slugged)
      AND (i.names IS NULL OR i.mode = ${MODE.sync} OR json(i.names) = json(p.${P.optionNames}) OR p.${P.optionNames} = '[]')
  ), e AS MATERIALIZED (
    SELECT p.ord * ${PLACE} + j.key - p.start + p.first + p.off AS entry, j.value AS data, p.pid, p.n, p.cur, p.mode, p.own,
      ${at("j.value", "sku")} AS sku, j.value->>'$[${VARIANT_ID}]' AS variant_id,
      ${stock ? `j.value->>'$[${ADJUST}]'` : "NULL"} AS adjust, ${stock ? `j.value->>'$[${EXPECTED}]'` : "NULL"} AS expected,
      ${each((n) => `${at("j.value", value(n))} AS v${n}`, ", ")}
    FROM p, json_each(?2) AS j WHERE p.n > 0 AND j.key >= p.start AND j.key < p.start + p.cnt
  ), t AS (
    SELECT e.*, ${each((n) => `iif(n >= ${n}, coalesce(v${n}, ''), '') AS t${n}`, ", ")},
      (${each((n) => `v${n} IS NULL`, " AND ")}) AS novalues,
      (${each((n) => `(n >= ${n} AND v${n} IS NULL)`, " OR ")}) AS missing,
      (${each((n) => `(n < ${n} AND v${n} IS NOT NULL)`, " OR ")}) AS extra
    FROM e
  ), r AS MATERIALIZED (
    SELECT t.*, CASE
      WHEN t.mode = ${MODE.update} THEN (SELECT v.${V.id} FROM ${V.$} AS v WHERE v.${V.id} = t.variant_id AND v.${V.productId} = t.pid)
      WHEN t.mode = ${MODE.sync} AND sku IS NOT NULL THEN (SELECT k.${K.variantId} FROM ${K.$} AS k WHERE k.${K.sku} = t.sku AND k.${K.productId} = t.pid)
      ELSE (SELECT v.${V.id} FROM ${V.$} AS v WHERE v.${V.productId} = t.pid AND ${each((n) => `v.${vo(n)} = t.t${n}`, " AND ")})
    END AS vid
    FROM t
  )
  SELECT r.entry, r.pid, r.vid,
    ${each((n) => `CASE WHEN r.mode = ${MODE.update} THEN coalesce(r.v${n}, m.${vo(n)}, '') WHEN r.keeps THEN m.${vo(n)} ELSE r.t${n} END`, ", ")},
    r.data IS NULL OR CASE r.mode
      WHEN ${MODE.sync} THEN NOT r.keeps AND (r.missing OR r.extra)
      WHEN ${MODE.add} THEN r.missing OR r.extra OR r.vid IS NOT NULL OR (r.sku IS NOT NULL AND EXISTS (
        SELECT 1 FROM ${K.$} AS k WHERE k.${K.sku} = r.sku AND k.${K.productId} = r.pid AND ${ownSkuTaken}))
      ELSE r.vid IS NULL OR r.extra
        OR (r.expected IS NOT NULL AND m.${V.qty} IS NOT r.expected)
        OR (r.adjust IS NOT NULL AND (${given("r.data", "qty")} OR abs(m.${V.qty} + r.adjust) > ${STOCK})) END, r.data
  FROM (SELECT *, mode = ${MODE.sync} AND sku IS NOT NULL AND vid IS NOT NULL AND novalues AND n = cur AS keeps FROM r) AS r
  LEFT JOIN ${V.$} AS m ON m.${V.id} = r.vid`;
// Lists without `adjust` or `expected_qty` (most) read neither: 2,048 lookups fewer in SQLite.
const PLAN = plan(false);
const PLAN_STOCK = plan(true);

/**
 * PLAN over each item's k-th list: the items' entries bound as one list, in as few statements as
 * the bound values allow (one but for lists of long image lists).
 */
export function plans(db: DB, round: RoundItem[], k: number): D1PreparedStatement[] {
  const out: D1PreparedStatement[] = [];
  let meta: Record<string, unknown>[] = [];
  let parts: string[] = [];
  let size = 0;
  let count = 0;
  let stock = false;
  const flush = () => {
    if (meta.length) out.push(stmt(db, stock ? PLAN_STOCK : PLAN, JSON.stringify(meta), `[${parts.join(",")}]`));
    [meta, parts, size, count, stock] = [[], [], 0, 0, false];
  };
  round.forEach(({ list, resolved }, o) => {
    const l = list.lists[k];
    if (!l) return;
    for (const [part, from, c] of l.entries) {
      if (meta.length && size + part.length > MAX_JSON_BYTES / 3) flush();
      meta.push({
        p: resolved.productId,
        m: l.mode,
        n: l.names,
        f: from,
        s: count,
        c,
        o,
        ...slugged(round[o]),
        ...ownSku(list),
      });
      if (c) parts.push(part.slice(1, -1));
      size += part.length;
      count += c;
      stock ||= l.stock;
    }
  });
  flush();
  return out;
}

/** Empties the scratch table, which every batch leaves empty (each list after the first starts from an empty one). */
export const CLEAR = `DELETE FROM ${S.$}`;

/** The scratch table's matches in list order, per product (./diagnose.ts). */
export const MATCHES = `SELECT ${S.productId} AS pid, ${S.variantId} AS vid FROM ${S.$} ORDER BY ${S.entry}`;
