import { type orders, type products, variants } from "../db/schema";
import { optionColumn, sqlNames } from "../platform/columns";
import { productUrl } from "./categories";
import {
  type Field,
  OPTION_KEYS,
  OWN_PRODUCT,
  OWN_VARIANT,
  type PRODUCT_FIELDS,
  productField,
  type VARIANT_FIELDS,
  type VariantColumn,
  variantField,
} from "./fields";
import { parseList } from "./kinds";

export type ProductRow = typeof products.$inferSelect;
export type VariantRow = typeof variants.$inferSelect;
export type OrderRow = typeof orders.$inferSelect;

/** Minor units to the JSON number clients expect (19950 -> 199.5). */
export const toMoney = (cents: number) => cents / 100;
const iso = (ms: number) => new Date(ms).toISOString();

export const optionNames = (p: Pick<ProductRow, "optionNames">): string[] => JSON.parse(p.optionNames);
export const variantValues = (v: Pick<VariantRow, `option${1 | 2 | 3 | 4 | 5}`>): string[] => [
  v.option1,
  v.option2,
  v.option3,
  v.option4,
  v.option5,
];

export { parseList };

/** The variant columns an answer shows, as productReads selects them (snake_case, raw D1 rows). */
export type VariantOutRow = Record<string, unknown> & { id: number; product_id: number };

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
const V = sqlNames(variants);
const OPTION_COLUMNS = [1, 2, 3, 4, 5].map((n) => optionColumn(V, n));
const GETS: Get[] = [];
const PARTS: string[] = [];
for (const k of OWN_VARIANT) {
  const f = variantField(k);
  if (f) {
    const column = V[f.column as VariantColumn];
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
 * Presents a product's variants straight from D1's rows: no mapped row object in between, and
 * the option names resolved once per product rather than per variant. This runs for every variant
 * of a presented product, up to 2,048 of them: one object literal with every key in its final
 * order costs 0.3 ms for 2,048 variants in workerd where setting the keys one by one costs 3 to 4
 * (docs/design.md, "Fields, described once"), so the literal is made once from the description,
 * while this module is evaluated (startup, the only time Workers allow it, as for the validators:
 * src/platform/validate.ts).
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

/** The five option names of a product, null where there is none. */
function optionNamesOf(p: ProductRow) {
  const names = optionNames(p);
  return [0, 1, 2, 3, 4].map((i) => names[i] ?? null);
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
    variants: presentVariants(vs, optionNamesOf(p), GETS),
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
