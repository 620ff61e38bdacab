import { getTableConfig, type SQLiteColumn } from "drizzle-orm/sqlite-core";
import { createMiddleware } from "hono/factory";
import { type orders, products, variants } from "../db/schema";
import type { AppEnv } from "../env";
import { type PublicView, shownTo } from "../keys/public";
import { optionColumn, sqlNames } from "../platform/columns";
import { carriedSql, type DB, stmt } from "../platform/d1";
import {
  type Field,
  OPTION_KEYS,
  OWN_PRODUCT,
  OWN_VARIANT,
  type OwnProductSpecial,
  type OwnVariantSpecial,
  type PRODUCT_FIELDS,
  productColumn,
  productField,
  type VARIANT_FIELDS,
  type VariantColumn,
  variantColumn,
  variantField,
} from "./fields";
import { parseList } from "./kinds";

// A product in our own dialect, as GET /v1/products/{id} answers it (docs/products.md), made two
// ways from the fields' description (./fields.ts): in JavaScript from D1's rows (presentProduct:
// replays, a 412's product as it is now, the tests' reference), and as JSON text SQLite builds
// (productRead: the read; ownJson: every write's answer). test/products.own-json.test.ts holds
// the two equal, and the publishable filter over them, on random products. The SQL half also
// holds what the modelled dialect's builder (./modelled-json.ts) shares with it.

export type ProductRow = typeof products.$inferSelect;
export type VariantRow = typeof variants.$inferSelect;
export type OrderRow = typeof orders.$inferSelect;

/** Minor units to the JSON number clients expect (19950 -> 199.5). */
export const toMoney = (cents: number) => cents / 100;

export const optionNames = (p: Pick<ProductRow, "optionNames">): string[] => JSON.parse(p.optionNames);
/** A variant's five option value columns. */
export type OptionValues = Pick<VariantRow, `option${1 | 2 | 3 | 4 | 5}`>;
export const variantValues = (v: OptionValues): string[] => [v.option1, v.option2, v.option3, v.option4, v.option5];

/** The variant columns an answer shows, as productReads selects them (snake_case, raw D1 rows). */
export type VariantOutRow = Record<string, unknown> & { id: number; product_id: number };

// STORE_URL, normalised to end with one "/". A module value set per request: every request an
// isolate serves has the same env (one Worker's vars), so concurrent requests set the same value;
// presenting a product then needs no env threaded through every read path.
let storeBase = "";

/**
 * Sets the store base URL for the product answers made next (a request's, or a queue batch's):
 * "https://shop.example/products/" for "https://shop.example/products" (or "").
 */
export function useStoreUrl(value: string | undefined) {
  const v = (value ?? "").trim().replace(/\/+$/, "");
  storeBase = v ? `${v}/` : "";
}

/** Sets the store base URL for this request's product answers (products routes only). */
export const storeUrl = createMiddleware<AppEnv>(async (c, next) => {
  useStoreUrl(c.env.STORE_URL);
  await next();
});

/** A product's url, or null without STORE_URL or a slug. */
export const productUrl = (s: string | null) => (s && storeBase ? storeBase + s : null);

const SLUG = `p.${sqlNames(products).slug}`;
/** url: STORE_URL's base (an SQL literal: configuration, not request input) and the slug; `none` without either. */
export const urlSql = (none = "''") => {
  const base = `'${storeBase.replaceAll("'", "''")}'`;
  return `iif(${SLUG} IS NULL OR ${base} = '', ${none}, ${base} || ${SLUG})`;
};

const iso = (ms: number) => new Date(ms).toISOString();
type Products = typeof PRODUCT_FIELDS;
type Variants = typeof VARIANT_FIELDS;
/** The own dialect's value of a described field `F` over a row `R` of its table. */
type OwnValue<F, R> = F extends { kind: { out?: infer O }; column: infer C extends keyof R }
  ? null extends R[C]
    ? Exclude<O, undefined> | null
    : Exclude<O, undefined>
  : never;
type Answered<D, R, Keys extends PropertyKey> = { -readonly [K in Keys & keyof D]: OwnValue<D[K], R> };

export type PresentedVariant = { variant_id: number } & Record<(typeof OPTION_KEYS)[number], string | null> &
  Answered<Variants, VariantRow, (typeof OWN_VARIANT)[number]>;

/** How the presenter answers a described field of a row (columns by `key`). */
function getter(f: Field, key: string): (row: Record<string, unknown>) => unknown {
  const js = f.kind.own.js as ((v: unknown) => unknown) | undefined;
  if (!js) return (row) => row[key];
  return (row) => {
    const v = row[key];
    return v === null ? null : js(v);
  };
}

type Get = (row: Record<string, unknown>) => unknown;
type Variants_ = (vs: VariantOutRow[], names: (string | null)[], get: Get[]) => PresentedVariant[];

// A variant's answer: its keys in order, each with the JavaScript that reads it from a raw variant
// row `v` (the option names `n` resolved once per product; `get[i]` a described field's getter).
const COLUMNS = sqlNames(variants);
const OPTION_COLUMNS = [1, 2, 3, 4, 5].map((n) => optionColumn(COLUMNS, n));
const GETS: Get[] = [];
const PARTS: string[] = [];
for (const k of OWN_VARIANT) {
  const f = variantField(k);
  if (f) {
    const column = COLUMNS[f.column as VariantColumn];
    GETS.push(getter(f, column));
    // A plain value is read where it is; a converted one (money, images) through its getter.
    PARTS.push(
      `${JSON.stringify(k)}: ${f.kind.own.js ? `get[${GETS.length - 1}](v)` : `v[${JSON.stringify(column)}]`}`,
    );
  } else if (k === "options") {
    OPTION_COLUMNS.forEach((c, j) => {
      PARTS.push(`${JSON.stringify(OPTION_KEYS[2 * j])}: n[${j}]`);
      PARTS.push(`${JSON.stringify(OPTION_KEYS[2 * j + 1])}: n[${j}] ? v[${JSON.stringify(c)}] : null`);
    });
  } else PARTS.push(`${JSON.stringify(k)}: v.id`);
}

/**
 * Presents a product's variants straight from D1's rows, the option names resolved once per
 * product: one object literal with every key in its final order, made from the description while
 * this module is evaluated (the one time Workers allow code generation), is ten times faster than
 * setting the keys one by one over 2,048 variants (docs/design.md, "Fields, described once").
 */
const LITERAL = literal();
const presentVariants: Variants_ = LITERAL ?? byKey;
/** Both ways (literal undefined where code generation was refused): tests hold them equal. */
export const variantPresenters = { literal: LITERAL, byKey, gets: GETS };

function literal(): Variants_ | undefined {
  try {
    return new Function(
      "vs",
      "n",
      "get",
      `const out = new Array(vs.length);
      for (let i = 0; i < vs.length; i++) { const v = vs[i]; out[i] = {${PARTS.join(", ")}}; }
      return out;`,
    ) as Variants_;
  } catch {
    return undefined;
  }
}

/** Where code generation is refused, the same answer, key by key. */
function byKey(vs: VariantOutRow[], n: (string | null)[], get: Get[]) {
  return vs.map((v) => {
    const o: Record<string, unknown> = {};
    let g = 0;
    for (const k of OWN_VARIANT) {
      if (k === "options") {
        for (let j = 0; j < 5; j++) {
          o[OPTION_KEYS[2 * j]] = n[j];
          o[OPTION_KEYS[2 * j + 1]] = n[j] ? v[OPTION_COLUMNS[j]] : null;
        }
      } else o[k] = k === "variant_id" ? v.id : get[g++](v);
    }
    return o as PresentedVariant;
  });
}

/** The entries the presenter adds to a product's described fields (see OWN_PRODUCT). */
type ProductSpecials = {
  product_id: number;
  /** A product with variants has no stock of its own: its stock is the sum of their qty. */
  stock: number;
  /** Paths of names, head category first (docs/products.md, "Categories, URLs and images"). */
  categories: string[][];
  slug: string | null;
  url: string | null;
  variants: PresentedVariant[];
  created_at: string;
  updated_at: string;
};
export type ProductOut = ProductSpecials & Answered<Products, ProductRow, (typeof OWN_PRODUCT)[number]>;

const PRODUCT_GETTERS = OWN_PRODUCT.map((k) => {
  const f = productField(k);
  return [k, f && !f.computed ? getter(f, f.column) : undefined] as const;
});

/** A product as GET /v1/products/{id} returns it (docs/products.md), variants included. */
export function presentProduct(p: ProductRow, vs: VariantOutRow[]): ProductOut {
  const names = optionNames(p);
  let stock = p.stock;
  if (vs.length) {
    stock = 0;
    for (const v of vs) stock += v.qty as number;
  }
  const special: ProductSpecials = {
    product_id: p.id,
    stock,
    categories: parseList(p.categories) as string[][],
    slug: p.slug,
    url: productUrl(p.slug),
    // The five option names, null where there is none.
    variants: presentVariants(
      vs,
      [0, 1, 2, 3, 4].map((i) => names[i] ?? null),
      GETS,
    ),
    created_at: iso(p.createdAt),
    updated_at: iso(p.updatedAt),
  };
  const out: Record<string, unknown> = {};
  for (const [k, get] of PRODUCT_GETTERS) out[k] = get ? get(p) : special[k as keyof ProductSpecials];
  return out as ProductOut;
}

/** Groups variant rows (ordered by product) under their products, keeping the products' order. */
export function presentProducts(ps: ProductRow[], vs: VariantOutRow[]) {
  // The common answer is one product: its rows are all the rows, no grouping needed.
  if (ps.length === 1) return [presentProduct(ps[0], vs)];
  const byProduct = new Map<number, VariantOutRow[]>();
  for (const v of vs) {
    const list = byProduct.get(v.product_id);
    if (list) list.push(v);
    else byProduct.set(v.product_id, [v]);
  }
  return ps.map((p) => presentProduct(p, byProduct.get(p.id) ?? []));
}

// ---------------------------------------------------------------------------------------------
// The same answer as JSON text SQLite builds: for the reads (a storefront's with only what its key
// sees) and for the writes' answers (./create.ts, ./update/write.ts). Presenting 2,048 variants in
// JavaScript (D1's row objects, one object per variant, then the answer's stringify) was about a
// third of such a write's CPU, and most of a storefront's 27 ms read; the text passes through
// unparsed (src/platform/d1.ts), carried but for GET /v1/products/{id}'s.

/** A member of a JSON object that SQL builds: its key and the SQL of its value. */
export type Member = [key: string, sql: string];

/** `alias.name` of a Drizzle column: SQL that names columns through the schema (src/db/schema/). */
export const col = (alias: string, c: { name: string }) => `${alias}.${c.name}`;
const P = (c: SQLiteColumn) => col("p", c);
const V = (c: SQLiteColumn) => col("v", c);
const PRODUCTS = sqlNames(products).$;
const VARIANTS = sqlNames(variants).$;

// The index on (product_id, position), whose entries end with the id: a product's variants in
// answer order, read without a sort. Named in the statements that aggregate them (INDEXED BY), so
// that the unique index on the option values, which starts with product_id too, is never taken.
const byPosition = getTableConfig(variants).indexes.find(({ config: { columns: c } }) => {
  const [product, position] = c as unknown[];
  return c.length === 2 && product === variants.productId && position === variants.position;
});
if (!byPosition) throw new Error("no index on variants (product_id, position)");
/**
 * The variants table as `alias`, read through that index: joined to products in id order and grouped by
 * product, each product's variants reach its aggregates in answer order (position, then id), in one
 * pass and without a sort (docs/design.md, "Answers from D1").
 */
export const variantsInOrder = (alias: string) => `${VARIANTS} AS ${alias} INDEXED BY ${byPosition.config.name}`;

/**
 * The members of an answer's key order (./key-order.ts): a described field's SQL by `described`,
 * found once; every other key's (one SQL, or several members in its place) from the `special`
 * given to the function returned.
 */
export function ordered<S extends string>(order: readonly string[], described: (key: string) => string | undefined) {
  const found = order.map((k) => [k, described(k)] as const);
  return (special: Record<S, string | Member[]>): Member[] =>
    found.flatMap(([k, sql]): Member[] => {
      if (sql !== undefined) return [[k, sql]];
      const s = (special as Record<string, string | Member[]>)[k];
      if (s === undefined) throw new Error(`no SQL for the answer's key ${k}`);
      return typeof s === "string" ? [[k, s]] : s;
    });
}

export const object = (members: Member[]) => `json_object(${members.map(([k, v]) => `'${k}', ${v}`).join(", ")})`;

/** The members a publishable key with `view` sees (src/keys/public.ts); all of them for a secret key. */
export const kept = (members: Member[], view: PublicView | undefined): Member[] =>
  view ? members.filter(([k]) => shownTo(view, k)) : members;

/** A storefront without the stock scope sees availability instead of a count. */
export const availability = (view: PublicView | undefined, stock: string): Member[] =>
  view && !view.stock ? [["availability", `iif(${stock} > 0, 'in_stock', 'out_of_stock')`]] : [];

/** A product's or variant's members as `view` sees them, the availability of `stock` last. */
export const seen = (members: Member[], view: PublicView | undefined, stock: string): Member[] => [
  ...kept(members, view),
  ...availability(view, stock),
];

/** Epoch milliseconds as Date#toISOString gives them. */
const isoSql = (c: string) => `strftime('%Y-%m-%dT%H:%M:%fZ', ${c} / 1000.0, 'unixepoch')`;

/** The own dialect's SQL of a described field over its column `c`; a NULL column answers null. */
function own(f: Field, c: SQLiteColumn, alias: string) {
  const at = col(alias, c);
  const sql = f.kind.own.sql(at);
  return c.notNull || sql === at ? sql : `iif(${at} IS NULL, NULL, ${sql})`;
}

/** A product's option names as p.option_name0 to 4, from its JSON once, not three times a variant. */
export const OPTION_NAMES = [0, 1, 2, 3, 4]
  .map((i) => `${P(products.optionNames)}->>${i} AS option_name${i}`)
  .join(", ");
const name = (n: number) => `p.option_name${n - 1}`;
const VARIANT_MEMBERS = ordered<OwnVariantSpecial>(OWN_VARIANT, (k) => {
  const f = variantField(k);
  return f && own(f, variantColumn(f), "v");
})({
  variant_id: V(variants.id),
  options: [1, 2, 3, 4, 5].flatMap((n): Member[] => [
    [`variant_option${n}_name`, name(n)],
    [
      `variant_option${n}_value`,
      `iif(${name(n)} IS NULL OR ${name(n)} = '', NULL, ${col("v", variants[`option${n}` as "option1"])})`,
    ],
  ]),
});

// A product's variants are the rows `v` joined to it in answer order (variantsInOrder) and
// aggregated once, in both dialects: their count, their qty summed as its stock and their list
// come of one pass. A product without variants is the LEFT JOIN's one row of NULLs, which no
// aggregate counts.
export const COUNT = `count(${V(variants.id)})`;
/** The variants `view` sees, as a FILTER of the aggregates: a storefront never sees a hidden one. */
export const shownVariants = (view: PublicView | undefined) =>
  view ? `${V(variants.visible)} = 1` : `${V(variants.id)} IS NOT NULL`;
/** The product's stock: its variants' qty summed (a storefront's, of those it sees), else its own. */
export const stockSql = (view: PublicView | undefined) =>
  `iif(${COUNT} > 0, coalesce(sum(${V(variants.qty)})${view ? ` FILTER (WHERE ${shownVariants(view)})` : ""}, 0), ${P(products.stock)})`;

const PRODUCT_MEMBERS = ordered<OwnProductSpecial>(OWN_PRODUCT, (k) => {
  const f = productField(k);
  return f && !f.computed ? own(f, productColumn(f), "p") : undefined;
});

/** What ProductText.of reads besides the text: the product's id and token, and its variants' count. */
const HEAD = `${P(products.id)}, ${P(products.token)}, ${COUNT} AS variants`;

/**
 * The products `where` selects, with their OPTION_NAMES, each joined to its variants and grouped.
 * They are kept in id order, which the grouping then follows without a sort (a grouping by id of
 * products found by token sorted every variant row).
 */
const joined = (select: string, where: string) =>
  `WITH page AS MATERIALIZED (SELECT p.*, ${OPTION_NAMES} FROM ${PRODUCTS} AS p WHERE ${where} ORDER BY ${P(products.id)})
  SELECT ${HEAD}, ${select} AS json FROM page AS p LEFT JOIN ${variantsInOrder("v")} ON ${V(variants.productId)} = ${P(products.id)}
  GROUP BY ${P(products.id)} ORDER BY ${P(products.id)} DESC`;

/**
 * The products `where` selects (a condition on `p`, values bound as ?1...), newest first, one `json`
 * text each, carried (src/platform/d1.ts: carriedJson answers it).
 */
export function ownJson(db: DB, where: string, ...params: unknown[]) {
  return stmt(db, joined(carriedSql(productSql(undefined)), where), ...params);
}

/**
 * ownJson as GET /v1/products/{id} reads it, not carried (the route answers the text as is); as
 * a publishable key with `view` sees it, its visible products only (a hidden one yields no row),
 * each as the reference filter over presentProduct shows it (test/modelled-reference.ts, publicFields).
 */
export function productRead(db: DB, view: PublicView | undefined, where: string, ...params: unknown[]) {
  const shown = view ? `(${where}) AND ${P(products.visible)} = 1` : where;
  return stmt(db, joined(productSql(view), shown), ...params);
}

function productSql(view: PublicView | undefined) {
  const stock = stockSql(view);
  const members = PRODUCT_MEMBERS({
    product_id: P(products.id),
    stock,
    categories: `json(${P(products.categories)})`,
    slug: P(products.slug),
    url: urlSql("NULL"),
    variants: `json_group_array(${object(seen(VARIANT_MEMBERS, view, V(variants.qty)))}) FILTER (WHERE ${shownVariants(view)})`,
    created_at: isoSql(P(products.createdAt)),
    updated_at: isoSql(P(products.updatedAt)),
  });
  return object(seen(members, view, stock));
}

/** The minimal answer (Prefer: return=minimal, src/platform/body.ts minimalProduct) of a product. */
const MINIMAL = `json_object('product_id', ${P(products.id)}, 'sku', ${P(products.sku)}, 'updated_at', ${isoSql(P(products.updatedAt))},
  'variants', json_group_array(json_object('variant_id', ${V(variants.id)}, 'sku', ${V(variants.sku)})) FILTER (WHERE ${shownVariants(undefined)}))`;

/** The minimal answer of the products ownJson would answer. */
export function minimalJson(db: DB, where: string, ...params: unknown[]) {
  return stmt(db, joined(carriedSql(MINIMAL), where), ...params);
}

/**
 * A product of a write's answer as SQLite built it: the answer is written around the text
 * (./route.ts) and never parses it. `product_id` identifies it like a presented product;
 * `variants` is their number (a storefront's hidden ones counted), for the request log.
 */
export class ProductText {
  constructor(
    readonly product_id: number,
    readonly text: string,
    readonly variants: number,
  ) {}

  /** The product of a row of ownJson, productRead or minimalJson. */
  static of(row: Record<string, unknown>) {
    return new ProductText(Number(row.id), row.json as string, Number(row.variants));
  }
}
