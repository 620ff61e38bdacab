import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { orderCreate } from "../src/orders/schema";
import { isCompiled, parseItem, safeParse } from "../src/platform/fields";
import { MAX_VARIANTS, productCreate, productUpdate } from "../src/products/schema";

// The request schemas run on zod's compiled parsers (src/platform/fields.ts, precompile): code
// zod generates from the schema, not the schema itself. These tests are the differential proof
// that the compiled parser and zod's runtime parser agree on every input: the same verdict, and
// on success the same value (keys, order, types). Failures are answered by the runtime parser
// itself, so their messages cannot differ; the test checks that too.

// Values a real client sends for scalar fields, the lenient forms of docs/api.md, "Conventions", and
// the wrong ones next to them.
const scalar = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.boolean(),
  fc.integer({ min: -5, max: 2_000_000_000 }),
  fc.double({ noNaN: false }),
  fc.constantFrom(0, 1, 100, 199.5, 0.1, 1.005, -0.001, 1e21, 2 ** 53 + 1, Number.MAX_SAFE_INTEGER),
  fc.constantFrom("", " ", "0", "1", "12", "12.5", "12.555", " 7 ", "-3", "1e3", "+5", "0x10", "NaN", "abc"),
  fc.constantFrom("true", "false", "S", "M", "Size", "a\u0007b", "tab\there", "x\ud800", "\u0085"),
  fc.string({ maxLength: 12 }),
  fc.string({ minLength: 250, maxLength: 260 }),
);
/** Mostly a valid value of the field, sometimes absent, now and then anything at all. */
const f = <T>(valid: fc.Arbitrary<T>) =>
  fc.oneof(
    { arbitrary: valid, weight: 60 },
    { arbitrary: fc.constant(undefined), weight: 10 },
    { arbitrary: scalar, weight: 1 },
  );
const text = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom("", " ", "Size", "é ü", "tab\there"));
const money = fc.oneof(
  fc.integer({ min: 0, max: 10_000_000 }).map((c) => c / 100),
  fc.constantFrom("12.50", " 7 ", "0", "199.5"),
);
const whole = fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.constantFrom("5", " 3 ", "-2", ""));
const positive = fc.oneof(fc.integer({ min: 1, max: 10_000 }), fc.constantFrom("7", " 12 "));
const flag = fc.constantFrom(0, 1, "1", "0", " 1 ", true, false, "");
const images = fc.oneof(
  { arbitrary: fc.constant([]), weight: 3 },
  {
    arbitrary: fc.array(fc.record({ url: fc.constant("https://example.com/a.jpg"), alttext: f(text) }), {
      maxLength: 2,
    }),
    weight: 3,
  },
  {
    arbitrary: fc.dictionary(
      fc.constantFrom("1", "2", "10"),
      fc.record({ url: fc.constant("https://example.com/b.jpg") }),
      {
        maxKeys: 2,
      },
    ),
    weight: 3,
  },
  { arbitrary: scalar, weight: 1 },
);
const weight = fc.oneof(
  fc.integer({ min: 0, max: 100_000 }).map((g) => g / 100),
  fc.constantFrom("1.5", "0"),
);

const variant = fc.oneof(
  {
    arbitrary: fc.record(
      {
        sku: f(text),
        price: f(money),
        purchase_price: f(money),
        before_price: f(money),
        qty: f(whole),
        qty_location: f(text),
        gtin: f(text),
        weight: f(weight),
        visible: f(flag),
        variant_id: f(positive),
        variant_option1_name: f(fc.constantFrom("Size", "Colour")),
        variant_option1_value: f(text),
        variant_option2_name: f(text),
        variant_option2_value: f(text),
        images: f(images),
        unknown_field: f(scalar),
      },
      { requiredKeys: [] },
    ),
    weight: 10,
  },
  { arbitrary: scalar, weight: 1 },
);
const variantList = f(fc.array(variant, { maxLength: 4 }));

const product = fc.record(
  {
    sku: f(text),
    // Required by POST: present but for the odd scalar.
    title: fc.oneof(
      { arbitrary: fc.constantFrom("Shirt", "Mug", " Cap "), weight: 30 },
      { arbitrary: scalar, weight: 1 },
    ),
    price: fc.oneof({ arbitrary: money, weight: 30 }, { arbitrary: scalar, weight: 1 }),
    before_price: f(money),
    tax_rate: f(fc.oneof(fc.integer({ min: 0, max: 100 }), fc.constantFrom("25", "6"))),
    stock: f(whole),
    disable_minusqty: f(flag),
    visible: f(flag),
    description: f(text),
    weight: f(weight),
    product_id: f(positive),
    variant_id: f(positive),
    seo_title: f(text),
    images: f(images),
    metadata: f(fc.dictionary(fc.string({ maxLength: 4 }), fc.integer(), { maxKeys: 3 })),
    variants: f(fc.record({ sync: variantList, add: variantList, update: variantList }, { requiredKeys: [] })),
  },
  { requiredKeys: [] },
);

const line = fc.record(
  {
    sku: f(fc.string({ minLength: 1, maxLength: 8 })),
    qty: fc.oneof({ arbitrary: fc.integer({ min: 1, max: 100 }), weight: 30 }, { arbitrary: scalar, weight: 1 }),
    product_id: f(positive),
    variant_id: f(fc.oneof(positive, fc.constantFrom(null, "NULL (no variant)"))),
    price: f(money),
  },
  { requiredKeys: [] },
);
const address = fc.record(
  { firstname: f(text), city: f(text), country: f(fc.constantFrom("se", "SE", " no ")) },
  { requiredKeys: [] },
);
const order = fc.record(
  {
    order_id: fc.oneof({ arbitrary: fc.constant("create"), weight: 20 }, { arbitrary: scalar, weight: 1 }),
    products: fc.oneof(
      { arbitrary: fc.array(line, { minLength: 1, maxLength: 3 }), weight: 12 },
      { arbitrary: scalar, weight: 1 },
    ),
    customer: f(
      fc.record(
        {
          email: f(fc.constantFrom("a@example.com", " B@Example.se ")),
          phone: f(fc.constantFrom("+46 70 123 45 67", "+4670-1234567")),
          type: f(fc.constantFrom("consumer", "company")),
          billing_details: f(address),
          newsletter_subscribe: f(flag),
        },
        { requiredKeys: [] },
      ),
    ),
    payment: f(
      fc.record({ method: f(text), currency: f(fc.constantFrom("sek", "EUR", " nok ")) }, { requiredKeys: [] }),
    ),
    shipping: f(fc.record({ id: f(positive), name: f(text), price: f(money) }, { requiredKeys: [] })),
    discount_add: f(fc.record({ amount: money })),
    metadata: f(fc.dictionary(fc.string({ maxLength: 4 }), fc.string({ maxLength: 4 }), { maxKeys: 2 })),
  },
  { requiredKeys: [] },
);

/** The value as JSON would carry it, with undefined kept visible and key order significant. */
const shape = (v: unknown) => JSON.stringify(v, (_k, x) => (x === undefined ? "<undefined>" : x));

function agree(schema: Parameters<typeof safeParse>[0], value: unknown) {
  const runtime = schema.safeParse(value);
  const compiled = safeParse(schema, value);
  expect(compiled.success).toBe(runtime.success);
  if (runtime.success && compiled.success) expect(shape(compiled.data)).toBe(shape(runtime.data));
  if (!runtime.success && !compiled.success) expect(compiled.error.issues).toEqual(runtime.error.issues);
  return runtime.success;
}

/** Runs the property and checks it saw both verdicts often enough to mean something. */
function differential<T>(arb: fc.Arbitrary<T>, schema: Parameters<typeof safeParse>[0]) {
  let accepted = 0;
  let refused = 0;
  fc.assert(
    fc.property(arb, (v) => {
      if (agree(schema, v)) accepted++;
      else refused++;
    }),
    { numRuns: 500 },
  );
  expect(accepted).toBeGreaterThan(80);
  expect(refused).toBeGreaterThan(80);
}

describe("compiled validators", () => {
  it("the request schemas are compiled while their modules load, inside workerd", () => {
    expect({
      productCreate: isCompiled(productCreate),
      productUpdate: isCompiled(productUpdate),
      orderCreate: isCompiled(orderCreate),
    }).toEqual({ productCreate: true, productUpdate: true, orderCreate: true });
  });

  it("PUT products: compiled and runtime parsers agree", () => differential(product, productUpdate));

  it("POST products: compiled and runtime parsers agree", () => differential(product, productCreate));

  it("POST orders: compiled and runtime parsers agree", () => differential(order, orderCreate));

  it("a valid sync of many variants is accepted by the compiled parser with the runtime's value", () => {
    const sync = Array.from({ length: MAX_VARIANTS }, (_, i) => ({
      sku: `S-${i}`,
      variant_option1_name: "Size",
      variant_option1_value: `v${i}`,
      price: i % 2 ? "12.50" : 12.5,
      qty: i % 3 ? String(i) : i,
      visible: i % 2 ? "1" : true,
    }));
    const body = { product_id: "12", variants: { sync } };
    agree(productUpdate, body);
    const parsed = parseItem(productUpdate, body);
    expect(parsed.ok && parsed.data.variants?.sync?.[1]).toEqual({
      sku: "S-1",
      variant_option1_name: "Size",
      variant_option1_value: "v1",
      price: 1250,
      qty: 1,
      visible: 1,
    });
  });

  it.each([
    [{ product_id: "x" }, "product_id: must be a positive whole number (an id)"],
    [
      { variants: { sync: [{ qty: "1.5" }] } },
      "variants.sync[0].qty: must be a whole number from -1000000000 to 1000000000",
    ],
    [{ price: "12.555" }, "price: must have at most 2 decimals"],
  ])("an invalid body gets the runtime's errors: %j", (body, error) => {
    const parsed = parseItem(productUpdate, body);
    expect(parsed.ok ? [] : parsed.errors).toContain(error);
  });
});
