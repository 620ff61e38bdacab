import { env } from "cloudflare:workers";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import {
  ifMatch,
  items,
  normal,
  oneItem,
  owners,
  type Scenario,
  type Seeded,
  scenario,
  seed,
  severalItems,
} from "./fixtures/variant-bodies";
import { get, post, put, subscribeAll, uid } from "./helpers";

// PUT /v1/products with variant lists (docs/products.md, "Updating products", "Variants"), on the
// random bodies of test/fixtures/variant-bodies.ts: properties that hold whichever plan writes
// them. Each is held on what the request answers and on what the database keeps after it.

// Events are recorded only while an endpoint subscribes (docs/webhooks.md).
beforeAll(subscribeAll);

type Json = Record<string, any>;
type Body = Json | Json[];

const OPTION = /^variant_option[1-5]_(name|value)$/;

/** Whether `path` (`variants.sync[2].sku`) is a place in `body`, or an option an entry there leaves out. */
function inBody(path: string, body: unknown): boolean {
  let at = body;
  let rest = path;
  let last: string | number = "";
  let parent: unknown;
  while (rest) {
    const m = /^(?:\.?([A-Za-z_][\w-]*)|\[(\d+)\])/.exec(rest);
    if (!m || at === null || typeof at !== "object") return false;
    rest = rest.slice(m[0].length);
    last = m[1] ?? Number(m[2]);
    parent = at;
    at = (at as Json)[last];
  }
  return at !== undefined || (typeof parent === "object" && OPTION.test(String(last)));
}

/**
 * Whether an error names a field path of the body: `[j].` then a path of item j, a path, the
 * If-Match header, or a stored variant (`variant 17: SKU X is also used by variants.update[0].sku`)
 * with the body's path that clashes with it last. One form names no path of the body: two stored
 * variants an update leaves with one combination (`variant 18: option combination (c) is also
 * used by variant 17`, when an update names a variant twice).
 */
function namesPath(error: string, body: unknown, header: boolean): boolean {
  const item = /^\[(\d+)\](\.|: )/.exec(error);
  if (item) return Array.isArray(body) && namesPath(error.slice(item[0].length), body[Number(item[1])], header);
  const head = error.split(": ", 1)[0];
  if (head === "If-Match") return header;
  if (/^variant \d+$/.test(head)) {
    const named = error.split(" ").at(-1) ?? "";
    return inBody(named, body) || /^variant \d+: option combination \(.*\) is also used by variant \d+$/.test(error);
  }
  return head !== error && inBody(head, body);
}

const first = async <T>(query: string, ...args: unknown[]) =>
  (await env.DB.prepare(query)
    .bind(...args)
    .first<T>()) as T;

/** All a request may change of a product: its answer, ETag, version, SKUs in the registry, events. */
async function stateOf(id: number) {
  const g = await get(`/v1/products/${id}`);
  const skus = await env.DB.prepare("SELECT sku, variant_id FROM skus WHERE product_id = ? ORDER BY sku")
    .bind(id)
    .all();
  return {
    product: g.json,
    etag: g.headers.get("etag"),
    version: await first("SELECT version FROM product_versions WHERE product_id = ?", id),
    skus: skus.results,
    events: await first("SELECT count(*) AS n FROM events WHERE product_id = ?", id),
  };
}

/** The registry and the events of the whole store, which a refused request leaves as they are. */
const store = () =>
  first(
    "SELECT (SELECT count(*) FROM skus) AS skus, (SELECT count(*) FROM events) AS events, (SELECT total(product_id) FROM skus) AS owners",
  );

const values = (v: Json) => [1, 2, 3, 4, 5].map((n) => v[`variant_option${n}_value`] ?? null);

/** What the store keeps whatever a request did (docs/products.md, "Variants", "Limits"). */
async function invariants(id: number) {
  const { product: p } = await stateOf(id);
  const vs = p.variants as Json[];
  expect(vs.length).toBeLessThanOrEqual(2048);
  const combos = vs.map((v) => JSON.stringify(values(v)));
  expect(new Set(combos).size, "a combination twice").toBe(combos.length);
  const own = [p.sku, ...vs.map((v) => v.sku)].filter((s) => s !== null);
  expect(new Set(own).size, "a SKU twice in the product").toBe(own.length);
  // The registry holds exactly the product's SKUs, so none is another product's.
  const registry = await env.DB.prepare("SELECT sku, variant_id FROM skus WHERE product_id = ? ORDER BY sku")
    .bind(id)
    .all();
  const expected = [
    ...(p.sku === null ? [] : [{ sku: p.sku, variant_id: null }]),
    ...vs.filter((v) => v.sku !== null).map((v) => ({ sku: v.sku, variant_id: v.variant_id })),
  ].sort((a, b) => (a.sku < b.sku ? -1 : 1));
  expect(registry.results).toEqual(expected);
  if (p.disable_minusqty === "1") expect(vs.every((v) => v.qty >= 0)).toBe(true);
  // Positions are dense, in the order the product answers its variants.
  const rows = await env.DB.prepare("SELECT id, position FROM variants WHERE product_id = ? ORDER BY position, id")
    .bind(id)
    .all<{ id: number; position: number }>();
  expect(rows.results.map((r) => r.id)).toEqual(vs.map((v) => v.variant_id));
  const base = rows.results[0]?.position ?? 0;
  expect(rows.results.map((r) => r.position - base)).toEqual(vs.map((_, i) => i));
}

/** Every SKU of the catalog once, and the registry holding each of them. */
async function catalogInvariants() {
  const twice = await env.DB.prepare(
    "SELECT sku FROM (SELECT sku FROM products UNION ALL SELECT sku FROM variants) WHERE sku IS NOT NULL GROUP BY sku HAVING count(*) > 1",
  ).all();
  expect(twice.results).toEqual([]);
  const counts = await first<{ rows: number; registry: number }>(
    "SELECT (SELECT count(sku) FROM products) + (SELECT count(sku) FROM variants) AS rows, (SELECT count(*) FROM skus) AS registry",
  );
  expect(counts.rows).toBe(counts.registry);
}

/** A refusal: a JSON envelope whose errors name the body's paths. */
function refusal(r: Awaited<ReturnType<typeof put>>, body: Body, header: boolean) {
  expect(r.status, r.text).toBeGreaterThanOrEqual(400);
  expect(r.status, r.text).toBeLessThan(500);
  expect(r.json, r.text).toMatchObject({ success: 0, notices: expect.any(Array) });
  expect(r.json.errors.length, r.text).toBeGreaterThan(0);
  for (const e of r.json.errors) expect(namesPath(e, body, header), e).toBe(true);
}

/** The foreign product whose SKU some entries take (refused). */
async function foreignSku() {
  const foreign = uid("FOREIGN");
  await post("/v1/products", { title: "Other", price: 1, sku: foreign });
  return foreign;
}

describe("PUT of one item with variant lists", () => {
  it("never answers 5xx; a refusal names body paths and writes nothing; an acceptance answers the product as stored; a replay answers the same", async () => {
    const foreign = await foreignSku();
    let accepted = 0;
    let replayed = 0;
    await fc.assert(
      fc.asyncProperty(scenario, fc.nat(3), async (s, keyed) => {
        const prefix = `${uid("P")}-`;
        const seeded = await seed(s, prefix);
        const body = oneItem(s, prefix, seeded, foreign);
        const headers = await ifMatch(s, seeded.id);
        const key = keyed === 0 ? { "idempotency-key": uid("key") } : {};
        const [before, storeBefore] = [await stateOf(seeded.id), await store()];
        const r = await put("/v1/products", body, { headers: { ...headers, ...key } });
        expect(r.status, r.text).toBeLessThan(500);
        const after = await stateOf(seeded.id);
        if (r.status === 200) {
          accepted++;
          expect(r.json.errors).toEqual([]);
          expect(r.json.products).toEqual([after.product]);
          if (headers["if-match"]) expect(r.headers.get("etag")).toBe(after.etag);
          expect(after.events.n).toBeGreaterThan(before.events.n);
        } else {
          refusal(r, body, headers["if-match"] !== undefined);
          expect(after).toEqual(before);
          expect(await store()).toEqual(storeBefore);
        }
        await invariants(seeded.id);
        if (keyed === 0) {
          replayed++;
          const again = await put("/v1/products", body, { headers: { ...headers, ...key } });
          expect([again.status, again.json]).toEqual([r.status, r.json]);
          expect(await stateOf(seeded.id)).toEqual(after);
        }
      }),
      { numRuns: 150 },
    );
    await catalogInvariants();
    // The properties of either side must have been held on a fair share of the draws.
    expect(accepted).toBeGreaterThan(15);
    expect(replayed).toBeGreaterThan(15);
  }, 120_000);
});
