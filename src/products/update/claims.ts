import type { Located } from "../variants";
import type { Failed } from "./select";

// Items of one round are planned against the catalog as read, so two may each take a SKU or slug
// no product has yet: the later one (in the body's order) is refused, as the write would fail on
// the registry or the unique index. The rounds of ./index.ts ask here.

/** The SKUs and slugs the items of a round accepted so far claim. */
export class RoundClaims {
  private readonly skus = new Map<string, string>();
  private readonly slugs = new Map<string, string>();

  /** The 409 of item `index` when an earlier item claims one of its SKUs or its slug; else takes them. */
  take(index: number, skus: Located<string>[], slug: string | undefined): Failed | undefined {
    const clash = skus.filter((c) => this.skus.has(c.entry));
    const slugClash = slug !== undefined && this.slugs.get(slug);
    if (clash.length || slugClash) {
      const errors = clash.map(
        (c) => `${c.path}: SKU ${c.entry} is also claimed by item ${this.skus.get(c.entry)} of this request`,
      );
      if (slugClash) errors.push(`slug: ${slug} is also claimed by item ${slugClash} of this request`);
      return { ok: false, status: 409, errors };
    }
    for (const c of skus) this.skus.set(c.entry, `[${index}]`);
    if (slug !== undefined) this.slugs.set(slug, `[${index}]`);
    return undefined;
  }
}
