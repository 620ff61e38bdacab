import { type PublicView, shownTo } from "../keys/public";
import { type Keyed, keyedGrowth, MARK } from "../platform/quotes";

// What the two builders of product JSON in SQL (./own-json.ts, ./modelled-json.ts) share: an
// object as a list of [key, SQL] fields, and what a publishable key sees of it
// (src/keys/public.ts, the presenter's filter they are held to).

/** A key and the SQL of its value; `keyed`, the SQL gives keyed text of its own (not a JSON value). */
export type Field = [key: string, sql: string, keyed?: "keyed"];

export const object = (fields: Field[]) => `json_object(${fields.map(([k, v]) => `'${k}', ${v}`).join(", ")})`;

// The same objects as their values only, for an answer whose keys the Worker writes
// (src/platform/quotes.ts, "Keys written by the Worker"): `~A` value `~,` value ... `~}`.

const value = ([, v, keyed]: Field) => (keyed ? `(${v})` : `json_quote(${v})`);
// One concat_ws, not a chain of ||: D1 refuses an expression tree deeper than 100, which a product's
// 30 fields joined pairwise pass.
const joined = (fields: Field[]) => `concat_ws(${MARK} || ',', ${fields.map(value).join(", ")})`;

/** SQL: template `letter`'s object of `fields`, left open for keyedRest to go on. */
export const keyedOpen = (letter: string, fields: Field[]) => `${MARK} || '${letter}' || ${joined(fields)}`;

/** SQL: the further `fields` of an object keyedOpen began, and its close. */
export const keyedRest = (fields: Field[]) =>
  fields.length ? `${MARK} || ',' || ${joined(fields)} || ${MARK} || '}'` : `${MARK} || '}'`;

/** SQL: template `letter`'s object of `fields`, whole. */
export const keyedObject = (letter: string, fields: Field[]) => `${keyedOpen(letter, fields)} || ${keyedRest([])}`;

/** The fields a publishable key with `view` sees; all of them for a secret key (no view). */
export const kept = (fields: Field[], view: PublicView | undefined): Field[] =>
  view ? fields.filter(([k]) => shownTo(view, k)) : fields;

/** A storefront without the stock scope sees availability instead of a count. */
export const availability = (view: PublicView | undefined, stock: string): Field[] =>
  view && !view.stock ? [["availability", `iif(${stock} > 0, 'in_stock', 'out_of_stock')`]] : [];

/** A product's or variant's fields as `view` sees them, the availability of `stock` last. */
export const seen = (fields: Field[], view: PublicView | undefined, stock: string): Field[] => [
  ...kept(fields, view),
  ...availability(view, stock),
];

/** A keyed answer's templates (product A, variant B) and the bytes each object adds once written. */
export type KeyedShape = { templates: string[][]; product: number; variant: number };

/** The shape of products of `product`'s keys with variants of `variant`'s (none: no variants). */
export function keyedShapeOf(product: string[], variant?: string[]): KeyedShape {
  return {
    templates: variant ? [product, variant] : [product],
    product: keyedGrowth(product),
    variant: variant ? keyedGrowth(variant) : 0,
  };
}

// Shapes by what they are for and what the caller may see (four storefront views and the secret
// key's): built once an isolate, their growth measured once.
const shapes = new Map<string, KeyedShape>();

/** The shape `id` names, built by `build` the first time. */
export function shapeOnce(id: string, build: () => KeyedShape): KeyedShape {
  let shape = shapes.get(id);
  if (!shape) {
    shape = build();
    shapes.set(id, shape);
  }
  return shape;
}

/** The id part of what `view` sees, for shapeOnce. */
export const viewId = (view: PublicView | undefined) => (view ? `${view.stock}${view.datafields}` : "all");

/** What one product of `shape` with `variants` variants leaves out (more if some are not shown). */
export const keyedOf = (shape: KeyedShape, variants: number): Keyed => ({
  templates: shape.templates,
  growth: shape.product + variants * shape.variant,
});

/** The keys of `fields`, in order. */
export const keysOf = (fields: Field[]) => fields.map(([k]) => k);
