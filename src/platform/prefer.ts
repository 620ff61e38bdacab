// RFC 7240 `Prefer` request header. A client that sends `Prefer: return=minimal` asks for a short
// answer to a write instead of the full representation (docs/design.md, "The CPU budget and how it is met": the full answer of
// a 2,048-variant product is about 1 MB of JSON, and presenting and serialising it is most of such
// a write's CPU). The route that honours it answers with `Preference-Applied: return=minimal` and
// `Vary: Prefer`, so a cache never hands one form to a client that asked for the other.

/**
 * The preferences of a Prefer header (one or more, comma-separated), names lower-cased, values
 * unquoted. Parameters after `;` are kept out: none of the preferences used here has any. Only the
 * first occurrence of a preference counts (RFC 7240, section 2).
 */
export function preferences(header: string | null | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!header) return out;
  for (const part of splitOutsideQuotes(header, ",")) {
    const [pref] = splitOutsideQuotes(part, ";");
    const eq = pref.indexOf("=");
    const name = (eq < 0 ? pref : pref.slice(0, eq)).trim().toLowerCase();
    if (!name || out.has(name)) continue;
    let value = eq < 0 ? "" : pref.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
      value = value.slice(1, -1).replace(/\\(.)/g, "$1");
    }
    out.set(name, value);
  }
  return out;
}

function splitOutsideQuotes(s: string, sep: string): string[] {
  const parts: string[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (quoted && ch === "\\") i++;
    else if (ch === '"') quoted = !quoted;
    else if (!quoted && ch === sep) {
      parts.push(s.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(s.slice(start));
  return parts;
}

/** Whether the request asks for `return=minimal` (values compare case-insensitively). */
export const prefersMinimal = (header: string | null | undefined) =>
  preferences(header).get("return")?.toLowerCase() === "minimal";

/** Headers of an answer that honoured return=minimal. */
export const MINIMAL_APPLIED = { "Preference-Applied": "return=minimal", Vary: "Prefer" } as const;

type ProductLike = {
  product_id: number;
  sku: string | null;
  updated_at: string;
  variants: { variant_id: number; sku: string | null }[];
};

/**
 * A product in a minimal write answer: what a client needs to address what it wrote next time
 * (the ids, SKUs and the new updated_at), not the whole product, which it can GET.
 */
export function minimalProduct(p: ProductLike) {
  const variants = new Array<{ variant_id: number; sku: string | null }>(p.variants.length);
  for (let i = 0; i < p.variants.length; i++) {
    const v = p.variants[i];
    variants[i] = { variant_id: v.variant_id, sku: v.sku };
  }
  return { product_id: p.product_id, sku: p.sku, updated_at: p.updated_at, variants };
}
