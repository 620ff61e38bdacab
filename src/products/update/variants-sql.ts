import type { DB } from "../../db/client";
import { products, staleReads, variantSync, variants } from "../../db/schema";
import { optionColumn, sqlNames } from "../../platform/columns";
import { isConstraintError, stmt } from "../../platform/d1";
import { type Idem, runClaimed } from "../../platform/idempotency";
import { committed, newEvent, outboxStatement, type PendingEvent } from "../../webhooks/outbox";
import { derivedSlug } from "../categories";
import type { ItemOutcome, WriteOptions } from "../create";
import { minimalJson, ownJson, ProductText } from "../own-json";
import { ADJUST, at, COLUMN_OF, type Field, given, SLOTS, WRITTEN } from "../packed";
import { MAX_VARIANTS } from "../schema";
import { MAX_ANSWER_BYTES, SIZE_SQL } from "../size";
import { productETag, VERSION_OF } from "../version";
import { leadSkuHeld, leadSkuRestored, ownHeld, ownSkuLater, ownSkuRestored } from "./lead-sku";
import type { Plan } from "./plan";
import { fail } from "./select";
import { listGuards, roundConditions } from "./variants-guards";
import { CLEAR, plans, positionOf } from "./variants-match";
import { MODE, type RoundItem } from "./variants-route";
import { planWrites, UPDATE_PRODUCT_FIELDS } from "./write";

// Products' variant lists written in SQL, in ONE round trip (docs/products.md, "Limits"): the
// items ./variants-route.ts routes here, `{product_id | variant_id | sku, variants: {sync | add |
// update: [...]}}` with product fields beside it (all but `stock`), an If-Match and an
// Idempotency-Key or not; several items (./variants-rounds.ts) share the batch's statements.
// Reading the product and every variant into objects, matching and checking them one by one in
// the Worker and sending the rows back was most of a 26 ms request for 2,048 variants. Here the
// batch matches the list against the variants where they are, writes the match into a scratch
// table (./variants-match.ts), and applies it with the fixed statements below. Whatever the rules
// refuse (a missing or extra option value, two entries matching one variant, a variant id of
// another product, another product's SKU, a repeated combination, an added combination or own SKU
// that exists, more than 2,048 variants, negative stock under disable_minusqty, an `expected_qty`
// the stored qty is not, `adjust` beside `qty` or past the largest count, an answer past 2 MiB, a
// version other than the If-Match's or a selected variant gone) fails the batch through a
// constraint, so nothing is written; a read batch then runs the same match, reads what it matched
// and words the errors (./diagnose.ts, ./refusals.ts). test/products.variants.property.test.ts and
// test/products.variants.draw.test.ts hold it on random catalogs, lists, selectors, If-Match
// headers, product fields and requests of several items; test/products.variants-sql.*.test.ts pin
// each form's answer.

const each = (f: (n: number) => string, sep: string) => SLOTS.map(f).join(sep);

// Tables and columns through the schema (src/platform/columns.ts).
const P = sqlNames(products);
const V = sqlNames(variants);
const S = sqlNames(variantSync);
const STALE = sqlNames(staleReads);
/** Option slot n's column of the variants (vo) and of the scratch table (so). */
const vo = (n: number) => optionColumn(V, n);
const so = (n: number) => optionColumn(S, n);
/** The variants column a packed field is stored in. */
const col = (f: Field) => V[COLUMN_OF[f]];

/** The products of the round (?1 of the statements below: a JSON list of ids). */
export const ROUND = "SELECT value FROM json_each(?1)";

// Fails the batch (stale_reads' always-false CHECK) when the plan is not one the rules
// accept: no rows for a product (./variants-match.ts, PLAN), an invalid entry, or two entries on one variant
// (a sync refuses them; an update's are merged before they travel, ./variants-route.ts). An
// update entry of an unknown variant has a row (its values '' where it gives none), so the read
// that words a refusal runs PLAN without failing.
const GUARD = `
  INSERT INTO ${STALE.$} (${STALE.productId})
  SELECT r.value FROM json_each(?1) AS r WHERE NOT EXISTS (SELECT 1 FROM ${S.$} WHERE ${S.productId} = r.value)
  UNION ALL SELECT ${S.productId} FROM ${S.$} WHERE ${S.bad}
  UNION ALL SELECT min(${S.productId}) FROM ${S.$} WHERE ${S.variantId} IS NOT NULL
    GROUP BY ${S.variantId} HAVING count(*) > 1`;

// ?1: the products whose list is a sync.
const DELETE_UNMATCHED = `
  DELETE FROM ${V.$} WHERE ${V.productId} IN (${ROUND})
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
// its stock now (as ./plan.ts does). ?1: [{p: product id, n: the option names the entries give (a
// sync's rename, a first list), d: the disable_minusqty the body gives, which the next statement
// writes}]; ?2: the time, or null when an earlier list of the batch moved it.
const UPDATE_PRODUCT = `
  UPDATE ${P.$} SET ${P.stock} = iif(coalesce(r.value->>'d', ${P.disableMinusqty}) = 1 AND ${P.stock} < 0, 0, ${P.stock}),
    ${P.optionNames} = coalesce(r.value->>'n', ${P.optionNames}),
    ${P.updatedAt} = coalesce(max(?2, ${P.updatedAt} + 1), ${P.updatedAt})
  FROM json_each(?1) AS r WHERE ${P.$}.${P.id} = r.value->>'p'`;

/** The disable_minusqty of a variant's product, as its stock floor follows it. */
const FLAG = `(SELECT ${P.disableMinusqty} FROM ${P.$} WHERE ${P.$}.${P.id} = ${V.$}.${V.productId})`;

// Fields an entry leaves out keep their value; null clears one (images to none).
const kept = (f: Field, cleared = "NULL") =>
  `${col(f)} = iif(${given("s.data", f)}, coalesce(${at("s.data", f)}, ${cleared}), ${V.$}.${col(f)})`;
// An entry's `adjust` (never given with its qty) moves the count as the batch finds it
// (docs/stock.md). ?2: the products whose list is a sync, which places the variants in its order.
const updateMatched = (stock: boolean, deferred = false) => `
  UPDATE ${V.$} SET ${each((n) => `${vo(n)} = s.${so(n)}`, ", ")},
    ${(["sku", "price", "before_price", "purchase_price", "qty_location", "gtin", "supplier_sku", "weight", "visible"] as const).map((f) => kept(f)).join(", ")},
    ${kept("qty")}${stock ? ` + coalesce(s.${S.data}->>'$[${ADJUST}]', 0)` : ""},
    ${kept("images", "'[]'")},
    ${V.noMinus} = ${deferred ? `iif(${V.$}.${V.productId} IN (SELECT value FROM json_each(?3)), 0, ${FLAG})` : FLAG},
    ${V.position} = iif(s.${S.productId} IN (SELECT value FROM json_each(?2)), ${positionOf(`s.${S.entry}`)}, ${V.$}.${V.position}),
    ${V.updatedAt} = ?1
  FROM ${S.$} AS s WHERE ${V.$}.${V.id} = s.${S.variantId}`;
const UPDATE_MATCHED = updateMatched(false);
const UPDATE_MATCHED_STOCK = updateMatched(true);

// A leading entry's count below 0 (./variants-route.ts, `floor`) may be lifted by a list after
// it, as the floor is checked on the product as the last list leaves it: the
// variants of those products (?3 of UPDATE_MATCHED's deferred form) leave the stock floor off
// until the last list, and RESTORE_FLOOR (?1: the products) turns it on again, where it meets a
// count still below 0.
const UPDATE_DEFERRED = updateMatched(false, true);
const UPDATE_DEFERRED_STOCK = updateMatched(true, true);
const RESTORE_FLOOR = `
  UPDATE ${V.$} SET ${V.noMinus} = ${FLAG}
  WHERE ${V.productId} IN (${ROUND}) AND ${V.noMinus} <> ${FLAG}`;

/** The products of the round whose stock floor waits for their last list. */
const floorLater = (round: RoundItem[]) => round.filter((r) => r.list.floor);

/** UPDATE_MATCHED of the k-th lists, the floor deferred for the products `floorLater` names. */
function matchedUpdate(db: DB, round: RoundItem[], stock: boolean, now: number, syncs: string) {
  const later = floorLater(round);
  if (!later.length) return stmt(db, stock ? UPDATE_MATCHED_STOCK : UPDATE_MATCHED, now, syncs);
  const ids = JSON.stringify(later.map((r) => r.resolved.productId));
  return stmt(db, stock ? UPDATE_DEFERRED_STOCK : UPDATE_DEFERRED, now, syncs, ids);
}

/** The floor turned on again after the last list of the products whose floor waited. */
function restoreFloor(db: DB, round: RoundItem[]): D1PreparedStatement[] {
  const later = floorLater(round);
  return later.length ? [stmt(db, RESTORE_FLOOR, JSON.stringify(later.map((r) => r.resolved.productId)))] : [];
}

/** The packed fields a new variant takes as given, with what it takes when one is absent. */
const NEW_FIELDS: [Field, string?][] = [["sku"], ...WRITTEN];
const INSERT_NEW = `
  INSERT INTO ${V.$} (${V.productId}, ${each(vo, ", ")}, ${NEW_FIELDS.map(([f]) => col(f)).join(", ")},
    ${V.noMinus}, ${V.position}, ${V.createdAt}, ${V.updatedAt})
  SELECT p.${P.id}, ${each((n) => `s.${so(n)}`, ", ")},
    ${NEW_FIELDS.map(([f, absent]) => (absent ? `coalesce(${at("s.data", f)}, ${absent})` : at("s.data", f))).join(", ")},
    p.${P.disableMinusqty}, ${positionOf(`s.${S.entry}`)}, ?1, ?1
  FROM ${S.$} AS s JOIN ${P.$} AS p ON p.${P.id} = s.${S.productId}
  WHERE s.${S.variantId} IS NULL ORDER BY s.${S.entry}`;

// An add may take the product past MAX_VARIANTS (?1: the products with an add).
const COUNT_GUARD = `
  INSERT INTO ${STALE.$} (${STALE.productId})
  SELECT r.value FROM json_each(?1) AS r
  WHERE (SELECT count(*) FROM ${V.$} WHERE ${V.productId} = r.value) > ${MAX_VARIANTS}`;

const SIZE_GUARD = `
  INSERT INTO ${STALE.$} (${STALE.productId})
  SELECT p.${P.id} FROM ${P.$} AS p WHERE p.${P.id} IN (${ROUND}) AND ${SIZE_SQL} > ${MAX_ANSWER_BYTES}`;

// ?1: [[product id, the disable_minusqty its body sets]].
const FOLLOW_FLAG = `
  UPDATE ${V.$} SET ${V.noMinus} = r.value->>1 FROM json_each(?1) AS r
  WHERE ${V.$}.${V.productId} = r.value->>0 AND ${V.$}.${V.noMinus} <> r.value->>1`;

/** The statements that apply the round's lists, each list as the one before it left the variants. */
function lists(db: DB, round: RoundItem[], now: number): D1PreparedStatement[] {
  const ids = (items: RoundItem[]) => JSON.stringify(items.map((r) => r.resolved.productId));
  const out: D1PreparedStatement[] = [];
  for (let k = 0; round.some((r) => r.list.lists[k]); k++) {
    const at = round.filter((r) => r.list.lists[k]);
    const mode = (r: RoundItem) => r.list.lists[k].mode;
    const syncs = at.filter((r) => mode(r) === MODE.sync);
    const changes = at.some((r) => mode(r) !== MODE.add);
    const stock = at.some((r) => r.list.lists[k].stock);
    // An empty sync plans nothing. Where the item's lists leave the product without variants, its
    // own negative stock is not cleared (the stock floor refuses it under disable_minusqty, as
    // ./plan.ts does); where an add after it gives it variants, it is, before a flag the body
    // turns on is written.
    const empty = at.filter((r) => !r.list.lists[k].entries.length);
    const flags = at.map((r) => ({
      p: r.resolved.productId,
      n: r.list.lists[k].names,
      d: endsBare(r) ? 0 : (r.list.item.data.disable_minusqty ?? null),
    }));
    out.push(
      ...(k ? [stmt(db, CLEAR)] : []),
      ...listGuards(db, at, empty, k),
      ...plans(db, round, k),
      stmt(db, GUARD, ids(at.filter((r) => !empty.includes(r)))),
      // A leading entry's SKU another variant has (./lead-sku.ts).
      ...(k ? [] : leadSkuHeld(db, round)),
      ...(syncs.length ? [stmt(db, DELETE_UNMATCHED, ids(syncs))] : []),
      // An add changes no variant it has.
      ...(changes ? [stmt(db, PARK)] : []),
      // updated_at moves once.
      stmt(db, UPDATE_PRODUCT, JSON.stringify(flags), k ? null : now),
      // After the variants that go or change their SKU free it, before those that take one (the
      // product's old SKU too); a new variant without a price takes the product's new one.
      ...(k ? [] : productFields(db, round)),
      ...(changes ? [matchedUpdate(db, round, stock, now, ids(syncs))] : []),
      ...(at.some((r) => mode(r) !== MODE.update) ? [stmt(db, INSERT_NEW, now)] : []),
    );
  }
  return out;
}

/** Whether the item's lists leave its product without variants: its last is an empty sync. */
const endsBare = ({ list }: RoundItem) => !list.lists[list.lists.length - 1].entries.length;

/** The product fields the items give beside their lists; slug: null derives it again from the title. */
function productFields(db: DB, round: RoundItem[]): D1PreparedStatement[] {
  const rows = round.flatMap(({ list, resolved }) => {
    if (!list.product && !resolved.fields) return [];
    const id = resolved.productId;
    const product: Record<string, unknown> = { id, ...list.product, ...resolved.fields };
    if (product.slug === null) product.slug = derivedSlug(String(product.title), id);
    if (ownSkuLater({ list, resolved })) product.sku = ownHeld(id);
    return [product];
  });
  return rows.length ? [stmt(db, UPDATE_PRODUCT_FIELDS, JSON.stringify(rows))] : [];
}

/** What a round's write batch wrote: each item's product, or undefined when a constraint refused it. */
export type RoundWritten = { outcomes: Map<number, ItemOutcome>; events: PendingEvent[] };

/**
 * One attempt of the write batch of a round (items naming distinct products), with `head` and
 * `tail` (the request's Idempotency-Key record) around it; undefined when a constraint refused it,
 * which rolled back the whole batch; `guards` run before it writes. With If-Match (one item),
 * sets its ETag from the version the batch leaves. `planned`: the round's items without a variant
 * list, planned by ./plan.ts, written in the same batch (./variants-rounds.ts).
 */
export async function writeRound(
  db: DB,
  round: RoundItem[],
  now: number,
  options: WriteOptions,
  head: D1PreparedStatement[],
  tail: D1PreparedStatement[],
  idem?: Idem,
  guards: D1PreparedStatement[] = [],
  planned: Plan[] = [],
): Promise<RoundWritten | undefined> {
  const ids = round.map((r) => r.resolved.productId);
  const { ifMatch } = options;
  // Every item's product, in the body's order (the events' order).
  const written: [number, number][] = [
    ...round.map((r): [number, number] => [r.list.item.index, r.resolved.productId]),
    ...planned.map((p): [number, number] => [p.index, p.productId]),
  ].sort((a, b) => a[0] - b[0]);
  const changes = written.map(([, productId]) => newEvent("product.update", { productId, keyId: options.keyId }));
  const all = JSON.stringify(written.map(([, id]) => id));
  const read = (options.minimal ? minimalJson : ownJson)(db, `p.${P.id} IN (${ROUND})`, all);
  const flags = round.flatMap(({ list, resolved }) => {
    const flag = list.item.data.disable_minusqty;
    return flag === undefined || flag === null ? [] : [[resolved.productId, flag]];
  });
  const adds = round.filter((r) => r.list.lists.some((l) => l.mode === MODE.add));
  // The version the batch leaves, for the answer's ETag.
  const version = ifMatch ? [stmt(db, VERSION_OF, ids[0])] : [];
  let results: D1Result<Record<string, unknown>>[];
  try {
    results = await runClaimed(db, idem, head, [
      ...roundConditions(db, round),
      ...guards,
      ...lists(db, round, now),
      ...restoreFloor(db, round),
      ...leadSkuRestored(db, round),
      ...ownSkuRestored(db, round),
      // Items without a list change other products than the lists (no SKU or slug passes between
      // them: ./plan.ts refuses one another product has as read, CLAIMS_GUARD one a list takes).
      ...(planned.length ? planWrites(db, planned, now) : []),
      // The variants the lists leave as they are follow a flag the body sets (a negative qty meets the floor).
      ...(flags.length ? [stmt(db, FOLLOW_FLAG, JSON.stringify(flags))] : []),
      ...(adds.length ? [stmt(db, COUNT_GUARD, JSON.stringify(adds.map((r) => r.resolved.productId)))] : []),
      stmt(db, SIZE_GUARD, JSON.stringify(ids)),
      outboxStatement(db, changes, now),
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
  if (ifMatch) ifMatch.etag = productETag(ids[0], results[at - 1].results[0]?.version);
  const texts = new Map(results[at].results.map((row) => [Number(row.id), row]));
  const outcomes = new Map<number, ItemOutcome>();
  for (const [index, productId] of written) {
    const row = texts.get(productId);
    outcomes.set(
      index,
      row
        ? { ok: true, product: new ProductText(Number(row.id), row.json as string, Number(row.variants)) }
        : fail(404, `product ${productId} was deleted meanwhile`),
    );
  }
  return { outcomes, events: committed(changes, results) };
}
