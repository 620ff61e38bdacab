import { describe, expect, it } from "vitest";
import { MINIMAL_APPLIED, minimalProduct, preferences, prefersMinimal } from "../src/platform/body";

// RFC 7240 Prefer parsing for `return=minimal` on writes (src/platform/body.ts).
describe("Prefer header", () => {
  it.each([
    ["return=minimal", true],
    ["Return=Minimal", true],
    ['return="minimal"', true],
    ["respond-async, return=minimal", true],
    ["return=minimal; foo=bar", true],
    ["  return = minimal  ", true],
    ["return=representation", false],
    ["return=representation, return=minimal", false], // only the first occurrence counts
    ["return", false],
    ["", false],
    [undefined, false],
    [null, false],
    ['wait=10, x="a,return=minimal"', false], // a comma inside quotes does not split
  ])("%j -> minimal %s", (header, minimal) => {
    expect(prefersMinimal(header)).toBe(minimal);
  });

  it("reads every preference, names lower-cased, quoted values unquoted", () => {
    expect([...preferences('Wait=10, handling=lenient; x=1, note="a \\"b\\", c"')]).toEqual([
      ["wait", "10"],
      ["handling", "lenient"],
      ["note", 'a "b", c'],
    ]);
  });

  it("the applied preference is announced and the answer varies on it", () => {
    expect(MINIMAL_APPLIED).toEqual({ "Preference-Applied": "return=minimal", Vary: "Prefer" });
  });

  it("a minimal product keeps the ids, SKUs and updated_at only", () => {
    const full = {
      product_id: 7,
      sku: "P",
      title: "Shirt",
      updated_at: "2026-01-01T00:00:00.000Z",
      variants: [
        { variant_id: 1, sku: "P-S", qty: 3, price: 10 },
        { variant_id: 2, sku: null, qty: 1, price: 10 },
      ],
    };
    expect(minimalProduct(full)).toEqual({
      product_id: 7,
      sku: "P",
      updated_at: "2026-01-01T00:00:00.000Z",
      variants: [
        { variant_id: 1, sku: "P-S" },
        { variant_id: 2, sku: null },
      ],
    });
  });
});
