import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { variantEntry, variantUpdateEntry } from "../src/products/schema";
import { wrapD1 } from "./d1-wrap";
import { call, get, post, put, uid } from "./helpers";

// Long variant lists as clients write them. Every list is parsed in the Worker and checked by zod
// (src/products/schema.ts), the one validator of an entry. The lists are written as text, so forms
// JSON.parse hides are in them too: escapes, 1.0 and 1e2, -0, repeated keys, surrogates, Unicode
// spaces.

// JSON texts of values, per field: mostly what feeds send, then the edges of each rule.
const mostly = (plain: string[], edges: string[]) =>
  fc.oneof({ weight: 40, arbitrary: fc.constantFrom(...plain) }, { weight: 1, arbitrary: fc.constantFrom(...edges) });
const TEXT_EDGES = [
  '""',
  '"   "',
  '"\\u3000"',
  '"\\u00a0x\\u00a0"',
  `"${"x".repeat(255)}"`,
  `"${"é".repeat(255)}"`,
  `"${"x".repeat(256)}"`,
  '"bad\\u0001"',
  '"nul\\u0000x"',
  '"del\\u007f"',
  '"c1\\u0085"',
  '"tab\\tok"',
  '"nl\\nok"',
  '"cr\\rno"',
  '"\\ud800"',
  '"\\ud83d\\ude00"',
  '"😀"',
  '"R\\u00f6d"',
  '"Röd"',
  '"a\\/b"',
  '"q\\"q"',
  '"\\ufeff"',
  '"x\\u2028"',
  '"\\uffff"',
  "null",
  "5",
  "true",
  "[]",
  "{}",
];
const MONEY_EDGES = [
  "0",
  "-0",
  "19.9",
  "1.0",
  "1e2",
  '"12"',
  "1000000000",
  "1000000001",
  "-1",
  "null",
  '""',
  "true",
  "99999999999999999999",
];
const FIELDS: Record<string, fc.Arbitrary<string>> = {
  sku: mostly(['"S-1"', '" S-2 "', '"0012"', '"\\u00a0S-3"'], [...TEXT_EDGES, `" ${"x".repeat(255)} "`, "12", "-1"]),
  variant_option1_value: mostly(['"S"', '"M"', '"L"'], TEXT_EDGES),
  variant_option2_value: mostly(['"Red"', '"Blå"'], TEXT_EDGES),
  variant_option5_value: mostly(['"x"'], TEXT_EDGES),
  price: mostly(["0", "10", "4999"], MONEY_EDGES),
  before_price: mostly(["0", "12"], MONEY_EDGES),
  purchase_price: mostly(["3"], MONEY_EDGES),
  qty: mostly(
    ["0", "5", "-5", "100"],
    ["-0", "1000000000", "1000000001", "-1000000001", "1.5", '"3"', "null", '""', "false"],
  ),
  qty_location: mostly(['"A-1"'], TEXT_EDGES),
  gtin: mostly(['"7350012345678"', '"00123"'], [...TEXT_EDGES, "7350", "-1"]),
  supplier_sku: mostly(['"SUP"'], [...TEXT_EDGES, "42"]),
  weight: mostly(["0", "2"], ["-0", "0.5", "1000000000", "1000000001", "-1", '"2"', "null"]),
  visible: mostly(["0", "1", "true", "false"], ['"1"', '"0"', "2", "null", '""', "1.0"]),
  variant_id: mostly(["1", "7", "99"], ["0", "-1", '"2"', "null", '""', "1.5", "9007199254740992", "1e1"]),
};
const { variant_id, ...createFields } = FIELDS;
/** Rare fields: images (zod's), one no entry has, a key given twice. */
const RARE = fc.oneof(
  { weight: 30, arbitrary: fc.constant([] as [string, string][]) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('["https://img.example/a.png"]', "[]", "null", '""')
      .map((v) => [["images", v]] as [string, string][]),
  },
  { weight: 1, arbitrary: fc.constantFrom('"x"', '""', "null").map((v) => [["colour", v]] as [string, string][]) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom("sku", "qty", "variant_option1_value"), fc.constantFrom(...TEXT_EDGES, "1"))
      .map(([k, v]) => [[k, v]] as [string, string][]),
  },
);
/** The list's option names as JSON text, or null: the ones its entries name, when they name any. */
const NAMES = [null, '["Size"]', '["Size","Colour"]', '["Storlek","Färg","Passform"]'];
/** How an entry names options: not at all, the list's names, or another way (out of order, blank, other names). */
const NAMING = fc.oneof(
  { weight: 10, arbitrary: fc.constant("none") },
  { weight: 10, arbitrary: fc.constant("list") },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '{"variant_option2_name":"Colour"}',
      '{"variant_option1_name":"Other"}',
      '{"variant_option1_name":"  "}',
      '{"variant_option1_name":"Size","variant_option2_name":"Size"}',
    ),
  },
);

/** An entry's text: some of the fields and its naming, now and then something rare, or not an object. */
const entryText = (fields: Record<string, fc.Arbitrary<string>>, names: string | null) =>
  fc.oneof(
    {
      weight: 40,
      arbitrary: fc
        .tuple(fc.record(fields, { requiredKeys: [] }), RARE, NAMING, fc.constantFrom(":", " : ", ": "))
        .map(([e, rare, naming, colon]) => {
          const named =
            naming === "none"
              ? []
              : naming === "list"
                ? (names ? (JSON.parse(names) as string[]) : []).map((n, i) => [
                    `variant_option${i + 1}_name`,
                    JSON.stringify(n),
                  ])
                : Object.entries(JSON.parse(naming)).map(([k, v]) => [k, JSON.stringify(v)]);
          const pairs = [...named, ...Object.entries(e), ...rare];
          return `{${pairs.map(([k, v]) => `"${k}"${colon}${v}`).join(", ")}}`;
        }),
    },
    { weight: 1, arbitrary: fc.constantFrom("1", '"x"', "[]", "null", "{}") },
  );

const listOf = (fields: Record<string, fc.Arbitrary<string>>) =>
  fc
    .constantFrom(...NAMES)
    .chain((names) => fc.tuple(fc.constant(names), fc.array(entryText(fields, names), { minLength: 1, maxLength: 4 })));
const lists = { create: listOf(createFields), update: listOf({ ...createFields, variant_id }) };

describe("variant lists written as text", () => {
  it.each([
    ["sync", "create", variantEntry],
    ["update", "update", variantUpdateEntry],
  ] as const)(
    "a %s list is refused with 400 exactly where zod refuses an entry, never a 5xx",
    async (list, mode, schema) => {
      const made = await post("/v1/products", { title: "As text", price: 100 });
      const id = made.json.products[0].product_id;
      await fc.assert(
        fc.asyncProperty(lists[mode], async ([, entries]) => {
          const text = `{"product_id": ${id}, "variants": {"${list}": [${entries.join(",")}]}}`;
          const valid = z.array(schema).safeParse(JSON.parse(text).variants[list]).success;
          const r = await call("PUT", "/v1/products", { raw: text });
          expect(r.status, `${text}\n${r.text}`).toBeLessThan(500);
          // What zod refuses is a 400 naming the entry; what it takes, the plan answers (404 for an
          // unknown variant id, 400 for missing option values, ...), never as a malformed entry.
          if (!valid) expect([r.status, r.json.errors[0]], text).toEqual([400, expect.stringMatching(/^variants\./)]);
        }),
        { numRuns: 40 },
      );
    },
  );
});

describe("long variant lists through the API", () => {
  /** A sync of the product: the answer, and D1's counts. */
  async function sync(productId: number, list: unknown[]) {
    const w = wrapD1();
    const r = await put("/v1/products", { product_id: productId, variants: { sync: list } }, { env: { DB: w.db } });
    return { r, counts: w.counts };
  }

  /** A product of `n` variants over one option, with SKUs under `prefix`. */
  async function seeded(prefix: string, n: number) {
    const add = Array.from({ length: n }, (_, i) => ({
      sku: `${prefix}${i}`,
      variant_option1_name: "Size",
      variant_option1_value: `v${i}`,
      qty: i,
    }));
    const r = await post("/v1/products", { title: "As text", price: 100, variants: { add } });
    expect(r.status, r.text).toBe(200);
    return r.json.products[0] as { product_id: number; variants: { variant_id: number; qty: number }[] };
  }

  it("takes a list in a read and a write, and answers as with an Idempotency-Key", async () => {
    const [a, b] = [`${uid("TA")}-`, `${uid("TB")}-`];
    const [pa, pb] = [await seeded(a, 3), await seeded(b, 3)];
    const sync = (prefix: string) => [
      { sku: `${prefix}0`, variant_option1_name: "Size", variant_option1_value: "v0", qty: 9, price: 120 },
      { sku: ` ${prefix}new `, variant_option1_name: "Size", variant_option1_value: "Blå", visible: false },
      { variant_option1_value: "v2", qty: -0, gtin: "007350", qty_location: "" },
    ];
    const w = wrapD1();
    const ra = await put(
      "/v1/products",
      { product_id: pa.product_id, variants: { sync: sync(a) } },
      { env: { DB: w.db } },
    );
    const rb = await call("PUT", "/v1/products", {
      body: { product_id: pb.product_id, variants: { sync: sync(b) } },
      headers: { "idempotency-key": uid("k") },
    });
    expect(ra.status, ra.text).toBe(200);
    expect(w.counts.calls).toBe(2);
    const same = (t: string, prefix: string) =>
      JSON.parse(
        t
          .replaceAll(prefix, "<p>")
          .replace(/"(product_id|variant_id)":\d+/g, '"$1":0')
          .replace(/"(created_at|updated_at|slug|url)":("[^"]*"|null)/g, '"$1":""'),
      );
    expect(same(ra.text, a)).toEqual(same(rb.text, b));
    const [ga, gb] = [await get(`/v1/products/${pa.product_id}`), await get(`/v1/products/${pb.product_id}`)];
    expect(same(ga.text, a)).toEqual(same(gb.text, b));
  });

  // Round trips: the read and the write; for the repeated combination, the read alone, which words
  // it; none for a 400, refused in the Worker before any.
  it.each([
    ["a decimal price in a later entry", { price: 19.5 }, 200, 2],
    ["an unknown field in a later entry", { colour: "red" }, 200, 2],
    ["a repeated combination", { variant_option1_value: "v0" }, 409, 1],
    ["a negative price", { price: -1 }, 400, 0],
  ])("answers a list with %s", async (_, change, status, calls) => {
    const a = `${uid("TF")}-`;
    const p = await seeded(a, 2);
    const list = [
      { sku: `${a}0`, variant_option1_value: "v0", qty: 1 },
      { sku: `${a}1`, variant_option1_value: "v1", qty: 2, ...change },
    ];
    const { r, counts } = await sync(p.product_id, list);
    expect(r.status, r.text).toBe(status);
    expect(counts.calls).toBe(calls);
    if (status === 200) expect(r.json.products[0].variants.map((v: { qty: number }) => v.qty)).toEqual([1, 2]);
  });

  it("creates a product from a long list in one round trip", async () => {
    const a = `${uid("TC")}-`;
    const add = Array.from({ length: 4 }, (_, i) => ({
      sku: `${a}${i}`,
      variant_option1_name: "Size",
      variant_option1_value: `s${i}`,
      variant_option2_name: "Colour",
      variant_option2_value: i % 2 ? "Röd" : "Blå",
      qty: i,
      price: 100 + i,
    }));
    const w = wrapD1();
    const r = await post("/v1/products", { title: "Text", price: 5, variants: { add } }, { env: { DB: w.db } });
    expect(r.status, r.text).toBe(200);
    expect(w.counts.calls).toBe(1);
    const got = (await get(`/v1/products/${r.json.products[0].product_id}`)).json;
    expect(got.variants.map((v: Record<string, unknown>) => [v.sku, v.variant_option2_value, v.qty, v.price])).toEqual(
      add.map((e) => [e.sku, e.variant_option2_value, e.qty, e.price]),
    );
  });

  // A stock tool's update of every variant by id: about 60 KB for 2,048 entries.
  it("takes a stock tool's update of 2,048 variants by id in a read and a write", async () => {
    const p = await seeded(`${uid("TU")}-`, 2048);
    const update = p.variants.map((v, i) => ({ variant_id: v.variant_id, qty: 1000 + i }));
    const body = JSON.stringify({ product_id: p.product_id, variants: { update } });
    const w = wrapD1();
    const r = await call("PUT", "/v1/products", {
      raw: body,
      headers: { "content-type": "application/json" },
      env: { DB: w.db },
    });
    expect(r.status, r.text).toBe(200);
    expect(w.counts.calls).toBe(2);
    const parsed = await call("PUT", "/v1/products", {
      body: { product_id: p.product_id, variants: { update } },
      headers: { "idempotency-key": uid("k") },
    });
    expect(parsed.status, parsed.text).toBe(200);
    const qty = (t: { products: { variants: { qty: number }[] }[] }) => t.products[0].variants.map((v) => v.qty);
    expect(qty(r.json)).toEqual(update.map((e) => e.qty));
    expect(qty(parsed.json)).toEqual(qty(r.json));
  });

  it("takes adjustments of 2,048 variants with expected counts in a read and a write, or none of them", async () => {
    const p = await seeded(`${uid("TA")}-`, 2048);
    const qty = (t: { products: { variants: { qty: number }[] }[] }) => t.products[0].variants.map((v) => v.qty);
    const before = p.variants.map((v) => v.qty);
    const update = p.variants.map((v, i) => ({ variant_id: v.variant_id, adjust: i % 7, expected_qty: before[i] }));
    const w = wrapD1();
    const r = await call("PUT", "/v1/products", {
      raw: JSON.stringify({ product_id: p.product_id, variants: { update } }),
      headers: { "content-type": "application/json" },
      env: { DB: w.db },
    });
    expect(r.status, r.text).toBe(200);
    expect(w.counts.calls).toBe(2);
    expect(qty(r.json)).toEqual(before.map((n, i) => n + (i % 7)));
    // The same expectations again: the counts moved, so every changed entry is refused, and nothing is written.
    const again = await call("PUT", "/v1/products", { body: { product_id: p.product_id, variants: { update } } });
    expect(again.status).toBe(409);
    expect(again.json.errors[0]).toBe(
      `variants.update[1].expected_qty: variant ${p.variants[1].variant_id} has qty ${before[1] + 1}, not ${before[1]}`,
    );
    expect(qty({ products: [(await get(`/v1/products/${p.product_id}`)).json] })).toEqual(qty(r.json));
  });
});
