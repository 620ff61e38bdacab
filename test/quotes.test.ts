import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { answerBytes, carriedSql, escapeBackticks } from "../src/platform/d1";
import { uncarried } from "./carried";
import { get, post, put, uid } from "./helpers";

// Large answers built by SQLite travel from D1 with their double quotes carried as backticks
// (src/platform/d1.ts). Whatever the text holds (backticks and quotes of its own, escapes,
// characters of every UTF-8 length), the answer must be the JSON text SQLite built, byte for byte,
// but for its backticks, written `\u0060` (the same string in JSON).

/** SQLite's JSON of `value`, as built and as carried, in one statement. */
async function built(value: unknown) {
  const row = await env.DB.prepare(`SELECT json(?1) AS plain, ${carriedSql("json(?1)")} AS carried`)
    .bind(JSON.stringify(value))
    .first<{ plain: string; carried: string }>();
  return row!;
}
const escaped = (json: string) => json.replaceAll("`", "\\u0060");

const TRICKY = ["`", "``", '"`"', "\\`", "\\u0060", 'back`tick "quote" \\ slash', "é 😀 中文 `x`", "\u0001\n\t"];

describe("answerBytes of a carried text", () => {
  it.each(TRICKY.map((s) => [s]))("gives SQLite's JSON text for a string %j", async (s) => {
    const { plain, carried } = await built({ s, list: [s, 1, null] });
    expect(carried).not.toContain('"');
    expect(uncarried(carried)).toBe(escaped(plain));
    expect(JSON.parse(uncarried(carried))).toEqual({ s, list: [s, 1, null] });
  });

  it("holds on random strings and every length around the 16-byte step", async () => {
    const piece = fc.oneof(fc.string({ unit: "grapheme", maxLength: 40 }), fc.constantFrom(...TRICKY));
    await fc.assert(
      fc.asyncProperty(fc.array(piece, { maxLength: 6 }), async (parts) => {
        const { plain, carried } = await built(parts);
        expect(uncarried(carried)).toBe(escaped(plain));
      }),
      { numRuns: 150 },
    );
  });

  it("is UTF-8 bytes, and grows its memory for a text of megabytes", async () => {
    const long = 'x`y"é😀'.repeat(400_000);
    const { plain, carried } = await built([long]);
    const bytes = answerBytes(carried);
    expect(new TextDecoder().decode(bytes)).toBe(escaped(plain));
    expect(bytes.length).toBe(new TextEncoder().encode(escaped(plain)).length);
    // A short one after a long one: nothing of the long one is left in it.
    expect(uncarried("[`a`]")).toBe('["a"]');
    expect(answerBytes("")).toEqual(new Uint8Array());
  });

  it("gives the same bytes for a text given in parts, split anywhere but inside a character", async () => {
    const piece = fc.oneof(fc.string({ unit: "grapheme", maxLength: 30 }), fc.constantFrom(...TRICKY));
    await fc.assert(
      fc.property(fc.array(piece, { maxLength: 8 }), fc.array(fc.nat(), { maxLength: 5 }), (pieces, cuts) => {
        const whole = `[\`${pieces.join("`,`")}\`]`;
        // A part is a whole text (SQLite's, or JSON built here): none ends inside a UTF-16 pair.
        const inPair = (i: number) => /[\udc00-\udfff]/.test(whole[i] ?? "");
        const at = [...new Set(cuts.map((n) => n % (whole.length + 1)).map((i) => (inPair(i) ? i - 1 : i)))].sort(
          (a, b) => a - b,
        );
        const parts = [0, ...at].map((from, i) => whole.slice(from, at[i] ?? whole.length));
        const fromParts = answerBytes(parts).slice(); // a view, good until the next answer: kept apart
        expect(fromParts).toEqual(answerBytes(whole));
        expect(new TextDecoder().decode(answerBytes(parts))).toBe(whole.replaceAll("`", '"'));
      }),
      { numRuns: 300 },
    );
    // Non-ASCII past the first part, after one that grew the memory: each part lands after the last.
    const big = "é".repeat(300_000);
    expect(new TextDecoder().decode(answerBytes(["`a`:", big, "😀", big]))).toBe(`"a":${big}😀${big}`);
  });

  it("is a view a Response copies when built: the next answer, or the memory growing, leaves its body", async () => {
    const first = new Response(answerBytes(["[`a`,", "`é`]"]));
    const second = new Response(answerBytes("[`b`,`b`]"));
    const grown = answerBytes(`[\`${"c".repeat(3 << 20)}\`]`); // past what the memory held: it grows
    expect(grown.buffer.byteLength).toBeGreaterThan(3 << 20);
    expect(await first.text()).toBe('["a","é"]');
    expect(await second.text()).toBe('["b","b"]');
  });

  it("leaves JSON built in the Worker alone once its backticks are escaped", () => {
    const head = JSON.stringify({ notices: ["field `x` ignored", 'a "quote"'] });
    expect(JSON.parse(uncarried(escapeBackticks(head)))).toEqual(JSON.parse(head));
    expect(() => JSON.parse(uncarried(head))).toThrow();
  });
});

describe("answers carried from D1", () => {
  const title = 'The "best" `tick` shirt \\ é 😀';
  const value = 'XL "wide" `w`';

  it("keep a product's quotes and backticks through create, every read, the page and sync", async () => {
    const sku = uid("QT");
    const variants = [
      { sku: `${sku}-0`, variant_option1_name: "Size", variant_option1_value: value, qty: 1 },
      { sku: `${sku}-1`, variant_option1_name: "Size", variant_option1_value: "S`", qty: 2 },
    ];
    const created = await post("/v1/products", { title, price: 10, variants: { add: variants } });
    expect(created.status, created.text).toBe(200);
    const p = created.json.products[0];
    expect(p.title).toBe(title);
    expect(p.variants.map((v: { variant_option1_value: string }) => v.variant_option1_value)).toEqual([value, "S`"]);

    const own = await get(`/v1/products/${p.product_id}`);
    expect(own.json.title).toBe(title);
    expect(own.json.variants[0].variant_option1_value).toBe(value);
    const lookup = await get(`/v1/products?product_id=${p.product_id}&include_details=true`);
    expect(lookup.json.title).toBe(title);
    const page = await get(`/v1/products?limit=500&include_details=true&search=${encodeURIComponent(sku)}`);
    expect(page.json.map((x: { title: string }) => x.title)).toEqual([title]);

    const sync = variants.map((v, i) => ({ ...v, qty: 5 + i }));
    const synced = await put("/v1/products", { product_id: p.product_id, variants: { sync } });
    expect(synced.status, synced.text).toBe(200);
    expect(synced.json.products[0].title).toBe(title);
    expect(synced.json.products[0].variants.map((v: { qty: number }) => v.qty)).toEqual([5, 6]);
  });

  it("keep a notice's backtick around a product SQLite built", async () => {
    const sku = uid("QN");
    const add = [{ sku, variant_option1_name: "Size", variant_option1_value: "M", qty: 1 }];
    const created = await post("/v1/products", { title, price: 1, variants: { add } });
    expect(created.status, created.text).toBe(200);
    const r = await put("/v1/products", {
      product_id: created.json.products[0].product_id,
      "we`ird": 1,
      variants: { sync: [{ ...add[0], qty: 3 }] },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json.notices.join(" ")).toContain("we`ird");
    expect(r.json.products[0].variants[0].qty).toBe(3);
  });
});
