import { products, skus } from "../db/schema";
import { sqlNames } from "../platform/columns";
import { afterLostRace, type DB, fitsOneValue, isConstraintError, jsonChunks, stmt } from "../platform/d1";
import { runClaimed } from "../platform/idempotency";
import { committed, newEvent, outboxStatement, type PendingEvent } from "../webhooks/outbox";
import { derivedSlug, tooManyPaths, withHead } from "./categories";
import { withInitials } from "./fields";
import { INSERT_PACKED, INSERT_PACKED_ONE, INSERT_PRODUCT, INSERT_PRODUCTS, packedRows } from "./inserts";
import { minimalJson, ownJson, ProductText } from "./present";
import type { ItemOutcome, ProductRef, Recorder, WriteOptions, Written } from "./route";
import type { ProductCreate, VariantEntry } from "./schema";
import { agreedNames, createdTooLarge, VALUE_KEYS, valuesOf } from "./variants";
import { versionBumps } from "./version";

// POST /v1/products (docs/products.md): each item planned in JavaScript, all of them written by one
// batch that also answers them as SQLite's JSON text (./present.ts).

const P = sqlNames(products);

type ProductInsert = ReturnType<typeof productColumns> & { token: string; slug: string };

function productColumns(p: ProductCreate, optionNames: string[]) {
  return {
    ...withInitials(p),
    // Required by productCreate; zod types preprocess outputs as optional.
    price: p.price as number,
    option_names: optionNames,
    categories: withHead(p.categories ?? [], p.headcategory_name),
  };
}

type Planned = {
  index: number;
  product: ProductInsert;
  /** The variant entries as given, checked; written packed (./inserts.ts). */
  variants: VariantEntry[];
  /** The SKUs it will own, and where each was given: -1 the product, else its entry. */
  skus: string[];
  skuAt: number[];
  /** The slug the client gave, if it did. */
  slug?: string;
  /** The item as given, should it be planned again. */
  source: ProductCreate;
};

/** An item the create refuses: its outcome, with its index. */
type Refused = { ok: false; index: number; status: 400 | 409 | 413; errors: string[] };

/**
 * Everything about one product that can be decided without the database: the one plan of a
 * create, whatever its size. It reads the entries where they are, without a row object per
 * variant (a create has up to 2,048), and words every refusal; the batch's constraints then only
 * meet what another request did meanwhile (a taken SKU or slug). Unless `full`, without the two
 * checks that need a map of every entry (two entries repeating a combination of option values, or
 * a SKU): the batch's unique indexes refuse those, and the item is then planned again with them
 * (createProducts). The maps of 2,048 keys were about half of the plan's CPU. A refusal is worded
 * whole, with every check.
 */
function planCreate(p: ProductCreate, index: number, full = false): Planned | Refused {
  const refuse = (status: Refused["status"], errors: string[]) =>
    full ? ({ ok: false, index, status, errors } as const) : planCreate(p, index, true);
  const entries = p.variants?.add ?? [];
  const path = (i: number) => `variants.add[${i}]`;
  // The names every entry agrees on, read without an object per entry; worded only when they differ.
  const quick = agreedNames(entries, (e) => e);
  const { names = [], errors } = quick.errors.length
    ? agreedNames(
        entries,
        (e) => e,
        (_, i) => path(i),
      )
    : quick;
  const token = crypto.randomUUID();
  // A slug left to the database is resolved by a trigger in the insert (docs/products.md,
  // "Categories, URLs and images"); a given one is unique or the batch fails.
  const product = {
    ...productColumns(p, entries.length ? names : []),
    token,
    slug: p.slug ?? derivedSlug(p.title as string, token),
  };
  const tooMany = tooManyPaths(product.categories);
  if (tooMany) errors.push(tooMany);
  const flagOn = product.disable_minusqty === 1;
  if (entries.length && p.stock !== undefined) {
    errors.push("stock: a product with variants has no stock of its own: give each variant its qty");
  }
  if (flagOn && product.stock < 0) errors.push("stock: must not be negative while disable_minusqty is on");
  // The entry that last gave each combination of option values.
  const seen = new Map<string, number>();
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i];
    const key = comboOf(entry, names, full);
    if (key === undefined) {
      for (const e of valuesOf(entry, names, path(i)).errors) errors.push(e);
      continue;
    }
    if (full) {
      const dup = seen.get(key);
      if (dup !== undefined) errors.push(`${path(i)}: same option values as ${path(dup)}`);
      seen.set(key, i);
    }
    if (flagOn && (entry.qty ?? 0) < 0)
      errors.push(`${path(i)}.qty: must not be negative while disable_minusqty is on`);
  }
  if (errors.length) return refuse(400, errors);
  // SKUs with where they were given (-1 the product, else its entry); paths are worded only for an
  // error (2,048 entries).
  const owned: string[] = [];
  const skuAt: number[] = [];
  for (let i = -1; i < entries.length; i++) {
    const sku = i < 0 ? product.sku : entries[i].sku;
    if (sku !== undefined && sku !== null) {
      owned.push(sku);
      skuAt.push(i);
    }
  }
  // A SKU given twice inside one product fails the batch on the skus key: worded on the full plan.
  const first = new Map<string, number>();
  for (let k = 0; full && k < owned.length; k++) {
    const earlier = first.get(owned[k]);
    if (earlier === undefined) first.set(owned[k], skuAt[k]);
    else errors.push(`${skuPath(skuAt[k])}: SKU ${owned[k]} is also given at ${earlier < 0 ? "sku" : path(earlier)}`);
  }
  if (errors.length) return refuse(409, errors);
  const tooBig = createdTooLarge(product, entries);
  if (tooBig) return refuse(413, [tooBig]);
  return { index, product, variants: entries, skus: owned, skuAt, slug: p.slug ?? undefined, source: p };
}

/** Where a create's SKU was given (Planned.skuAt). */
const skuPath = (at: number) => (at < 0 ? "sku" : `variants.add[${at}].sku`);

/**
 * The key of an entry's option values for `names` (as comboKey gives it; "" unless `keyed`), without
 * an array per entry; undefined when a value is missing or given past the names (valuesOf then words why).
 */
function comboOf(e: VariantEntry, names: readonly string[], keyed: boolean): string | undefined {
  if (!names.length) return undefined;
  let key = "";
  for (let n = 0; n < VALUE_KEYS.length; n++) {
    const v = e[VALUE_KEYS[n]];
    if ((v === undefined) === n < names.length) return undefined;
    if (keyed) key += (n ? "\u0000" : "") + (v ?? "");
  }
  return key;
}

const K = sqlNames(skus);
/** The registry's owners of the SKUs of ?1 (a JSON list). */
export const READ_OWNERS = `SELECT k.${K.sku} AS sku, k.${K.productId} AS product_id, k.${K.variantId} AS variant_id
  FROM json_each(?1) AS j CROSS JOIN ${K.$} AS k ON k.${K.sku} = j.value`;
/** The products that have a slug of ?1 (a JSON list). */
export const READ_SLUGS = `SELECT p.${P.slug} AS slug, p.${P.id} AS id
  FROM json_each(?1) AS j CROSS JOIN ${P.$} AS p ON p.${P.slug} = j.value`;

/** What READ_OWNERS or READ_SLUGS (`sql`) finds of `wanted`, as a map to the product; no read for none. */
async function ownersOf(db: DB, sql: string, wanted: string[]): Promise<Map<string, number>> {
  if (!wanted.length) return new Map();
  const { results } = await stmt(db, sql, JSON.stringify(wanted)).all<Record<string, unknown>>();
  return new Map(results.map((r) => [String(r.sku ?? r.slug), Number(r.product_id ?? r.id)]));
}

export const skuTaken = (path: string, sku: string, productId: number) =>
  `${path}: SKU ${sku} is already used by product ${productId}`;

export const slugTaken = (slug: string, productId: number) => `slug: ${slug} is already used by product ${productId}`;

/**
 * Creates products, each on its own: one that fails never affects another. One write batch for all
 * of them, whatever their number of variants. When a SKU is taken (by an earlier or a concurrent
 * request) the batch fails on the skus primary key and rolls back whole; the next attempt reads
 * which SKUs are taken, fails those items with 409 and writes the rest.
 */
export async function createProducts(
  db: DB,
  items: { index: number; data: ProductCreate }[],
  now: number,
  recorder?: Recorder,
  options: WriteOptions = {},
): Promise<Written> {
  const outcomes = new Map<number, ItemOutcome>();
  let events: PendingEvent[] = [];
  let plans: Planned[] = [];
  // Whether the plans had every check (planCreate).
  let full = false;
  for (const { index, data } of items) {
    const plan = planCreate(data, index);
    if ("errors" in plan) outcomes.set(index, plan);
    else plans.push(plan);
  }
  for (let attempt = 1; plans.length; attempt++) {
    // The happy path is one round trip: the first attempt writes without reading, and the skus
    // primary key refuses a taken SKU; only then does a read find out which item to fail.
    // A given slug is unique like a SKU: the unique index refuses a taken one.
    const first = attempt === 1;
    const [taken, slugs] = await Promise.all([
      ownersOf(db, READ_OWNERS, first ? [] : plans.flatMap((p) => p.skus)),
      ownersOf(db, READ_SLUGS, first ? [] : plans.flatMap((p) => (p.slug ? [p.slug] : []))),
    ]);
    const claimed = new Map<string, number>();
    const claimedSlugs = new Set<string>();
    const ready: Planned[] = [];
    // One product and no SKU known taken (the first attempt's usual case): no SKU to look up.
    const lookUp = plans.length > 1 || taken.size > 0;
    for (const plan of plans) {
      const errors: string[] = [];
      for (let k = 0; lookUp && k < plan.skus.length; k++) {
        const sku = plan.skus[k];
        const owner = taken.get(sku);
        if (owner !== undefined) errors.push(skuTaken(skuPath(plan.skuAt[k]), sku, owner));
        else if (claimed.has(sku)) errors.push(`${skuPath(plan.skuAt[k])}: SKU ${sku} is used twice in this request`);
      }
      if (plan.slug !== undefined) {
        const owner = slugs.get(plan.slug);
        if (owner !== undefined) errors.push(slugTaken(plan.slug, owner));
        else if (claimedSlugs.has(plan.slug)) errors.push(`slug: ${plan.slug} is used twice in this request`);
      }
      if (errors.length) outcomes.set(plan.index, { ok: false, status: 409, errors });
      else {
        if (lookUp) for (const sku of plan.skus) claimed.set(sku, plan.index);
        if (plan.slug !== undefined) claimedSlugs.add(plan.slug);
        ready.push(plan);
      }
    }
    const planned = new Map<number, ItemOutcome<ProductRef>>(outcomes as Map<number, ItemOutcome<never>>);
    for (const p of ready) planned.set(p.index, { ok: true, product: { $product: p.product.token } });
    const head = recorder?.claim(planned) ?? [];
    if (!ready.length && !head.length) break;
    const tokens = JSON.stringify(ready.map((p) => p.product.token));
    const byToken = `p.${P.token} IN (SELECT value FROM json_each(?1))`;
    events = ready.map((p) => newEvent("product.add", { productToken: p.product.token, keyId: options.keyId }));
    // Every product's variants in one packed list, split only when too long for one bound value.
    const rows = ready.flatMap((p, i) => packedRows(p.variants, i));
    const whole = JSON.stringify(rows);
    const variants = fitsOneValue(whole) ? [whole] : jsonChunks(rows);
    // A batch of one product has statements of its own that read and write less (./inserts.ts).
    const one = ready.length === 1;
    try {
      const results = await runClaimed(db, recorder?.idem, head, [
        ...jsonChunks(ready.map((p) => p.product)).map((json) =>
          stmt(db, one ? INSERT_PRODUCT : INSERT_PRODUCTS, json, now, options.keyId ?? null),
        ),
        ...variants.map((json) => stmt(db, one ? INSERT_PACKED_ONE : INSERT_PACKED, json, now, tokens)),
        outboxStatement(db, events, now),
        // The catalogue's version, once for the batch; a new product's own version is its first.
        ...(ready.length ? versionBumps(db, []) : []),
        // The products as SQLite writes their answer (./present.ts): never presented in JavaScript.
        (options.minimal ? minimalJson : ownJson)(db, byToken, tokens),
        ...(recorder ? [recorder.snapshot(byToken, tokens)] : []),
      ]);
      events = committed(events, results);
      const texts = results[results.length - (recorder ? 2 : 1)].results;
      const created = new Map(texts.map((row) => [String(row.token), ProductText.of(row)]));
      for (const plan of ready) {
        outcomes.set(plan.index, { ok: true, product: created.get(plan.product.token) as ProductText });
      }
      break;
    } catch (e) {
      events = [];
      // Only a lost race on a SKU is worth another plan; anything else is the caller's 5xx.
      if (!isConstraintError(e)) throw e;
      if (!full) {
        // A unique index may have refused a combination or SKU given twice in a product: find and word it.
        full = true;
        const again = plans.map((p) => planCreate(p.source, p.index, true));
        plans = again.filter((p): p is Planned => !("errors" in p));
        for (const p of again) if ("errors" in p) outcomes.set(p.index, p);
        if (plans.length < again.length) continue;
      }
      await afterLostRace(attempt, "the catalog");
    }
  }
  return { outcomes, events };
}
