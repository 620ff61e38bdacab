// Money arithmetic of an order (docs/orders.md, "Orders"): totals, the discount spread over lines, and the
// tax included in prices per rate. Shared by create and update, which must agree to the unit.

export type Money = number; // minor units
export type TaxLine = { rate: number; amount: Money };

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
  // Over the lines, not over the rates (docs/orders.md, "Orders"): each line's share is whole minor units.
  const amounts = lines.map((l) => l.amount);
  const shares = spread(Math.min(discount, subtotal), amounts);
  const byRate = new Map<number, Money>();
  for (const [i, l] of lines.entries()) byRate.set(l.taxRate, (byRate.get(l.taxRate) ?? 0) + l.amount - shares[i]);
  return [...byRate.keys()]
    .sort((a, b) => b - a)
    .map((rate) => {
      const net = BigInt(byRate.get(rate) as Money);
      const div = BigInt(100 + rate);
      return { rate, amount: Number((net * BigInt(rate) * 2n + div) / (2n * div)) };
    });
}
