import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { wrapD1 } from "./d1-wrap";
import { post } from "./helpers";

// Property-based probes of docs/api.md, "Conventions": whatever a client sends, the answer is JSON, never a 500,
// every error names a field, and a refused request writes nothing.

const snapshot = async () => {
  const [p, v, s] = await env.DB.batch([
    env.DB.prepare("SELECT count(*) AS n, coalesce(sum(stock), 0) AS s FROM products"),
    env.DB.prepare("SELECT count(*) AS n, coalesce(sum(qty), 0) AS s FROM variants"),
    env.DB.prepare("SELECT count(*) AS n FROM skus"),
  ]);
  return [p.results[0], v.results[0], s.results[0]];
};

// biome-ignore lint/suspicious/noControlCharactersInRegex: filtering them out of valid titles is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/;

let seq = 0;
const validProduct = fc.record({
  title: fc.string({ minLength: 1, maxLength: 40 }).filter((s) => s.trim() !== "" && !CONTROL.test(s)),
  price: fc.integer({ min: 0, max: 10_000_000 }).map((c) => c / 100),
  stock: fc.integer({ min: 0, max: 1000 }),
  tax_rate: fc.constantFrom(0, 6, 12, 25),
  disable_minusqty: fc.constantFrom(0, 1, "1", "0", true, false),
});

const hostile = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.double(),
  fc.constantFrom(1e308, -1e308, 2 ** 53 + 1, -0.001, 1.005, Number.MAX_SAFE_INTEGER),
  fc.string({ maxLength: 300 }),
  fc.string({ unit: "grapheme", minLength: 200, maxLength: 400 }),
  fc.constantFrom("\u0000", "a\u0007b", "1e3", "+5", "0x10", " ", "NaN", "Infinity", "__proto__", "-1"),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 3 }),
  fc.constant({ __proto__: null, constructor: { prototype: { polluted: true } } }),
);

const field = fc.constantFrom(
  "title",
  "price",
  "stock",
  "tax_rate",
  "disable_minusqty",
  "visible",
  "before_price",
  "weight",
  "images",
  "metadata",
  "sku",
  "variants",
  "description",
  "gtin",
);

describe("POST /v1/products under random corruption", () => {
  it("answers 200 or a 4xx JSON error naming a field; a refused body writes nothing", async () => {
    await fc.assert(
      fc.asyncProperty(validProduct, field, hostile, fc.boolean(), async (product, key, value, drop) => {
        const body: Record<string, unknown> = { ...product, sku: `FZ-${++seq}` };
        if (drop) delete body[key];
        else body[key] = value;
        const before = await snapshot();
        const r = await post("/v1/products", body);
        expect(r.json, r.text).toBeTypeOf("object");
        if (r.status === 200) {
          expect(r.json.success).toBe(1);
          return;
        }
        expect([400, 409]).toContain(r.status);
        expect(r.json.success).toBe(0);
        expect(r.json.errors.length).toBeGreaterThan(0);
        for (const e of r.json.errors) expect(e).toMatch(/^[A-Za-z_][\w.[\]]*: \S/);
        expect(await snapshot()).toEqual(before);
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      }),
      { numRuns: 150, seed: 20261121 },
    );
  }, 60_000);
});

describe("POST /v1/products when D1 fails", () => {
  it("leaves the store fully changed or unchanged whichever D1 call fails", async () => {
    const body = [0, 1].map((i) => ({
      title: `Fault ${i}`,
      price: 10,
      sku: `FAULT-${i}`,
      variants: { add: [{ variant_option1_name: "Size", variant_option1_value: "S", sku: `FAULT-${i}-S`, qty: 2 }] },
    }));
    for (let n = 1; n <= 3; n++) {
      const { db, counts } = wrapD1({ failCall: n });
      const before = await snapshot();
      const r = await post(
        "/v1/products",
        body.map((b) => ({
          ...b,
          sku: `${b.sku}-${n}`,
          variants: { add: [{ ...b.variants.add[0], sku: `${b.variants.add[0].sku}-${n}` }] },
        })),
        { env: { DB: db } },
      );
      if (n > counts.calls) {
        // The request took fewer calls than n: nothing failed, everything was written.
        expect(r.status).toBe(200);
        continue;
      }
      expect(r.status).toBe(503);
      expect(r.headers.get("retry-after")).toBe("1");
      expect(r.json).toEqual({ code: 503, error: "the database is unavailable, retry shortly" });
      expect(await snapshot()).toEqual(before);
    }
  });
});
