import type { DB } from "../../db/client";
import { products, productVersions, skus, staleReads, variantSync, variants } from "../../db/schema";
import { optionColumn, sqlNames } from "../../platform/columns";
import { afterLostRace, isConstraintError, runBatch, stmt } from "../../platform/d1";
import { runClaimed } from "../../platform/idempotency";
import { committed, newEvent, outboxStatement } from "../../webhooks/outbox";
import { derivedSlug } from "../categories";
import type { ItemOutcome, Recorder, WriteOptions, Written } from "../create";
import { STOCK } from "../entries";
import { minimalJson, ownJson, productText } from "../own-json";
import { ADJUST, at, COLUMN_OF, EXPECTED, type Field, given, SLOTS, VARIANT_ID, value, WRITTEN } from "../packed";
import { MAX_VARIANTS } from "../schema";
import { MAX_ANSWER_BYTES, SIZE_SQL } from "../size";
import { productETag, VERSION_OF } from "../version";
import { readOf, refusalReads } from "./refusal-read";
import { type Refusal, refusal } from "./refusals";
import { select } from "./select";
import { MODE, type Resolved, type SqlList } from "./variants-route";
import { UPDATE_PRODUCT_FIELDS } from "./write";

// A product's variant list written in SQL, in ONE round trip (docs/products.md, "Limits"): the
// items ./variants-route.ts routes here, `{product_id | variant_id | sku, variants: {sync | add |
// update: [...]}}` (one list or several) with product fields beside it (all but `stock`), an If-Match and
// an Idempotency-Key or not. The JavaScript plan (./plan.ts) reads the product and every variant
// into objects, matches and checks them one by one and sends the rows back; for 2,048 variants
// that was most of a 26 ms request. Here the batch matches the list against the variants where
// they are (a sync by SKU through the registry, else by option values through the unique
// combination index; an update by variant id; an add matches nothing), writes the match into a
// scratch table, and applies it with fixed statements. Whatever the JavaScript plan would refuse
// (a missing or extra option value, two entries matching one variant, a variant id of another
// product, another product's SKU, a repeated combination, an added combination or own SKU that
// exists, more than 2,048 variants, negative stock under disable_minusqty, an `expected_qty` the
// stored qty is not, `adjust` beside `qty` or past the largest count, an answer past 2 MiB, a
// version other than the If-Match's or a selected variant gone) fails the batch through a
// constraint, so nothing is written; a read batch then runs the same PLAN, reads what it matched
// and words the errors (./refusals.ts, `diagnose` below), so the entries are matched by this plan
// only. The forms ./refusals.ts does not word yet (two lists, a selection, an If-Match's tag) are
// worded by the JavaScript plan. A body refused whatever is stored (./variants-route.ts, Refused)
// skips the write: the read words it.
// test/products.variants-sql.test.ts holds both paths equal on random catalogs, lists, selectors,
// If-Match headers and product fields.

const each = (f: (n: number) => string, sep: string) => SLOTS.map(f).join(sep);

// Tables and columns through the schema (src/platform/columns.ts).
const P = sqlNames(products);
const V = sqlNames(variants);
const S = sqlNames(variantSync);
const K = sqlNames(skus);
const STALE = sqlNames(staleReads);
const PV = sqlNames(productVersions);
/** Option slot n's column of the variants (vo) and of the scratch table (so). */
const vo = (n: number) => optionColumn(V, n);
const so = (n: number) => optionColumn(S, n);
/** The variants column a packed field is stored in. */
const col = (f: Field) => V[COLUMN_OF[f]];

/**
 * ?1 product id, ?2 the packed entries, ?3 the option names they give (null: none), ?4 the list
 * (MODE), ?5 the place of ?2's first entry in the list. The names are the product's unless a sync gives others (a rename: every entry then
 * gives values, unless the count of options stays) or it has none yet (its first variants).
 * Entries of an add or update whose names differ, or of a product that has no slug yet (the
 * JavaScript plan derives one), give no rows, which the guard refuses. A sync matches by SKU, else by the values
 * (an entry naming a variant by SKU without values keeps its values); an update by id, changing
 * the values it gives; an add matches nothing (a combination or an own SKU that exists is refused)
 * and places its entries after the product's last variant.
 */
const plan = (stock: boolean) => `
  INSERT INTO ${S.$} (${S.entry}, ${S.productId}, ${S.variantId}, ${each(so, ", ")}, ${S.bad}, ${S.data})
  WITH p AS MATERIALIZED (
    SELECT p.${P.id} AS pid, json_array_length(coalesce(?3, p.${P.optionNames})) AS n,
      json_array_length(p.${P.optionNames}) AS cur,
      iif(?4 = ${MODE.add}, (SELECT coalesce(max(v.${V.position}), -1) + 1 FROM ${V.$} AS v WHERE v.${V.productId} = ?1), 0) AS first
    FROM ${P.$} AS p
    WHERE p.${P.id} = ?1 AND p.${P.slug} IS NOT NULL
      AND (?3 IS NULL OR ?4 = ${MODE.sync} OR json(?3) = json(p.${P.optionNames}) OR p.${P.optionNames} = '[]')
  ), e AS MATERIALIZED (
    SELECT j.key + p.first + ?5 AS entry, j.value AS data, p.pid, p.n, p.cur,
      ${at("j.value", "sku")} AS sku, j.value->>'$[${VARIANT_ID}]' AS variant_id,
      ${stock ? `j.value->>'$[${ADJUST}]'` : "NULL"} AS adjust, ${stock ? `j.value->>'$[${EXPECTED}]'` : "NULL"} AS expected,
      ${each((n) => `${at("j.value", value(n))} AS v${n}`, ", ")}
    FROM p, json_each(?2) AS j WHERE p.n > 0
  ), t AS (
    SELECT e.*, ${each((n) => `iif(n >= ${n}, coalesce(v${n}, ''), '') AS t${n}`, ", ")},
      (${each((n) => `v${n} IS NULL`, " AND ")}) AS novalues,
      (${each((n) => `(n >= ${n} AND v${n} IS NULL)`, " OR ")}) AS missing,
      (${each((n) => `(n < ${n} AND v${n} IS NOT NULL)`, " OR ")}) AS extra
    FROM e
  ), r AS MATERIALIZED (
    SELECT t.*, CASE
      WHEN ?4 = ${MODE.update} THEN (SELECT v.${V.id} FROM ${V.$} AS v WHERE v.${V.id} = t.variant_id AND v.${V.productId} = t.pid)
      WHEN ?4 = ${MODE.sync} AND sku IS NOT NULL THEN (SELECT k.${K.variantId} FROM ${K.$} AS k WHERE k.${K.sku} = t.sku AND k.${K.productId} = t.pid)
      ELSE (SELECT v.${V.id} FROM ${V.$} AS v WHERE v.${V.productId} = t.pid AND ${each((n) => `v.${vo(n)} = t.t${n}`, " AND ")})
    END AS vid
    FROM t
  )
  SELECT r.entry, r.pid, r.vid,
    ${each((n) => `CASE WHEN ?4 = ${MODE.update} THEN coalesce(r.v${n}, m.${vo(n)}, '') WHEN r.keeps THEN m.${vo(n)} ELSE r.t${n} END`, ", ")},
    r.data IS NULL OR CASE ?4
      WHEN ${MODE.sync} THEN NOT r.keeps AND (r.missing OR r.extra)
      WHEN ${MODE.add} THEN r.missing OR r.extra OR r.vid IS NOT NULL OR (r.sku IS NOT NULL AND EXISTS (
        SELECT 1 FROM ${K.$} AS k WHERE k.${K.sku} = r.sku AND k.${K.productId} = r.pid))
      ELSE r.vid IS NULL OR r.extra
        OR (r.expected IS NOT NULL AND m.${V.qty} IS NOT r.expected)
        OR (r.adjust IS NOT NULL AND (${given("r.data", "qty")} OR abs(m.${V.qty} + r.adjust) > ${STOCK})) END, r.data
  FROM (SELECT *, ?4 = ${MODE.sync} AND sku IS NOT NULL AND vid IS NOT NULL AND novalues AND n = cur AS keeps FROM r) AS r
  LEFT JOIN ${V.$} AS m ON m.${V.id} = r.vid`;
// Lists without `adjust` or `expected_qty` (most) read neither: 2,048 lookups fewer in SQLite.
const PLAN = plan(false);
const PLAN_STOCK = plan(true);

// Fails the batch (stale_reads' always-false CHECK) when the plan is not one the JavaScript plan
// would accept: no rows (see PLAN), an invalid entry, or two entries on one variant (a sync
// refuses them; an update's are merged before they travel, ./variants-route.ts). An update entry
// of an unknown variant has a row (its values '' where it gives none), so the read that words a
// refusal runs PLAN without failing.
const GUARD = `
  INSERT INTO ${STALE.$} (${STALE.productId})
  SELECT ?1 WHERE NOT EXISTS (SELECT 1 FROM ${S.$})
  UNION ALL SELECT ${S.productId} FROM ${S.$} WHERE ${S.bad}
  UNION ALL SELECT min(${S.productId}) FROM ${S.$} WHERE ${S.variantId} IS NOT NULL
    GROUP BY ${S.variantId} HAVING count(*) > 1`;

// An empty sync plans nothing: the product must be there, with a slug (see PLAN).
const EMPTY_GUARD = `
  INSERT INTO ${STALE.$} (${STALE.productId})
  SELECT ?1 WHERE NOT EXISTS (SELECT 1 FROM ${P.$} WHERE ${P.id} = ?1 AND ${P.slug} IS NOT NULL)`;

// ?2: [variant id, amount] pairs: counts an update list's merged entries reach on the way (the
// stored count, as the lists before leave it, moved by the amounts so far), past the largest.
const RANGE_GUARD = `
  INSERT INTO ${STALE.$} (${STALE.productId})
  SELECT ?1 FROM json_each(?2) AS j WHERE abs((SELECT v.${V.qty} FROM ${V.$} AS v
    WHERE v.${V.id} = j.value->>0 AND v.${V.productId} = ?1) + (j.value->>1)) > ${STOCK}`;
// ?2: the product's own stock the item expects (beside an empty sync), as stored.
const OWN_EXPECTED_GUARD = `
  INSERT INTO ${STALE.$} (${STALE.productId})
  SELECT ?1 WHERE (SELECT ${P.stock} FROM ${P.$} WHERE ${P.id} = ?1) IS NOT ?2`;

const DELETE_UNMATCHED = `
  DELETE FROM ${V.$} WHERE ${V.productId} = ?1
    AND ${V.id} NOT IN (SELECT ${S.variantId} FROM ${S.$} WHERE ${S.variantId} IS NOT NULL)`;

// SQLite checks UNIQUE per row, so variants whose SKU or option values change are parked first
// and swaps pass the registry and the combination index (./write.ts). A sync never changes a
// matched variant's SKU (it was matched by it, or the entry gives none); an update may.
const newSku = `${given("s.data", "sku")} AND ${at("s.data", "sku")} IS NOT ${V.$}.${V.sku}`;
const newValues = each((n) => `${V.$}.${vo(n)} <> s.${so(n)}`, " OR ");
const PARK = `
  UPDATE ${V.$} SET ${V.sku} = iif(${newSku}, NULL, ${V.$}.${V.sku}),
    ${vo(1)} = iif(${newValues}, char(1) || 'parked ' || ${V.$}.${V.id}, ${V.$}.${vo(1)})
  FROM ${S.$} AS s WHERE ${V.$}.${V.id} = s.${S.variantId} AND (${newSku} OR ${newValues})`;

// With disable_minusqty on, a negative stock of the product's own is cleared: its variants' qty is
// its stock now (as ./plan.ts does). ?3: the option names the entries give (a sync's rename, a
// first list); ?4: the disable_minusqty the body gives, which the next statement writes.
const UPDATE_PRODUCT = `
  UPDATE ${P.$} SET ${P.stock} = iif(coalesce(?4, ${P.disableMinusqty}) = 1 AND ${P.stock} < 0, 0, ${P.stock}),
    ${P.optionNames} = coalesce(?3, ${P.optionNames}),
    ${P.updatedAt} = coalesce(max(?2, ${P.updatedAt} + 1), ${P.updatedAt})
  WHERE ${P.id} = ?1`;

// Fields an entry leaves out keep their value; null clears one (images to none).
const kept = (f: Field, cleared = "NULL") =>
  `${col(f)} = iif(${given("s.data", f)}, coalesce(${at("s.data", f)}, ${cleared}), ${V.$}.${col(f)})`;
// An entry's `adjust` (never given with its qty) moves the count as the batch finds it (docs/stock.md).
const updateMatched = (stock: boolean) => `
  UPDATE ${V.$} SET ${each((n) => `${vo(n)} = s.${so(n)}`, ", ")},
    ${(["sku", "price", "before_price", "purchase_price", "qty_location", "gtin", "supplier_sku", "weight", "visible"] as const).map((f) => kept(f)).join(", ")},
    ${kept("qty")}${stock ? ` + coalesce(s.${S.data}->>'$[${ADJUST}]', 0)` : ""},
    ${kept("images", "'[]'")},
    ${V.noMinus} = (SELECT ${P.disableMinusqty} FROM ${P.$} WHERE ${P.$}.${P.id} = ${V.$}.${V.productId}),
    ${V.position} = iif(?2, s.${S.entry}, ${V.$}.${V.position}), ${V.updatedAt} = ?1
  FROM ${S.$} AS s WHERE ${V.$}.${V.id} = s.${S.variantId}`;
const UPDATE_MATCHED = updateMatched(false);
const UPDATE_MATCHED_STOCK = updateMatched(true);

/** The packed fields a new variant takes as given, with what it takes when one is absent. */
const NEW_FIELDS: [Field, string?][] = [["sku"], ...WRITTEN];
const INSERT_NEW = `
  INSERT INTO ${V.$} (${V.productId}, ${each(vo, ", ")}, ${NEW_FIELDS.map(([f]) => col(f)).join(", ")},
    ${V.noMinus}, ${V.position}, ${V.createdAt}, ${V.updatedAt})
  SELECT p.${P.id}, ${each((n) => `s.${so(n)}`, ", ")},
    ${NEW_FIELDS.map(([f, absent]) => (absent ? `coalesce(${at("s.data", f)}, ${absent})` : at("s.data", f))).join(", ")},
    p.${P.disableMinusqty}, s.${S.entry}, ?1, ?1
  FROM ${S.$} AS s JOIN ${P.$} AS p ON p.${P.id} = s.${S.productId}
  WHERE s.${S.variantId} IS NULL ORDER BY s.${S.entry}`;

// An add may take the product past MAX_VARIANTS.
const COUNT_GUARD = `
  INSERT INTO ${STALE.$} (${STALE.productId})
  SELECT ?1 WHERE (SELECT count(*) FROM ${V.$} WHERE ${V.productId} = ?1) > ${MAX_VARIANTS}`;

const SIZE_GUARD = `
  INSERT INTO ${STALE.$} (${STALE.productId})
  SELECT p.${P.id} FROM ${P.$} AS p WHERE p.${P.id} = ?1 AND ${SIZE_SQL} > ${MAX_ANSWER_BYTES}`;

const FOLLOW_FLAG = `UPDATE ${V.$} SET ${V.noMinus} = ?2 WHERE ${V.productId} = ?1 AND ${V.noMinus} <> ?2`;

const CLEAR = `DELETE FROM ${S.$}`;

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

/** The statements that re-check what `resolve` read. */
function conditions(db: DB, r: Resolved): D1PreparedStatement[] {
  const out = r.version === undefined ? [] : [stmt(db, VERSION_GUARD, r.productId, r.version)];
  const s = r.selected;
  if (s && "sku" in s) out.push(stmt(db, OWNER_GUARD, r.productId, s.sku, s.variantId));
  else if (s) out.push(stmt(db, SELECTED_GUARD, r.productId, s.variantId));
  if (r.categories !== undefined) out.push(stmt(db, CATEGORIES_GUARD, r.productId, r.categories));
  return out;
}

/**
 * Writes the list in one batch, with the request's Idempotency-Key record when it has one; with
 * If-Match, sets its ETag from the version the batch leaves. A refused batch wrote nothing: a read
 * batch then finds and words the refusal (./refusals.ts), and the refusal is recorded under the
 * key; when the read finds nothing refused (a concurrent writer changed the product in between)
 * the write is tried again. Undefined: a refusal ./refusals.ts does not word, which the
 * JavaScript path words.
 */
export async function writeVariants(
  db: DB,
  list: SqlList,
  resolved: Resolved,
  now: number,
  options: WriteOptions,
  recorder?: Recorder,
): Promise<Written | undefined> {
  for (let attempt = 1; ; attempt++) {
    // A body refused whatever is stored (./variants-route.ts, Refused) is not written.
    const written = !list.refused && (await write(db, list, resolved, now, options, recorder));
    if (written) return written;
    const refused = await diagnose(db, list, resolved);
    // Nothing refused now: a concurrent change, which a body refused as it is or paths merged as read
    // (a stale read) leave to the JavaScript plan.
    if (refused === "plan" || (!refused && (list.refused || resolved.categories !== undefined))) return undefined;
    if (refused) {
      const outcome = new Map([[list.item.index, refused]]);
      if (recorder) {
        const none = recorder.snapshot(`p.${P.id} IN (SELECT value FROM json_each(?1))`, "[]");
        await runClaimed(db, recorder.idem, recorder.claim(outcome), [none]);
      }
      return { outcomes: outcome, events: [] };
    }
    await afterLostRace(attempt, "the product");
  }
}

/**
 * Runs the plan again, reads what it matched and what the wording needs, and words the refusal:
 * from the lean read first, and from the full one when only the answer size can be refused
 * (./refusal-read.ts).
 */
async function diagnose(db: DB, list: SqlList, resolved: Resolved): Promise<Refusal> {
  // A body refused as it is needs no batch's conditions; names that disagree need no matches.
  const conditional = !list.refused && (resolved.version !== undefined || resolved.selected);
  if (list.refused !== "names" && (list.lists.length !== 1 || conditional)) return "plan";
  // The lean read holds only other products' SKUs, so a selection is found again in the full one.
  const lean = resolved.selected ? "full" : await diagnosed(db, list, resolved.productId, true);
  if (lean !== "full") return lean;
  const full = await diagnosed(db, list, resolved.productId, false);
  return full === "full" ? undefined : full;
}

async function diagnosed(db: DB, list: SqlList, id: number, lean: boolean): Promise<Refusal | "full"> {
  // Entries that disagree on names travel as no list: their words need no match.
  const { mode, entries, names } = list.lists[0] ?? { mode: MODE.update, entries: [], names: null };
  const given = names && JSON.stringify(names);
  const { sync, add, update } = list.item.data.variants ?? {};
  const count = list.lists.length ? (sync ?? add ?? update ?? []).length : 0;
  const of = { item: list.item, productId: id, sync: mode === MODE.sync, add: mode === MODE.add, count };
  const plans = entries.map(([part, from]) => stmt(db, PLAN, id, part, given, mode, from));
  const results = await runBatch(db, [...plans, ...refusalReads(db, of, lean), stmt(db, CLEAR)]);
  const read = readOf(results.slice(plans.length, -1), of, lean);
  if (read === "full") return read;
  const t = select(list.item, read.snap);
  if ("ok" in t) return t;
  return refusal(t, read, lean);
}

/** One attempt of the write batch; undefined when a constraint refused it. */
async function write(
  db: DB,
  list: SqlList,
  resolved: Resolved,
  now: number,
  options: WriteOptions,
  recorder?: Recorder,
): Promise<Written | undefined> {
  const id = resolved.productId;
  const { ifMatch } = options;
  const change = [newEvent("product.update", { productId: id, keyId: options.keyId })];
  const read = (options.minimal ? minimalJson : ownJson)(db, `p.${P.id} = ?1`, id);
  const flag = list.item.data.disable_minusqty ?? null;
  const product: Record<string, unknown> | undefined = (list.product || resolved.fields) && {
    id,
    ...list.product,
    ...resolved.fields,
  };
  // slug: null derives it again from the title (./variants-route.ts).
  if (product?.slug === null) product.slug = derivedSlug(String(product.title), id);
  const fields = product && JSON.stringify([product]);
  // The record's answer names the product, resolved from the snapshot stored with it (as ./index.ts records).
  const head = recorder?.claim(new Map([[list.item.index, { ok: true, product: { $product: id } }]])) ?? [];
  const tail = recorder ? [recorder.snapshot(`p.${P.id} = ?1`, id)] : [];
  // The version the batch leaves, for the answer's ETag.
  const version = ifMatch ? [stmt(db, VERSION_OF, id)] : [];
  // Each list as the one before it left the variants (sync, add, update: ./plan.ts's order).
  const lists = list.lists.flatMap(({ mode, entries, names, stock, ranges }, i) => {
    const sync = mode === MODE.sync ? 1 : 0;
    const given = names && JSON.stringify(names);
    // An empty sync leaves the product without variants: its own negative stock is not cleared
    // (the stock floor refuses it under disable_minusqty, as ./plan.ts does).
    if (!entries.length) {
      return [
        stmt(db, EMPTY_GUARD, id),
        ...(list.ownExpected === undefined ? [] : [stmt(db, OWN_EXPECTED_GUARD, id, list.ownExpected)]),
        stmt(db, DELETE_UNMATCHED, id),
        stmt(db, UPDATE_PRODUCT, id, now, given, 0),
        ...(fields ? [stmt(db, UPDATE_PRODUCT_FIELDS, fields)] : []),
      ];
    }
    return [
      ...(i ? [stmt(db, CLEAR)] : []),
      ...(ranges ? [stmt(db, RANGE_GUARD, id, ranges)] : []),
      // A list past one bound value is planned a part at a time, each from its first entry's place.
      ...entries.map(([part, from]) => stmt(db, stock ? PLAN_STOCK : PLAN, id, part, given, mode, from)),
      stmt(db, GUARD, id),
      ...(sync ? [stmt(db, DELETE_UNMATCHED, id)] : []),
      // An add changes no variant it has.
      ...(mode === MODE.add ? [] : [stmt(db, PARK)]),
      // updated_at moves once.
      stmt(db, UPDATE_PRODUCT, id, i ? null : now, given, flag),
      // After the variants that go or change their SKU free it, before those that take one (the
      // product's old SKU too); a new variant without a price takes the product's new one.
      ...(fields && !i ? [stmt(db, UPDATE_PRODUCT_FIELDS, fields)] : []),
      ...(mode === MODE.add ? [] : [stmt(db, stock ? UPDATE_MATCHED_STOCK : UPDATE_MATCHED, now, sync)]),
      ...(mode === MODE.update ? [] : [stmt(db, INSERT_NEW, now)]),
    ];
  });
  let results: D1Result<Record<string, unknown>>[];
  try {
    results = await runClaimed(db, recorder?.idem, head, [
      ...conditions(db, resolved),
      ...(list.expected ? [stmt(db, EXPECTED_GUARD, id, list.expected)] : []),
      ...lists,
      // The variants the lists leave as they are follow a flag the body sets (a negative qty meets the floor).
      ...(flag === null ? [] : [stmt(db, FOLLOW_FLAG, id, flag)]),
      ...(list.lists.some((l) => l.mode === MODE.add) ? [stmt(db, COUNT_GUARD, id)] : []),
      stmt(db, SIZE_GUARD, id),
      outboxStatement(db, change, now),
      ...version,
      read,
      ...tail,
      stmt(db, CLEAR),
    ]);
  } catch (e) {
    // A key claimed meanwhile was thrown as IdempotencyConflict by runClaimed.
    if (isConstraintError(e)) return undefined;
    throw e;
  }
  const at = results.length - 2 - tail.length;
  if (ifMatch) ifMatch.etag = productETag(id, results[at - 1].results[0]?.version);
  const outcomes = new Map<number, ItemOutcome>([[list.item.index, { ok: true, product: productText(results[at]) }]]);
  return { outcomes, events: committed(change, results) };
}
