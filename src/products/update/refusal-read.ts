import type { DB } from "../../db/client";
import { products, skus, variantSync, variants } from "../../db/schema";
import { optionColumn, sqlNames } from "../../platform/columns";
import { stmt } from "../../platform/d1";
import { STOCK } from "../entries";
import { ADJUST, at, EXPECTED, given, SLOTS } from "../packed";
import type { VariantRow } from "../present";
import {
  namedSkus,
  READ_PRODUCTS,
  READ_SLUGS,
  type Snapshot,
  snapshotOf,
  snapshotReads,
  type UpdateItem,
} from "./select";

// What a refused variant list is worded from (./refusals.ts): the reads that follow the plan
// (./variants-match.ts, PLAN) in the batch that diagnoses the refusal, and what they give.
//
// The lean read (the first) has the product as ./select.ts reads it and, of the variants, only the
// columns the checks read, as JSON text (a row object per variant of every column cost more than
// the checks). A sync or an update reads only what a check can refuse, which SQL finds over the
// plan's rows and the variants as the list leaves them: an entry with a missing or extra value or
// of no variant of the product, a variant two entries match, a final combination or SKU two
// variants share, a SKU another product or the product itself has, a negative qty or one past the
// largest count, an update's expected_qty that is not the stored qty or adjust beside qty. Every
// other variant is sound as it stands, so the checks need only their count: a refusal of one bad
// entry in 2,048 reads a row or two. An add reads every stored variant (few checks could be
// spared: its entries are new). The owners are those of the body's SKUs that a check can name
// (another product's; the product's own in an add). The columns left out are blanks (`leanRow`),
// so the answer size, which reads them, is checked on the full read (./select.ts's snapshot
// reads, every variant with every column), as is a list the plan gave no row per entry.

const P = sqlNames(products);
const V = sqlNames(variants);
const K = sqlNames(skus);
const S = sqlNames(variantSync);
const vo = (n: number) => optionColumn(V, n);
const so = (n: number) => optionColumn(S, n);
const slots = (f: (n: number) => string) => SLOTS.map(f).join(", ");

/** The plan's match of each entry, in list order, as one JSON text. */
const MATCHES = `SELECT json_group_array(vid) AS list FROM (SELECT ${S.variantId} AS vid FROM ${S.$} ORDER BY ${S.entry})`;

const LEAN_VARIANTS = `SELECT json_group_array(json_array(${V.id}, ${V.sku}, ${V.qty}, ${V.position}, ${slots(vo)})) AS list
  FROM (SELECT * FROM ${V.$} WHERE ${V.productId} = ?1 ORDER BY ${V.position}, ${V.id})`;

const LEAN_OWNERS = `SELECT json_group_array(json_array(${K.sku}, ${K.productId}, ${K.variantId})) AS list FROM ${K.$}
  WHERE ${K.sku} IN (SELECT value FROM json_each(?1)) AND (${K.productId} <> ?2 OR ?3)`;

// A sync's entries a check can refuse, each with the variant it matched (its id, SKU, qty, position
// and values, as LEAN_VARIANTS), and how many rows the plan gave. ?1 the product, ?2 the SKU the
// body gives it. f: each entry's variant as the list leaves it.
const FLAGGED = `
  WITH f AS MATERIALIZED (
    SELECT s.${S.entry} AS entry, s.${S.variantId} AS vid, s.${S.bad} AS bad, ${slots((n) => `s.${so(n)} AS o${n}`)},
      iif(${given("s.data", "sku")}, ${at("s.data", "sku")}, m.${V.sku}) AS sku,
      iif(${given("s.data", "qty")}, ${at("s.data", "qty")}, m.${V.qty}) AS qty
    FROM ${S.$} AS s LEFT JOIN ${V.$} AS m ON m.${V.id} = s.${S.variantId}
  )
  SELECT (SELECT count(*) FROM f) AS planned,
    json_group_array(json_array(f.entry, m.${V.id}, m.${V.sku}, m.${V.qty}, m.${V.position}, ${slots((n) => `m.${vo(n)}`)})) AS list
  FROM f LEFT JOIN ${V.$} AS m ON m.${V.id} = f.vid
  WHERE f.bad OR f.qty < 0
    OR f.vid IN (SELECT vid FROM f WHERE vid IS NOT NULL GROUP BY vid HAVING count(*) > 1)
    OR (${slots((n) => `f.o${n}`)}) IN (SELECT ${slots((n) => `o${n}`)} FROM f GROUP BY ${slots((n) => `o${n}`)} HAVING count(*) > 1)
    OR f.sku IN (SELECT sku FROM f WHERE sku IS NOT NULL GROUP BY sku HAVING count(*) > 1)
    OR EXISTS (SELECT 1 FROM ${K.$} AS k WHERE k.${K.sku} = f.sku AND k.${K.productId} <> ?1)
    OR f.sku = (SELECT ${P.sku} FROM ${P.$} WHERE ${P.id} = ?1) OR f.sku = ?2`;

type LeanVariant = [number, string | null, number, number, string, string, string, string, string];
type LeanOwner = [string, number, number | null];
type Row = Record<string, unknown>;

/** Which list the read is of. */
/** The item, its product (as the route resolved it), its list's kind and how many entries it planned. */
export type Of = { item: UpdateItem; productId: number; sync: boolean; add: boolean; count: number };

/**
 * What the wording reads: the snapshot, the plan's match of each entry, and for a lean sync the
 * entries it read (`only`; the others are sound as they stand). "full": the lean read cannot tell.
 */
export type Read = { snap: Snapshot; matches: (number | null)[]; only?: Set<number>; sound: number };

/** The statements after the plan's, in the order `readOf` takes their results. */
export function refusalReads(db: DB, of: Of, lean: boolean): D1PreparedStatement[] {
  const d = of.item.data;
  if (!lean) return [stmt(db, MATCHES), ...snapshotReads(db, [of.item])];
  return [
    // The body's sku is a new value of the product's only when the item names it by id.
    of.add
      ? stmt(db, MATCHES)
      : stmt(db, of.sync ? FLAGGED : FLAGGED_UPDATE, of.productId, d.product_id === undefined ? null : (d.sku ?? null)),
    stmt(db, READ_PRODUCTS, JSON.stringify([of.productId]), "[]", "[]"),
    ...(of.add ? [stmt(db, LEAN_VARIANTS, of.productId)] : []),
    stmt(db, LEAN_OWNERS, JSON.stringify(namedSkus(d)), of.productId, of.add ? 1 : 0),
    stmt(db, READ_SLUGS, JSON.stringify(d.slug ? [d.slug] : [])),
  ];
}

// An update's stored variants a check can refuse as the list leaves them (each as LEAN_VARIANTS,
// in the product's order), the entries on them and those of no variant of the product ([entry,
// variant id]), how many variants the product has and how many rows the plan gave. ?1 the
// product, ?2 the SKU the body gives it. u: each stored variant as the list leaves it, with the
// entry on it (two entries on one variant give two rows: flagged, and worded by matching the entries).
const FLAGGED_UPDATE = `
  WITH u AS MATERIALIZED (
    SELECT v.${V.id} AS id, s.${S.entry} AS entry, s.${S.data} AS data, v.${V.qty} AS stored,
      ${slots((n) => `s.${so(n)} AS o${n}`)},
      iif(${given("s.data", "sku")}, ${at("s.data", "sku")}, v.${V.sku}) AS sku,
      iif(${given("s.data", "qty")}, ${at("s.data", "qty")}, v.${V.qty}) + coalesce(s.${S.data}->>'$[${ADJUST}]', 0) AS qty,
      s.${S.bad} AS bad
    FROM ${S.$} AS s JOIN ${V.$} AS v ON v.${V.id} = s.${S.variantId}
    UNION ALL
    SELECT ${V.id}, NULL, NULL, ${V.qty}, ${slots(vo)}, ${V.sku}, ${V.qty}, 0 FROM ${V.$}
    WHERE ${V.productId} = ?1 AND ${V.id} NOT IN (SELECT ${S.variantId} FROM ${S.$} WHERE ${S.variantId} IS NOT NULL)
  ), g AS MATERIALIZED (
    SELECT * FROM u WHERE bad OR qty < 0 OR abs(qty) > ${STOCK}
      OR (data->>'$[${EXPECTED}]' IS NOT NULL AND data->>'$[${EXPECTED}]' IS NOT stored)
      OR (data->>'$[${ADJUST}]' IS NOT NULL AND ${given("data", "qty")})
      OR id IN (SELECT id FROM u GROUP BY id HAVING count(*) > 1)
      OR (${slots((n) => `o${n}`)}) IN (SELECT ${slots((n) => `o${n}`)} FROM u GROUP BY ${slots((n) => `o${n}`)} HAVING count(*) > 1)
      OR sku IN (SELECT sku FROM u WHERE sku IS NOT NULL GROUP BY sku HAVING count(*) > 1)
      OR EXISTS (SELECT 1 FROM ${K.$} AS k WHERE k.${K.sku} = u.sku AND k.${K.productId} <> ?1)
      OR sku = (SELECT ${P.sku} FROM ${P.$} WHERE ${P.id} = ?1) OR sku = ?2
  )
  SELECT (SELECT count(*) FROM ${S.$}) AS planned, (SELECT count(*) FROM ${V.$} WHERE ${V.productId} = ?1) AS total,
    (SELECT json_group_array(json_array(${V.id}, ${V.sku}, ${V.qty}, ${V.position}, ${slots(vo)})) FROM (
      SELECT * FROM ${V.$} WHERE ${V.id} IN (SELECT id FROM g) ORDER BY ${V.position}, ${V.id})) AS list,
    (SELECT json_group_array(json_array(entry, vid)) FROM (
      SELECT entry, id AS vid FROM g WHERE entry IS NOT NULL
      UNION ALL SELECT ${S.entry}, NULL FROM ${S.$} WHERE ${S.variantId} IS NULL)) AS entries`;

/** A variant of the lean read, the columns it leaves out blank. */
function leanRow(v: LeanVariant, productId: number): VariantRow {
  const [id, sku, qty, position, option1, option2, option3, option4, option5] = v;
  return {
    id,
    productId,
    sku,
    option1,
    option2,
    option3,
    option4,
    option5,
    price: 0,
    beforePrice: null,
    purchasePrice: null,
    qty,
    qtyLocation: null,
    gtin: null,
    supplierSku: null,
    weight: null,
    visible: 1,
    images: "[]",
    noMinus: 0,
    position,
    createdAt: 0,
    updatedAt: 0,
  };
}

const listOf = <T>(r: D1Result<Row>) => JSON.parse(String(r.results[0]?.list ?? "[]")) as T;

export function readOf(results: D1Result<Row>[], of: Of, lean: boolean): Read | "full" {
  if (!lean) return { snap: snapshotOf(results.slice(1)), matches: listOf(results[0]), sound: 0 };
  const [first, ps, ...rest] = results;
  const none = { ...first, results: [] };
  const [vs, os, ss] = of.add ? rest : [none, ...rest];
  const snap = snapshotOf([ps, none, none, ss]);
  const pid = of.productId;
  const add = (v: LeanVariant) => {
    const row = leanRow(v, pid);
    snap.variantById.set(row.id, row);
    return row;
  };
  snap.variants.get(pid)?.push(...listOf<LeanVariant[]>(vs).map(add));
  for (const [sku, productId, variantId] of listOf<LeanOwner[]>(os)) snap.owners.set(sku, { productId, variantId });
  if (of.add) return { snap, matches: listOf(first), sound: 0 };
  const head = first.results[0] ?? {};
  if (Number(head.planned) !== of.count) return "full";
  const matches = new Array<number | null>(of.count).fill(null);
  const only = new Set<number>();
  if (of.sync) {
    for (const [entry, ...v] of listOf<[number, ...LeanVariant][]>(first)) {
      only.add(entry);
      if (v[0] !== null) matches[entry] = add(v).id;
    }
    return { snap, matches, only, sound: of.count - only.size };
  }
  const stored = (JSON.parse(String(head.list)) as LeanVariant[]).map(add);
  snap.variants.set(pid, stored);
  for (const [entry, vid] of JSON.parse(String(head.entries)) as [number, number | null][]) {
    only.add(entry);
    matches[entry] = vid;
  }
  return { snap, matches, only, sound: Number(head.total) - stored.length };
}
