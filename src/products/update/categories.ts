import { derivedSlug, tooManyPaths, withHead } from "../categories";
import { slugTaken } from "../create";
import { parseList } from "../present";
import type { Plan } from "./plan";
import type { Failures, Snapshot, Target } from "./select";

// A PUT item's categories and slug (docs/products.md, "Categories, URLs and images"), part of
// its plan (./plan.ts).

/**
 * Categories and slug (docs/products.md, "Categories, URLs and images"): sets them on the plan's
 * product row when they change; answers the slug the client gave, if the product takes it.
 */
export function categoriesAndSlug(
  t: Target,
  snap: Snapshot,
  product: Record<string, unknown>,
  f: Failures,
  depends: Pick<Plan["guard"], "categories" | "slug">,
) {
  const d = t.item.data;
  const p = t.product;
  const head = d.headcategory_name ?? undefined;
  if (d.categories !== undefined || head !== undefined) {
    const stored = d.categories === undefined;
    // An earlier item of the round may have set them: a head category joins what it left.
    const earlier = product.categories as string[][] | undefined;
    const given = stored ? (earlier ?? (parseList(p.categories) as string[][])) : (d.categories ?? []);
    if (stored && earlier === undefined) depends.categories = p.categories;
    const next = withHead(given, head);
    const tooMany = tooManyPaths(next);
    if (tooMany) f.add(400, tooMany);
    else if (JSON.stringify(next) !== p.categories) product.categories = next;
    else delete product.categories;
  }
  if (typeof d.slug === "string") {
    if (d.slug === p.slug) return undefined;
    const owner = snap.slugs.get(d.slug);
    if (owner !== undefined && owner !== p.id) f.add(409, slugTaken(d.slug, owner));
    product.slug = d.slug;
    return d.slug;
  }
  // null derives it again; a product from before slugs existed gets one on its first change.
  if (d.slug === null || p.slug === null) {
    product.slug = derivedSlug((product.title as string | undefined) ?? p.title, p.id);
    if (d.slug === undefined) depends.slug = null;
  }
  return undefined;
}
