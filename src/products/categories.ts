import { z } from "zod";
import { productCategories, products } from "../db/schema";
import { sqlNames } from "../platform/columns";
import { checked } from "../platform/fields";
import { text } from "../platform/query";

// Categories and slugs (docs/products.md, "Categories, URLs and images"); the product url, made of
// STORE_URL and the slug, is ./present.ts's.

/** Category paths per product, and levels per path (head category first). */
const MAX_CATEGORY_PATHS = 20;
const MAX_CATEGORY_DEPTH = 5;
const MAX_SLUG = 100;
/** Separates the names of a path in the `category` filter and the index (names cannot contain it). */
const PATH_SEPARATOR = ">";

/** A category name, as a string or as the modelled API's `{"category": name}`; trimmed. */
export const categoryName = z.preprocess(
  (v) => {
    const name = v !== null && typeof v === "object" && !Array.isArray(v) ? (v as { category?: unknown }).category : v;
    return typeof name === "string" ? name.trim() : name;
  },
  checked(z.string({ error: 'must be a category name or {"category": name}' }), 255)
    .refine((s) => s !== "", { error: "must not be empty" })
    .refine((s) => !s.includes(PATH_SEPARATOR), { error: `must not contain "${PATH_SEPARATOR}"` }),
);

// Lengths checked once the value is an array (zod's min/max would also measure a string).
const categoryPath = z
  .array(categoryName, { error: "must be an array of category names, head category first" })
  .transform((names, ctx) => {
    if (names.length === 0) ctx.addIssue({ code: "custom", message: "must name at least one category", input: names });
    if (names.length > MAX_CATEGORY_DEPTH) {
      ctx.addIssue({ code: "custom", message: `must have at most ${MAX_CATEGORY_DEPTH} levels`, input: names });
    }
    return names;
  });

/** Paths of names, duplicates dropped (the first kept). */
export const categoryPaths = z
  .array(categoryPath, { error: "must be an array of category paths (arrays of names)" })
  .max(MAX_CATEGORY_PATHS, { error: `must have at most ${MAX_CATEGORY_PATHS} paths` })
  .transform((paths) => {
    const seen = new Set<string>();
    return paths.filter((p) => {
      const key = p.join(PATH_SEPARATOR);
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  });

export const slug = z
  .string({ error: "must be a string" })
  .trim()
  .max(MAX_SLUG, { error: `must be at most ${MAX_SLUG} characters` })
  .regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, {
    error: 'must be lowercase letters a-z, digits and single dashes between them (like "blue-t-shirt")',
  });

/**
 * The paths a write leaves: `paths` (given, or the stored ones) with `head` as the head category
 * of the first path: the first path starting with it moves to the front, or `[head]` is put there.
 */
export function withHead(paths: string[][], head: string | undefined | null): string[][] {
  if (head === undefined || head === null) return paths;
  const i = paths.findIndex((p) => p[0] === head);
  if (i === 0) return paths;
  const first = i > 0 ? paths[i] : [head];
  return [first, ...paths.filter((_, k) => k !== i)];
}

/** The error of a write whose head category would pass the bound on paths, if it does. */
export const tooManyPaths = (paths: string[][]) =>
  paths.length > MAX_CATEGORY_PATHS
    ? `headcategory_name: the product would be in more than ${MAX_CATEGORY_PATHS} category paths`
    : undefined;

/** The slug a title gives: lowercase ASCII letters and digits, dashes between words. */
function slugBase(title: string): string {
  const s = title
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+/, "")
    .slice(0, MAX_SLUG - 8)
    .replace(/-+$/, "");
  return s || "product";
}

/**
 * What a write stores for a slug the database picks: the triggers of drizzle/0006_categories.sql
 * replace "<base>~<unique>" with <base>, or <base>-2, -3, ... when it is taken.
 */
export const derivedSlug = (title: string, unique: string | number) => `${slugBase(title)}~${unique}`;

// ---------------------------------------------------------------------------------------------
// The modelled reads (docs/modelled-reads.md, "GET /v1/products"): SQL over a product row `p`.

const P = sqlNames(products);
const PC = sqlNames(productCategories);
const CATEGORIES = `p.${P.categories}`;

/** headcategory_name: the head category of the first path; "" without categories. */
export const HEAD_SQL = `coalesce(${CATEGORIES}->>'$[0][0]', '')`;
/** categories as JSON text: each path a list of {"category": name}, head category first. */
export const CATEGORIES_SQL = `(SELECT json_group_array(json((SELECT json_group_array(json_object('category', n.value) ORDER BY n.key)
    FROM json_each(c.value) AS n)) ORDER BY c.key) FROM json_each(${CATEGORIES}) AS c)`;

/** ?category=: a name, or names joined with ">", returned as the list of trimmed names. */
export const categoryQuery = text(1300)
  .transform((s) => s.split(PATH_SEPARATOR).map((n) => n.trim()))
  .refine((names) => names.every((n) => n !== ""), {
    error: `must be a category name or a path of names joined with "${PATH_SEPARATOR}"`,
  });

/**
 * The condition on `p` of ?category=: one name matches at any level of any path; several (a
 * path) match that category and its sub-categories. Both are an index lookup in product_categories.
 */
export function categoryFilter(names: string[], param: (v: string) => string) {
  const col = names.length > 1 ? PC.path : PC.name;
  return `p.${P.id} IN (SELECT ${PC.productId} FROM ${PC.$}
    WHERE ${col} = ${param(names.join(PATH_SEPARATOR))})`;
}
