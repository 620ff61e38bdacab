import type { DB } from "../db/client";
import { toProduct, toVariant } from "../db/rows";
import { afterLostRace, isConstraintError, jsonChunks, runBatch, STALE_READ_GUARD, stmt } from "../platform/d1";
import { MAX_ORDER_TOTAL } from "../platform/fields";
import { type Claim, type Idem, runClaimed } from "../platform/idempotency";
import { optionNames, type ProductRow, toMoney, type VariantRow, variantValues } from "../products/present";
import { type AddEntry, type Address, MAX_LINES, MAX_QTY, type OrderInput, type RemoveEntry } from "./schema";

// POST /v1/orders (contract 3): every order of a request is planned in JS from one read batch
// and written in one write batch, whatever the number of orders and lines. Stock floors are
// CHECK constraints, so a batch that would oversell fails whole; it is then planned again from a
// fresh read, so an order loses only to stock that is really gone.

export type Money = number; // minor units
export type TaxLine = { rate: number; amount: Money };

export type OrderOutcome<Id = number> =
  | {
      ok: true;
      orderId: Id;
      currency: string;
      subtotal: Money;
      shipping: Money;
      discount: Money;
      total: Money;
      tax: TaxLine[];
      notices: string[];
    }
  | { ok: false; errors: string[]; notices: string[] };

export type CreateOptions = {
  now: number;
  /** The store currency (DEFAULT_CURRENCY) for orders whose payment names none. */
  defaultCurrency: string;
  /** Records the answer for Idempotency-Key retries, in the same batch as the orders. */
  recorder?: { idem: Idem; claim: Claim<Map<number, OrderOutcome<OrderRef>>> };
};

/** An order the write batch will create, referred to before its id exists. */
export type OrderRef = { $order: string };

// ---------------------------------------------------------------------------------------------
// Read: the catalog rows every line of the request may refer to, in one round trip.

type CatalogProduct = ProductRow & { variantCount: number };
type Catalog = {
  products: Map<number, CatalogProduct>;
  variants: Map<number, VariantRow>;
  skus: Map<string, { productId: number; variantId: number | null }>;
};

type Selector = { product_id?: number; variant_id?: number | null; sku?: string };

const READ_SKUS = "SELECT sku, product_id, variant_id FROM skus WHERE sku IN (SELECT value FROM json_each(?1))";
const READ_VARIANTS = `
  SELECT * FROM variants
  WHERE id IN (SELECT value FROM json_each(?1))
    OR id IN (SELECT variant_id FROM skus WHERE sku IN (SELECT value FROM json_each(?2)))`;
const READ_PRODUCTS = `
  SELECT p.*, (SELECT count(*) FROM variants AS v WHERE v.product_id = p.id) AS variant_count
  FROM products AS p
  WHERE p.id IN (SELECT value FROM json_each(?3))
    OR p.id IN (SELECT product_id FROM variants WHERE id IN (SELECT value FROM json_each(?1)))
    OR p.id IN (SELECT product_id FROM skus WHERE sku IN (SELECT value FROM json_each(?2)))`;

async function readCatalog(db: DB, selectors: Selector[]): Promise<Catalog> {
  const vids = new Set<number>();
  const skuSet = new Set<string>();
  const pids = new Set<number>();
  for (const s of selectors) {
    if (typeof s.variant_id === "number") vids.add(s.variant_id);
    if (s.sku !== undefined) skuSet.add(s.sku);
    if (s.product_id !== undefined) pids.add(s.product_id);
  }
  const [v, sk, p] = [JSON.stringify([...vids]), JSON.stringify([...skuSet]), JSON.stringify([...pids])];
  const [skuRows, variantRows, productRows] = await runBatch(db, [
    stmt(db, READ_SKUS, sk),
    stmt(db, READ_VARIANTS, v, sk),
    stmt(db, READ_PRODUCTS, v, sk, p),
  ]);
  return {
    skus: new Map(
      skuRows.results.map((r) => [
        r.sku as string,
        { productId: r.product_id as number, variantId: r.variant_id as number | null },
      ]),
    ),
    variants: new Map(variantRows.results.map((r) => [r.id as number, toVariant(r)])),
    products: new Map(
      productRows.results.map((r) => [r.id as number, { ...toProduct(r), variantCount: r.variant_count as number }]),
    ),
  };
}

// ---------------------------------------------------------------------------------------------
// Plan: resolve lines, apply add/remove and discount, compute totals, tax and stock.

/** What a line sells, as the snapshot the order keeps (contract 3.1). */
type Item = {
  productId: number;
  variantId: number | null;
  sku: string | null;
  title: string;
  options: { name: string; value: string }[];
  catalogPrice: Money;
  taxRate: number;
  stockKey: string;
  noMinus: boolean;
  stock: number;
  productUpdatedAt: number;
};

type Line = Item & { qty: number; unitPrice: Money; path: string };

function fromVariant(p: CatalogProduct, v: VariantRow): Item {
  const values = variantValues(v);
  return {
    productId: p.id,
    variantId: v.id,
    sku: v.sku,
    title: p.title,
    options: optionNames(p).map((name, i) => ({ name, value: values[i] })),
    catalogPrice: v.price,
    taxRate: p.taxRate,
    stockKey: `v${v.id}`,
    noMinus: v.noMinus === 1,
    stock: v.qty,
    productUpdatedAt: p.updatedAt,
  };
}

function fromProduct(p: CatalogProduct, path: string): Item | string {
  if (p.variantCount > 0) {
    return `${path}: product ${p.id} has variants: name one by variant_id or by its sku`;
  }
  return {
    productId: p.id,
    variantId: null,
    sku: p.sku,
    title: p.title,
    options: [],
    catalogPrice: p.price,
    taxRate: p.taxRate,
    stockKey: `p${p.id}`,
    noMinus: p.disableMinusqty === 1,
    stock: p.stock,
    productUpdatedAt: p.updatedAt,
  };
}

/**
 * Finds what a line names by its most specific identifier (variant_id, then sku, then
 * product_id); every other identifier given must agree. Returns the error text otherwise.
 */
function resolve(sel: Selector, path: string, cat: Catalog): Item | string {
  if (typeof sel.variant_id === "number") {
    const v = cat.variants.get(sel.variant_id);
    const p = v && cat.products.get(v.productId);
    if (!v || !p) return `${path}.variant_id: no variant ${sel.variant_id}`;
    if (sel.product_id !== undefined && sel.product_id !== p.id) {
      return `${path}.product_id: variant ${v.id} belongs to product ${p.id}, not ${sel.product_id}`;
    }
    // The product's SKU is accepted beside a variant_id: clients often send the parent SKU.
    if (sel.sku !== undefined && sel.sku !== v.sku && sel.sku !== p.sku) {
      return `${path}.sku: ${sel.sku} is not the SKU of variant ${v.id}`;
    }
    return fromVariant(p, v);
  }
  if (sel.sku !== undefined) {
    const owner = cat.skus.get(sel.sku);
    const p = owner && cat.products.get(owner.productId);
    if (!owner || !p) return `${path}.sku: no product or variant has SKU ${sel.sku}`;
    if (sel.product_id !== undefined && sel.product_id !== p.id) {
      return `${path}.product_id: SKU ${sel.sku} belongs to product ${p.id}, not ${sel.product_id}`;
    }
    if (owner.variantId !== null) {
      if (sel.variant_id === null) return `${path}.variant_id: SKU ${sel.sku} is a variant's, not a product's`;
      const v = cat.variants.get(owner.variantId);
      if (!v) return `${path}.sku: no product or variant has SKU ${sel.sku}`;
      return fromVariant(p, v);
    }
    return fromProduct(p, path);
  }
  const p = sel.product_id === undefined ? undefined : cat.products.get(sel.product_id);
  if (!p) return `${path}.product_id: no product ${sel.product_id}`;
  return fromProduct(p, path);
}

const lineKey = (l: Pick<Line, "productId" | "variantId" | "unitPrice">) =>
  `${l.productId}:${l.variantId ?? "-"}:${l.unitPrice}`;

/**
 * Adds a line, merged into an earlier one of the same variant and unit price (contract 3.1).
 * `index` finds that line by key, so merging stays linear in the number of lines.
 */
function addLine(lines: Line[], index: Map<string, Line>, line: Line, errors: string[]) {
  const key = lineKey(line);
  const same = index.get(key);
  if (!same) {
    lines.push(line);
    index.set(key, line);
    return;
  }
  if (same.qty + line.qty > MAX_QTY) {
    errors.push(`${line.path}.qty: together with ${same.path} more than ${MAX_QTY} of one item`);
    return;
  }
  same.qty += line.qty;
}

function matches(line: Line, r: RemoveEntry): boolean {
  if (r.sku !== undefined && line.sku !== r.sku) return false;
  if (r.product_id !== undefined && line.productId !== r.product_id) return false;
  if (r.variant_id !== undefined && line.variantId !== r.variant_id) return false;
  return true;
}

/**
 * Splits `total` over `weights` in proportion, in whole minor units that add up exactly
 * (largest remainder). BigInt because weight x total can pass 2^53.
 */
export function spread(total: Money, weights: Money[]): Money[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  if (sum === 0 || total === 0) return weights.map(() => 0);
  const t = BigInt(total);
  const s = BigInt(sum);
  const parts = weights.map((w) => {
    const exact = BigInt(w) * t;
    return { q: exact / s, r: exact % s };
  });
  let left = t - parts.reduce((a, p) => a + p.q, 0n);
  const order = parts
    .map((_, i) => i)
    .sort((a, b) => (parts[b].r > parts[a].r ? 1 : parts[b].r < parts[a].r ? -1 : a - b));
  for (const i of order) {
    if (left <= 0n) break;
    parts[i].q += 1n;
    left -= 1n;
  }
  return parts.map((p) => Number(p.q));
}

/**
 * Tax included in prices, per rate: the discount is spread over the lines in proportion to their
 * amounts (never more than the lines themselves: the rest of a discount covers shipping, which
 * carries no rate of its own), then each rate's part is amount x rate / (100 + rate), rounded
 * half up to minor units. Highest rate first.
 */
export function taxByRate(lines: { amount: Money; taxRate: number }[], discount: Money): TaxLine[] {
  const subtotal = lines.reduce((a, l) => a + l.amount, 0);
  // Over the lines, not over the rates (contract 3.1): each line's share is whole minor units.
  const shares = spread(
    Math.min(discount, subtotal),
    lines.map((l) => l.amount),
  );
  const byRate = new Map<number, Money>();
  lines.forEach((l, i) => {
    byRate.set(l.taxRate, (byRate.get(l.taxRate) ?? 0) + l.amount - shares[i]);
  });
  return [...byRate.keys()]
    .sort((a, b) => b - a)
    .map((rate) => {
      const net = BigInt(byRate.get(rate) as Money);
      const div = BigInt(100 + rate);
      return { rate, amount: Number((net * BigInt(rate) * 2n + div) / (2n * div)) };
    });
}

type Planned = {
  index: number;
  token: string;
  order: Record<string, unknown>;
  customer: Record<string, unknown> | null;
  lines: Line[];
  summary: Omit<Extract<OrderOutcome, { ok: true }>, "ok" | "orderId">;
};

// JSON-valued columns are read with `->`, which gives the text 'null' for a JSON null but SQL NULL
// for a missing key: absent blocks are left out of the row object, never set to null.
const addressJson = (a: Address | undefined) => a;

/** Everything about one order that the catalog read decides; errors name element-relative paths. */
function planOrder(
  index: number,
  o: OrderInput,
  cat: Catalog,
  opts: CreateOptions,
): Planned | { index: number; errors: string[]; notices: string[] } {
  const errors: string[] = [];
  const notices: string[] = [];
  let lines: Line[] = [];
  const byKey = new Map<string, Line>();
  const take = (sel: Selector, qty: number, price: Money | undefined, path: string) => {
    const item = resolve(sel, path, cat);
    if (typeof item === "string") errors.push(item);
    else addLine(lines, byKey, { ...item, qty, unitPrice: price ?? item.catalogPrice, path }, errors);
  };
  o.products.forEach((l, i) => {
    take(l, l.qty, l.price, `products[${i}]`);
  });
  (o.products_add ?? []).forEach((a: AddEntry, i) => {
    take(a, a.qty ?? 1, undefined, `products_add[${i}]`);
  });
  // One pass over the lines for all remove entries; an entry that matched nothing is a notice.
  const removes = o.products_remove ?? [];
  if (removes.length) {
    const used = new Set<number>();
    lines = lines.filter((l) => {
      const hit = removes.findIndex((r) => matches(l, r));
      if (hit < 0) return true;
      for (let i = hit; i < removes.length; i++) if (matches(l, removes[i])) used.add(i);
      return false;
    });
    removes.forEach((_, i) => {
      if (!used.has(i)) notices.push(`products_remove[${i}]: no line of the order matches; nothing removed`);
    });
  }
  if (errors.length) return { index, errors, notices };
  if (!lines.length) errors.push("products: the order has no lines left after products_remove");
  if (lines.length > MAX_LINES)
    errors.push(`products: at most ${MAX_LINES} lines per order, this one has ${lines.length}`);

  // Stops summing once past any possible valid total, so no sum leaves the safe integer range.
  const limit = MAX_ORDER_TOTAL * 2;
  let subtotal = 0;
  for (const l of lines) if (subtotal <= limit) subtotal += l.qty * l.unitPrice;
  const shipping = o.shipping?.price ?? 0;
  // At creation there is no earlier discount, so discount_remove only matters without discount_add.
  const discount = o.discount_add?.amount ?? 0;
  if (subtotal <= limit && discount > subtotal + shipping) {
    errors.push(
      `discount_add.amount: ${toMoney(discount)} is more than the lines plus shipping (${toMoney(subtotal + shipping)})`,
    );
  }
  const total = subtotal + shipping - discount;
  if (subtotal > limit || total > MAX_ORDER_TOTAL) {
    errors.push(`products: the order total would be more than ${toMoney(MAX_ORDER_TOTAL)}`);
  }
  if (errors.length) return { index, errors, notices };

  const tax = taxByRate(
    lines.map((l) => ({ amount: l.qty * l.unitPrice, taxRate: l.taxRate })),
    discount,
  );
  const token = crypto.randomUUID();
  const c = o.customer;
  const emailKey = c?.email?.toLowerCase() ?? null;
  const currency = o.payment?.currency ?? opts.defaultCurrency;
  return {
    index,
    token,
    lines,
    customer:
      c?.email === undefined
        ? null
        : {
            email: c.email,
            email_key: emailKey,
            type: c.type ?? null,
            phone: c.phone ?? null,
            billing_details: addressJson(c.billing_details),
            shipping_details: addressJson(c.shipping_details),
            has_login: c.login_create ?? 0,
            newsletter: c.newsletter_subscribe ?? 0,
          },
    order: {
      token,
      email_key: emailKey,
      email: c?.email ?? null,
      phone: c?.phone ?? null,
      customer_type: c?.type ?? null,
      note: c?.note ?? null,
      login_create: c?.login_create ?? 0,
      newsletter_subscribe: c?.newsletter_subscribe ?? 0,
      billing_details: addressJson(c?.billing_details),
      shipping_details: addressJson(c?.shipping_details),
      payment_method: o.payment?.method ?? null,
      transaction_id: o.payment?.transaction_id ?? null,
      payment_log: o.payment?.log ?? null,
      currency,
      shipping_id: o.shipping?.id ?? null,
      shipping_name: o.shipping?.name ?? null,
      shipping_price: shipping,
      subtotal,
      discount,
      total,
      tax,
      metadata: o.metadata,
    },
    summary: { currency, subtotal, shipping, discount, total, tax, notices },
  };
}

/**
 * Takes each planned order's stock from what the read saw, in the order of the request, so a
 * later order of the same request sees what an earlier one took. Orders that would take a
 * disable_minusqty item below zero fail here with a message; the CHECK constraints guarantee it.
 */
function reserveStock(plans: Planned[]) {
  const left = new Map<string, number>();
  const ok: Planned[] = [];
  const failed: { index: number; errors: string[]; notices: string[] }[] = [];
  for (const plan of plans) {
    const want = new Map<string, { qty: number; line: Line }>();
    for (const l of plan.lines) {
      const w = want.get(l.stockKey);
      if (w) w.qty += l.qty;
      else want.set(l.stockKey, { qty: l.qty, line: l });
    }
    const errors: string[] = [];
    for (const [key, { qty, line }] of want) {
      const have = left.get(key) ?? line.stock;
      if (line.noMinus && have - qty < 0) {
        const name = line.sku ?? (line.variantId === null ? `product ${line.productId}` : `variant ${line.variantId}`);
        errors.push(`${line.path}.qty: insufficient stock for ${name}: ${Math.max(have, 0)} left`);
      }
    }
    if (errors.length) {
      failed.push({ index: plan.index, errors, notices: plan.summary.notices });
      continue;
    }
    for (const [key, { qty, line }] of want) left.set(key, (left.get(key) ?? line.stock) - qty);
    ok.push(plan);
  }
  return { ok, failed };
}

// ---------------------------------------------------------------------------------------------
// Write: one batch for every order of the request; the statement count is fixed.

const UPSERT_CUSTOMERS = `
  INSERT INTO customers (email, email_key, type, phone, billing_details, shipping_details,
    has_login, newsletter, created_at, updated_at)
  SELECT c.value->>'email', c.value->>'email_key', c.value->>'type', c.value->>'phone',
    c.value->'billing_details', c.value->'shipping_details', c.value->>'has_login',
    c.value->>'newsletter', ?2, ?2
  FROM json_each(?1) AS c WHERE true
  ON CONFLICT (email_key) DO UPDATE SET
    email = excluded.email,
    type = coalesce(excluded.type, customers.type),
    phone = coalesce(excluded.phone, customers.phone),
    billing_details = coalesce(excluded.billing_details, customers.billing_details),
    shipping_details = coalesce(excluded.shipping_details, customers.shipping_details),
    has_login = max(customers.has_login, excluded.has_login),
    newsletter = max(customers.newsletter, excluded.newsletter),
    updated_at = excluded.updated_at`;

// ORDER BY the array position so order ids follow the order of the request.
const INSERT_ORDERS = `
  INSERT INTO orders (token, status, customer_id, email, phone, customer_type, note, login_create,
    newsletter_subscribe, billing_details, shipping_details, payment_method, transaction_id,
    payment_log, currency, shipping_id, shipping_name, shipping_price, subtotal, discount, total,
    tax, metadata, created_at, updated_at)
  SELECT o.value->>'token', 'unpaid',
    (SELECT id FROM customers WHERE email_key = o.value->>'email_key'),
    o.value->>'email', o.value->>'phone', o.value->>'customer_type', o.value->>'note',
    o.value->>'login_create', o.value->>'newsletter_subscribe', o.value->'billing_details',
    o.value->'shipping_details', o.value->>'payment_method', o.value->>'transaction_id',
    o.value->>'payment_log', o.value->>'currency', o.value->>'shipping_id',
    o.value->>'shipping_name', o.value->>'shipping_price', o.value->>'subtotal',
    o.value->>'discount', o.value->>'total', o.value->'tax', o.value->'metadata', ?2, ?2
  FROM json_each(?1) AS o ORDER BY o.key`;

const INSERT_LINES = `
  INSERT INTO order_lines (order_id, position, product_id, variant_id, sku, title, options, qty,
    unit_price, tax_rate)
  SELECT o.id, l.value->>'position', l.value->>'product_id', l.value->>'variant_id',
    l.value->>'sku', l.value->>'title', l.value->'options', l.value->>'qty',
    l.value->>'unit_price', l.value->>'tax_rate'
  FROM json_each(?1) AS l JOIN orders AS o ON o.token = ?2 ->> ('$[' || (l.value->>'order') || ']')`;

const TAKE_VARIANT_STOCK = `
  UPDATE variants SET qty = variants.qty - t.q
  FROM (SELECT s.value->>'variant_id' AS id, sum(s.value->>'qty') AS q FROM json_each(?1) AS s
        WHERE s.value->>'variant_id' IS NOT NULL GROUP BY 1) AS t
  WHERE variants.id = t.id`;

const TAKE_PRODUCT_STOCK = `
  UPDATE products SET stock = products.stock - t.q
  FROM (SELECT s.value->>'product_id' AS id, sum(s.value->>'qty') AS q FROM json_each(?1) AS s
        WHERE s.value->>'variant_id' IS NULL GROUP BY 1) AS t
  WHERE products.id = t.id`;

const SELECT_IDS = "SELECT id, token FROM orders WHERE token IN (SELECT value FROM json_each(?1))";

/** The one write batch of a request; the last statement reads back the new order ids. */
function writeBatch(db: DB, ready: Planned[], opts: CreateOptions): D1PreparedStatement[] {
  const { now } = opts;
  const customers = ready.flatMap((p) => (p.customer ? [p.customer] : []));
  // A line names its order by position in `tokens`, not by the 36-character token itself: lines
  // are most of a large request's JSON, and D1 caps a bound value at 1 MB (see jsonChunks).
  const tokens = JSON.stringify(ready.map((p) => p.token));
  const lines = ready.flatMap((p, order) =>
    p.lines.map((l, i) => ({
      order,
      position: i + 1,
      product_id: l.productId,
      variant_id: l.variantId,
      sku: l.sku,
      title: l.title,
      options: l.options,
      qty: l.qty,
      unit_price: l.unitPrice,
      tax_rate: l.taxRate,
    })),
  );
  // One row per variant or product, summed here: the stock JSON stays small whatever the lines.
  const taken = new Map<string, { product_id: number; variant_id: number | null; qty: number }>();
  for (const l of lines) {
    const key = `${l.product_id}:${l.variant_id}`;
    const t = taken.get(key);
    if (t) t.qty += l.qty;
    else taken.set(key, { product_id: l.product_id, variant_id: l.variant_id, qty: l.qty });
  }
  const stock = [...taken.values()];
  const stockChunks = jsonChunks(stock);
  // Prices, titles and which products have variants were read before this batch: a product
  // changed since (a PUT bumps updated_at) fails the batch, and the orders are planned again.
  const seen = new Map<number, number>();
  for (const p of ready) for (const l of p.lines) seen.set(l.productId, l.productUpdatedAt);
  const read = [...seen].map(([id, updated_at]) => ({ id, updated_at }));
  return [
    stmt(db, STALE_READ_GUARD, JSON.stringify(read)),
    stmt(db, UPSERT_CUSTOMERS, JSON.stringify(customers), now),
    ...jsonChunks(ready.map((p) => p.order)).map((json) => stmt(db, INSERT_ORDERS, json, now)),
    ...jsonChunks(lines).map((json) => stmt(db, INSERT_LINES, json, tokens)),
    ...stockChunks.map((json) => stmt(db, TAKE_VARIANT_STOCK, json)),
    ...stockChunks.map((json) => stmt(db, TAKE_PRODUCT_STOCK, json)),
    stmt(db, SELECT_IDS, tokens),
  ];
}

// ---------------------------------------------------------------------------------------------
// Catalog cache: the happy path in one round trip.
//
// Planning needs the catalog (prices, titles, tax rates, options, stock flags), so an order takes
// a read and a write. The rows the reads saw are kept per D1 binding (one per isolate), product
// by product, and an order whose every line they resolve is planned from them and written in ONE
// batch, whose first statement fails it unless every product it used still has the updated_at it
// was read with. That is sound because every change of a product, of one of its variants, or of
// the owner of one of their SKUs moves its product's updated_at (strictly: max(now, old + 1); all
// PUT paths do, and POST creates new products); orders only take stock, which the plan does not
// trust from the cache: the stock floor CHECKs decide, as they do on the read path. So whenever
// the cached rows could be wrong (the batch's stale-read guard fails), or the plan found anything to refuse (an unknown SKU, too
// little stock, any error, whose exact words need fresh rows), the request takes the read path,
// from scratch, as if the cache did not exist; a failed batch was rolled back whole.

type CachedCatalog = Catalog & { owned: Map<number, { variants: number[]; skus: string[] }> };

const catalogCache = new WeakMap<object, CachedCatalog>();
const CACHE_MAX_PRODUCTS = 2000;

/** Keeps what a read saw, replacing everything cached about the products it read. */
function remember(db: DB, cat: Catalog) {
  let c = catalogCache.get(db.$binding);
  if (!c || c.products.size + cat.products.size > CACHE_MAX_PRODUCTS) {
    c = { products: new Map(), variants: new Map(), skus: new Map(), owned: new Map() };
    catalogCache.set(db.$binding, c);
  }
  for (const [id, p] of cat.products) {
    const old = c.owned.get(id);
    for (const v of old?.variants ?? []) c.variants.delete(v);
    for (const sku of old?.skus ?? []) if (c.skus.get(sku)?.productId === id) c.skus.delete(sku);
    c.products.set(id, p);
    c.owned.set(id, { variants: [], skus: [] });
  }
  for (const [id, v] of cat.variants) {
    if (!cat.products.has(v.productId)) continue;
    c.variants.set(id, v);
    c.owned.get(v.productId)?.variants.push(id);
  }
  for (const [sku, owner] of cat.skus) {
    if (!cat.products.has(owner.productId)) continue;
    c.skus.set(sku, owner);
    c.owned.get(owner.productId)?.skus.push(sku);
  }
}

const forget = (db: DB) => catalogCache.delete(db.$binding);

/** The orders planned from cached rows and written in one batch, or undefined: take the read path. */
async function createFromCache(
  db: DB,
  items: { index: number; data: OrderInput }[],
  opts: CreateOptions,
): Promise<Map<number, OrderOutcome> | undefined> {
  const cat = catalogCache.get(db.$binding);
  if (!cat) return undefined;
  const plans: Planned[] = [];
  for (const { index, data } of items) {
    const plan = planOrder(index, data, cat, opts);
    if ("errors" in plan) return undefined;
    plans.push(plan);
  }
  const { ok: ready, failed } = reserveStock(plans);
  if (failed.length) return undefined;
  const planned = new Map<number, OrderOutcome<OrderRef>>();
  for (const p of ready) planned.set(p.index, { ok: true, orderId: { $order: p.token }, ...p.summary });
  const head = opts.recorder?.claim(planned) ?? [];
  let results: D1Result<Record<string, unknown>>[];
  try {
    // writeBatch starts with the stale-read guard: a product changed since it was cached fails it.
    results = await runClaimed(db, opts.recorder?.idem, head, writeBatch(db, ready, opts));
  } catch (e) {
    if (!isConstraintError(e)) throw e;
    forget(db);
    return undefined;
  }
  const ids = new Map(results[results.length - 1].results.map((r) => [r.token as string, r.id as number]));
  const outcomes = new Map<number, OrderOutcome>();
  for (const p of ready) outcomes.set(p.index, { ok: true, orderId: ids.get(p.token) as number, ...p.summary });
  return outcomes;
}

/**
 * Creates orders, each on its own: one that fails never affects another. One round trip when
 * cached catalog rows plan every order (above), else two (read, write). A write that fails on a
 * constraint lost a race for stock or read a product that changed since: it rolled back whole,
 * and the orders are planned again from a fresh read, at most MAX_ATTEMPTS times.
 */
export async function createOrders(
  db: DB,
  items: { index: number; data: OrderInput }[],
  opts: CreateOptions,
): Promise<Map<number, OrderOutcome>> {
  if (items.length) {
    const fast = await createFromCache(db, items, opts);
    if (fast) return fast;
  }
  const outcomes = new Map<number, OrderOutcome>();
  const selectors = items.flatMap(({ data }) => [...data.products, ...(data.products_add ?? [])]);
  for (let attempt = 1; items.length; attempt++) {
    const cat = await readCatalog(db, selectors);
    remember(db, cat);
    const plans: Planned[] = [];
    for (const { index, data } of items) {
      const plan = planOrder(index, data, cat, opts);
      if ("errors" in plan) outcomes.set(index, { ok: false, errors: plan.errors, notices: plan.notices });
      else plans.push(plan);
    }
    const { ok: ready, failed } = reserveStock(plans);
    for (const f of failed) outcomes.set(f.index, { ok: false, errors: f.errors, notices: f.notices });
    const planned = new Map<number, OrderOutcome<OrderRef>>(outcomes as Map<number, OrderOutcome<never>>);
    for (const p of ready) planned.set(p.index, { ok: true, orderId: { $order: p.token }, ...p.summary });
    const head = opts.recorder?.claim(planned) ?? [];
    if (!ready.length) {
      if (head.length) await runClaimed(db, opts.recorder?.idem, head, []);
      break;
    }
    try {
      const results = await runClaimed(db, opts.recorder?.idem, head, writeBatch(db, ready, opts));
      const ids = new Map(results[results.length - 1].results.map((r) => [r.token as string, r.id as number]));
      for (const p of ready) {
        outcomes.set(p.index, { ok: true, orderId: ids.get(p.token) as number, ...p.summary });
      }
      break;
    } catch (e) {
      if (!isConstraintError(e)) throw e;
      await afterLostRace(attempt, "stock or the catalog");
    }
  }
  return outcomes;
}
