import { STOCK } from "../entries";
import type { VariantUpdateEntry } from "../schema";

// An update list naming one variant more than once, merged in the Worker before it travels to the
// SQL plan (./variants-route.ts): the plan matches one row per variant.

/** merged's answer for entries refused as given. */
export const REFUSED = "refused";

/**
 * An update list naming one variant more than once, as one entry per variant, the entries applied
 * in order (./states.ts, applyEntry): a later field wins; a `qty` sets the count
 * and an `adjust` after it moves that count (a count again); the amounts of `adjust`s without a
 * count add up; the first `expected_qty` holds. REFUSED when an entry gives `qty` and `adjust`, or a
 * count set by an entry passes the largest on the way (both refused whatever
 * is stored). `ranges` takes the counts to check before the list (below).
 */
export function merged(list: VariantUpdateEntry[], ranges: [number, number][]): VariantUpdateEntry[] | typeof REFUSED {
  const at = new Map<number, number>();
  let out: VariantUpdateEntry[] | undefined;
  for (let i = 0; i < list.length; i++) {
    const e = list[i];
    const first = at.get(e.variant_id);
    if (first === undefined) {
      at.set(e.variant_id, out ? out.length : i);
      out?.push(e);
      continue;
    }
    out ??= list.slice(0, i);
    const m = { ...out[first] } as Record<string, unknown>;
    if (m.qty !== undefined && m.adjust !== undefined) return REFUSED;
    if (e.qty !== undefined && e.adjust !== undefined) return REFUSED;
    // Every count an adjust reaches is checked against the largest: the plan checks
    // the last, which bounds those before it while the amounts go one way. Where a count replaces
    // the amounts or one goes back, the count reached so far (the stored one moved by the amounts,
    // as the lists before leave it) is checked by a guard before the list. Amounts past the largest
    // are checked likewise: the stored count moved by them may still be within it.
    const relative = m.qty === undefined ? (m.adjust as number | undefined) : undefined;
    if (relative !== undefined && (e.qty !== undefined || Math.sign(e.adjust ?? relative) !== Math.sign(relative))) {
      ranges.push([e.variant_id, relative]);
    }
    for (const [k, v] of Object.entries(e)) {
      if (v === undefined || k === "adjust" || k === "expected_qty") continue;
      m[k] = v;
    }
    if (e.qty !== undefined) m.adjust = undefined;
    if (e.adjust !== undefined) {
      if (m.qty !== undefined) m.qty = (m.qty as number) + e.adjust;
      else m.adjust = ((m.adjust as number | undefined) ?? 0) + e.adjust;
      if (m.qty !== undefined && Math.abs(m.qty as number) > STOCK) return REFUSED;
    }
    if (m.expected_qty === undefined && e.expected_qty !== undefined) m.expected_qty = e.expected_qty;
    out[first] = m as VariantUpdateEntry;
  }
  return out ?? list;
}
