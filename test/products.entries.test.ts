import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { parseItem } from "../src/platform/validate";
import { parseProduct, plainEntries } from "../src/products/entries";
import { productCreate, productUpdate, variantEntry, variantUpdateEntry } from "../src/products/schema";

// Variant lists checked without zod (src/products/entries.ts) must give exactly what zod gives, or
// hand the item to zod: on random entries of every form clients send (text, blank, too long,
// control characters, whole and decimal numbers, numeric strings, -0, flags, null, images, unknown
// fields), and on whole product bodies (data, errors and notices alike).

// Per field: mostly what feeds send, then the edges of each rule.
const mostly = <T>(plain: T[], edges: unknown[]) =>
  fc.oneof({ weight: 20, arbitrary: fc.constantFrom(...plain) }, { weight: 1, arbitrary: fc.constantFrom(...edges) });
const TEXT_EDGES = ["", "   ", "x".repeat(255), "x".repeat(256), "bad\u0001", "tab\tok", "\ud800", null, 5];
const MONEY_EDGES = [0, -0, 19.9, "12", "12.50", "1,5", 1e9, 1e9 + 1, -1, null, "", true];
const FIELDS = {
  sku: mostly(["S-1", " S-2 ", "0012"], [...TEXT_EDGES, ` ${"x".repeat(255)} `, 12, -1]),
  variant_option1_name: mostly(["Size"], TEXT_EDGES),
  variant_option1_value: mostly(["S", "M", "L"], TEXT_EDGES),
  variant_option2_name: mostly(["Colour"], TEXT_EDGES),
  variant_option2_value: mostly(["Red"], TEXT_EDGES),
  price: mostly([0, 10, 4999], MONEY_EDGES),
  before_price: mostly([0, 12], MONEY_EDGES),
  purchase_price: mostly([3], MONEY_EDGES),
  qty: mostly([0, 5, -5, 100], [-0, 1e9, 1e9 + 1, -1e9 - 1, 1.5, "3", null, "", false]),
  qty_location: mostly(["A-1"], TEXT_EDGES),
  gtin: mostly(["7350012345678", "00123"], [...TEXT_EDGES, 7350, -1]),
  supplier_sku: mostly(["SUP"], [...TEXT_EDGES, 42]),
  weight: mostly([0, 2], [-0, 0.5, 1e9, 1e9 + 1, -1, "2", null]),
  visible: mostly([0, 1, true, false], ["1", "0", 2, null, ""]),
  images: mostly([undefined], [[], ["https://img.example/a.png"], null, ""]),
  variant_id: mostly([1, 7, 99], [0, -1, "2", null, "", 1.5]),
  adjust: mostly([undefined, 5, -2], [-0, 1e9, 1e9 + 1, 1.5, "3", null, ""]),
  expected_qty: mostly([undefined, 0, 11], [-0, -1e9 - 1, 2.5, "4", null, ""]),
};
// Now and then a field no entry has (a notice, blank or not); variant_id is known to update entries only.
const unknown = fc.oneof(
  { weight: 10, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.constantFrom("", "   ", "x", null) },
);
const entryOf = (fields: Record<string, fc.Arbitrary<unknown>>) =>
  fc
    .tuple(fc.record(fields, { requiredKeys: [] }), unknown)
    .map(([e, colour]) => (colour === undefined ? e : { ...e, colour }));
// variant_id, adjust and expected_qty are fields of update entries only (docs/stock.md).
const { variant_id, adjust, expected_qty, ...createFields } = FIELDS;
const lists = {
  create: fc.array(entryOf(createFields), { minLength: 1, maxLength: 3 }),
  update: fc.array(entryOf({ ...createFields, variant_id, adjust, expected_qty }), { minLength: 1, maxLength: 3 }),
};
const list = fc.oneof(lists.create, lists.update);
/** -0 as its own value: toEqual takes it for 0, and zod reads -0 as 0. */
const signed = (v: unknown) => JSON.parse(JSON.stringify(v, (_, x) => (Object.is(x, -0) ? "-0" : x)));

describe("variant lists checked without zod", () => {
  it.each([
    ["create", variantEntry],
    ["update", variantUpdateEntry],
  ] as const)("give zod's output or defer to it (%s entries)", (mode, schema) => {
    let plain = 0;
    fc.assert(
      fc.property(lists[mode], (entries) => {
        const mine = plainEntries(structuredClone(entries), mode);
        if (mine === undefined) return;
        plain++;
        const theirs = z.array(schema).safeParse(entries);
        expect(theirs.success).toBe(true);
        expect(signed(mine)).toEqual(signed(theirs.data));
      }),
      { numRuns: 20_000 },
    );
    expect(plain).toBeGreaterThan(1000);
  });

  it.each([
    ["POST", productCreate, "add"],
    ["PUT sync", productUpdate, "sync"],
    ["PUT update", productUpdate, "update"],
  ] as const)("parse whole bodies as zod does (%s)", (_, schema, key) => {
    const body = fc.record(
      {
        title: fc.constantFrom("T", "", 5),
        price: fc.constantFrom(10, "x"),
        product_id: fc.constantFrom(1, "2", 0),
        unknown: fc.constant(1),
        variants: fc.oneof(
          fc.record({ [key]: list }),
          fc.record({ [key]: list, other: fc.constant([]) }),
          fc.constantFrom(null, [], "x"),
        ),
      },
      { requiredKeys: ["variants"] },
    );
    fc.assert(
      fc.property(body, (b) => {
        // parseProduct writes zod's output into the body's own entries: each reads a copy.
        expect(parseProduct(schema, structuredClone(b), "[0]")).toEqual(parseItem(schema, structuredClone(b), "[0]"));
      }),
      { numRuns: 1500 },
    );
  });
});
