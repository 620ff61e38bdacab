import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RAW_LIST_MIN_CHARS, splitList } from "../src/platform/body";
import { carriedBound } from "../src/platform/quotes";
import { plainEntries } from "../src/products/entries";
import { packed } from "../src/products/packed";
import { rawSource } from "../src/products/raw-list";
import { namesOf } from "../src/products/variants";
import { wrapD1 } from "./d1-wrap";
import { call, callWithListAsText, get, post, uid } from "./helpers";

// A variant list SQLite checks and packs from the request's text (src/products/raw-list.ts) must
// pack exactly what the Worker packs from the parsed list (packed(plainEntries(...))), or refuse
// the entry (NULL), which sends the request down the Worker's path. Never the other way round: an
// entry SQLite takes must be one the Worker takes, with the same values. The lists are written as
// text, so forms JSON.parse hides are in them too: escapes, 1.0 and 1e2, -0, repeated keys,
// surrogates, Unicode spaces.

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

/** What the Worker's path takes: the entries it packs, or undefined (it would ask zod). */
function workerPack(text: string, mode: "create" | "update", names: string | null) {
  const entries = plainEntries(JSON.parse(text), mode);
  if (!entries) return undefined;
  const wanted = names === null ? undefined : (JSON.parse(names) as string[]);
  for (const e of entries) {
    const r = namesOf(e);
    if (r.error) return undefined;
    if (r.names && (!wanted || r.names.join("\u0000") !== wanted.join("\u0000"))) return undefined;
  }
  return JSON.parse(packed(entries)) as unknown[];
}

/** What SQLite packs of the list's text; undefined: refused. */
async function sqlPack(text: string, mode: "create" | "update", names: string | null) {
  const row = await env.DB.prepare(
    `SELECT json_group_array(json(value)) AS packed, count(*) AS n, count(*) - count(value) AS refused
     FROM (SELECT * FROM ${rawSource("?1", "?2", mode)} ORDER BY key)`,
  )
    .bind(carriedBound(text).text, names)
    .first<{ packed: string; n: number; refused: number }>();
  return !row?.n || row.refused ? undefined : (JSON.parse(row.packed) as unknown[]);
}

describe("variant lists packed by SQLite from their text", () => {
  it.each(["create", "update"] as const)(
    "pack what the Worker packs, or refuse (%s entries)",
    async (mode) => {
      let taken = 0;
      let workerOnly = 0;
      await fc.assert(
        fc.asyncProperty(lists[mode], fc.constantFrom(",", ", ", ",\n  "), async ([names, entries], sep) => {
          const text = `[${entries.join(sep)}]`;
          const mine = workerPack(text, mode, names);
          const theirs = await sqlPack(text, mode, names);
          if (theirs === undefined) {
            if (mine !== undefined) workerOnly++;
            return;
          }
          taken++;
          expect(mine, text).toBeDefined();
          expect(theirs, text).toEqual(mine);
        }),
        { numRuns: 1500 },
      );
      // The narrowing is for rare forms: most lists the Worker takes, SQLite takes too.
      expect(taken).toBeGreaterThan(300);
      expect(workerOnly).toBeLessThan(taken / 2);
    },
    60_000,
  );

  // The list is bound with its quotes carried as backticks (src/platform/quotes.ts, carriedBound):
  // its own backticks, escaped quotes and backslashes come through as they were.
  it("packs text holding backticks, quotes and backslashes as the Worker does", async () => {
    const text = '[{"sku":"a`b\\"c\\\\d`","variant_option1_value":"`S`","price":1,"qty":2}]';
    const mine = workerPack(text, "create", null);
    expect(mine?.[0]).toEqual(expect.arrayContaining(['a`b"c\\d`', "`S`"]));
    expect(await sqlPack(text, "create", null)).toEqual(mine);
  });

  it("packs -0 as 0 and money in minor units", async () => {
    const text = '[{"variant_option1_value":"S","price":12,"before_price":-0,"qty":-0,"visible":true,"sku":" A "}]';
    expect(await sqlPack(text, "create", null)).toEqual(workerPack(text, "create", null));
    expect(await sqlPack(text, "create", null)).toEqual([
      ["A", "S", null, null, null, null, 1200, 0, null, 0, null, null, null, null, 1, null, 17091, null],
    ]);
  });

  // A character past Latin-1 in any statement makes D1's binding write the whole batch, the list's
  // text included, as two-byte text: slower to serialise and to send (src/products/raw-list.ts).
  it.each(["create", "update"] as const)("is ASCII SQL (%s entries)", (mode) => {
    expect(rawSource("?1", "?2", mode)).not.toMatch(/[^\t\n\r -~]/);
  });

  it.each([
    ["not JSON", "[{]"],
    ["JSON5", '[{"sku":"a",}]'],
    ["not an array", '{"sku":"a"}'],
    ["empty", "[]"],
    ["too long", `[${Array(2049).fill('{"sku":"a"}').join(",")}]`],
    ["holding an escaped surrogate", '[{"sku":"\\uD800"}]'],
  ])("gives no entry of a list that is %s", async (_, text) => {
    const n = await env.DB.prepare(`SELECT count(*) AS n FROM ${rawSource("?1", "NULL", "create")}`)
      .bind(carriedBound(text).text)
      .first("n");
    expect(n).toBe(0);
  });
});

describe("a long body's variant list kept as text (src/platform/body.ts, splitList)", () => {
  const pad = " ".repeat(RAW_LIST_MIN_CHARS);
  // "text": split, the list's text its own JSON; "not JSON": split where the body's end only looked
  // like the list's, so the text is no JSON array and SQLite refuses it (the body is then parsed
  // whole, test below); "whole": parsed whole at once.
  it.each([
    ["the list as the body's last value", `{"product_id":7,"variants":{"sync":[${pad}{"sku":"a"}]}}`, "text"],
    [
      "spaces, as Python and PHP write JSON",
      `{"product_id": 7, "variants": {"update": [${pad}{"variant_id": 1}]} }\n`,
      "text",
    ],
    ["another field after the list", `{"variants":{"sync":[${pad}{"sku":"a"}]},"product_id":7}`, "whole"],
    ["another list ending the body", `{"product_id":7,"variants":{"sync":[${pad}]},"x":{"y":[1]}}`, "not JSON"],
    [
      "a later variants key, which JSON.parse keeps",
      `{"product_id":7,"variants":{"sync":[${pad}]},"variants":{"sync":[1]}}`,
      "not JSON",
    ],
    ["the key nested", `{"product_id":7,"x":{"variants":{"sync":[${pad}{"sku":"a"}]}}}`, "whole"],
    ["a short body", '{"product_id":7,"variants":{"sync":[{"sku":"a"}]}}', "whole"],
  ])("a body with %s", (_, text, how) => {
    const r = splitList(text);
    expect(r === undefined ? "whole" : how).toBe(how);
    if (!r) return;
    if (how === "not JSON") {
      expect(() => JSON.parse(r.list.text)).toThrow();
      return;
    }
    // The rest parses as the body does, with the list standing empty; the list is its own text.
    const whole = JSON.parse(text);
    const key = r.list.key;
    expect(JSON.parse(r.list.text)).toEqual(whole.variants[key]);
    expect(r.body).toEqual({ ...whole, variants: { ...whole.variants, [key]: [] } });
  });

  /** A sync of the product sent with its list as text: the answer, and D1's counts. */
  async function syncAsText(productId: number, sync: unknown[]) {
    const w = wrapD1();
    const r = await callWithListAsText(
      "PUT",
      "/v1/products",
      { product_id: productId, variants: { sync } },
      { env: { DB: w.db } },
    );
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
    return r.json.products[0] as { product_id: number; variants: { variant_id: number }[] };
  }

  it("takes a plain list in one round trip, binding its text, and answers as the parsed path does", async () => {
    const [a, b] = [`${uid("TA")}-`, `${uid("TB")}-`];
    const [pa, pb] = [await seeded(a, 3), await seeded(b, 3)];
    const sync = (prefix: string) => [
      { sku: `${prefix}0`, variant_option1_name: "Size", variant_option1_value: "v0", qty: 9, price: 120 },
      { sku: ` ${prefix}new `, variant_option1_name: "Size", variant_option1_value: "Blå", visible: false },
      { variant_option1_value: "v2", qty: -0, gtin: "007350", qty_location: "" },
    ];
    const w = wrapD1();
    const ra = await callWithListAsText(
      "PUT",
      "/v1/products",
      { product_id: pa.product_id, variants: { sync: sync(a) } },
      { env: { DB: w.db } },
    );
    const rb = await call("PUT", "/v1/products", {
      body: { product_id: pb.product_id, variants: { sync: sync(b) } },
      headers: { "idempotency-key": uid("k") },
    });
    expect(ra.status, ra.text).toBe(200);
    expect(w.counts.calls).toBe(1);
    expect(w.counts.maxParamBytes).toBeGreaterThan(RAW_LIST_MIN_CHARS);
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

  // Round trips: the refused batch, then the parsed path's own (the SQL-planned write; for the
  // repeated combination also its refusal and the JavaScript plan's read; none for a 400).
  it.each([
    ["a decimal price in a later entry", { price: 19.5 }, 200, 2],
    ["an unknown field in a later entry", { colour: "red" }, 200, 2],
    ["a repeated combination", { variant_option1_value: "v0" }, 409, 3],
    ["a negative price", { price: -1 }, 400, 1],
  ])("falls back to the parsed path on %s, with its answer", async (_, change, status, calls) => {
    const a = `${uid("TF")}-`;
    const p = await seeded(a, 2);
    const sync = [
      { sku: `${a}0`, variant_option1_value: "v0", qty: 1 },
      { sku: `${a}1`, variant_option1_value: "v1", qty: 2, ...change },
    ];
    const { r, counts } = await syncAsText(p.product_id, sync);
    expect(r.status, r.text).toBe(status);
    expect(counts.calls).toBe(calls);
    if (status === 200) expect(r.json.products[0].variants.map((v: { qty: number }) => v.qty)).toEqual([1, 2]);
  });

  it("parses a list whose first entry is not plain at once, without a refused batch", async () => {
    const a = `${uid("TD")}-`;
    const p = await seeded(a, 2);
    const sync = [
      { sku: `${a}0`, variant_option1_value: "v0", price: 10.5 },
      { sku: `${a}1`, variant_option1_value: "v1" },
    ];
    const { r, counts } = await syncAsText(p.product_id, sync);
    expect(r.status, r.text).toBe(200);
    expect(counts.calls).toBe(1);
    expect(counts.maxParamBytes).toBeLessThan(RAW_LIST_MIN_CHARS);
    expect(r.json.products[0].variants[0].price).toBe(10.5);
  });

  it("creates a product from a list kept as text in one round trip", async () => {
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
    const r = await callWithListAsText(
      "POST",
      "/v1/products",
      { title: "Text", price: 5, variants: { add } },
      { env: { DB: w.db } },
    );
    expect(r.status, r.text).toBe(200);
    expect(w.counts.calls).toBe(1);
    expect(w.counts.maxParamBytes).toBeGreaterThan(RAW_LIST_MIN_CHARS);
    const got = (await get(`/v1/products/${r.json.products[0].product_id}`)).json;
    expect(got.variants.map((v: Record<string, unknown>) => [v.sku, v.variant_option2_value, v.qty, v.price])).toEqual(
      add.map((e) => [e.sku, e.variant_option2_value, e.qty, e.price]),
    );
  });

  // A stock tool's update of every variant by id: about 60 KB for 2,048 entries, unpadded, goes as
  // text (src/platform/body.ts, RAW_LIST_MIN_CHARS) and answers as the parsed path does.
  it("takes a stock tool's update of 2,048 variants by id as text, in one round trip", async () => {
    const p = await seeded(`${uid("TU")}-`, 2048);
    const update = p.variants.map((v, i) => ({ variant_id: v.variant_id, qty: 1000 + i }));
    const body = JSON.stringify({ product_id: p.product_id, variants: { update } });
    expect(body.length).toBeGreaterThanOrEqual(RAW_LIST_MIN_CHARS);
    const w = wrapD1();
    const r = await call("PUT", "/v1/products", {
      raw: body,
      headers: { "content-type": "application/json" },
      env: { DB: w.db },
    });
    expect(r.status, r.text).toBe(200);
    expect(w.counts.calls).toBe(1);
    // The list's own text is what was bound (packed entries would be another, longer text).
    expect(w.counts.maxParamBytes).toBe(JSON.stringify(update).length);
    const parsed = await call("PUT", "/v1/products", {
      body: { product_id: p.product_id, variants: { update } },
      headers: { "idempotency-key": uid("k") },
    });
    expect(parsed.status, parsed.text).toBe(200);
    const qty = (t: { products: { variants: { qty: number }[] }[] }) => t.products[0].variants.map((v) => v.qty);
    expect(qty(r.json)).toEqual(update.map((e) => e.qty));
    expect(qty(parsed.json)).toEqual(qty(r.json));
  });
});
