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
    version: await first<{ version: number }>("SELECT version FROM product_versions WHERE product_id = ?", id),
    skus: skus.results,
    events: await first<{ n: number }>("SELECT count(*) AS n FROM events WHERE product_id = ?", id),
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

const OPTIONS = [1, 2, 3, 4, 5].map((n) => `variant_option${n}_value`);

/** The fields an entry gives, an `adjust` giving the qty (`expected_qty` and the id give none). */
const givenBy = (e: Json) => Object.keys(e).map((k) => (k === "adjust" ? "qty" : k));

/** Every field of `v` but those given and the option names (a sync may rename options) is as `was`. */
function kept(v: Json, was: Json, given: string[]) {
  for (const [k, x] of Object.entries(was)) {
    if (!given.includes(k) && !/_name$/.test(k)) expect(v[k], k).toEqual(x);
  }
}

/**
 * The variants an accepted list leaves, as docs/products.md ("Variants") says, without matching
 * more than a sync's SKU-or-values rule: their ids, SKUs, option values, qty and price, and every
 * field no entry gives kept. `price` is the product's price after the request (a new variant's).
 */
function meaning(mode: string, entries: Json[], was: Json[], now: Json[], price: number) {
  const ids = was.map((v) => v.variant_id);
  const fresh = (v: Json, e: Json) => {
    expect(ids, "a new variant has a new id").not.toContain(v.variant_id);
    expect([v.sku, v.qty, v.price]).toEqual([e.sku ?? null, e.qty ?? 0, e.price ?? price]);
  };
  const gives = (v: Json, e: Json) => {
    for (const k of ["sku", "qty", "price", ...OPTIONS]) if (k in e && k !== "qty") expect(v[k], k).toEqual(e[k]);
  };
  if (mode === "sync") {
    // The entries in order; one matches the variant with its SKU, or without a SKU the one with its values.
    expect(now).toHaveLength(entries.length);
    entries.forEach((e, i) => {
      const match =
        "sku" in e
          ? was.find((v) => v.sku === e.sku)
          : was.find((v) => OPTIONS.every((k) => (v[k] ?? null) === (e[k] ?? null)));
      if (match) {
        expect(now[i].variant_id, `sync[${i}] keeps its variant`).toBe(match.variant_id);
        kept(now[i], match, givenBy(e));
      } else fresh(now[i], e);
      gives(now[i], e);
      if ("qty" in e) expect(now[i].qty).toBe(e.qty);
    });
  } else if (mode === "add") {
    // The variants as they were, then the entries in order.
    expect(now.slice(0, was.length)).toEqual(was);
    expect(now).toHaveLength(was.length + entries.length);
    entries.forEach((e, i) => {
      fresh(now[was.length + i], e);
      gives(now[was.length + i], e);
    });
  } else {
    // The same variants in the same order; each named one takes its entries' fields in order (an
    // adjust moves the qty it has so far), the others are as they were.
    expect(now.map((v) => v.variant_id)).toEqual(ids);
    was.forEach((v, i) => {
      const named = entries.filter((e) => e.variant_id === v.variant_id);
      kept(now[i], v, named.flatMap(givenBy));
      gives(now[i], Object.assign({}, ...named));
      let qty = v.qty;
      for (const e of named) qty = "qty" in e ? e.qty : qty + (e.adjust ?? 0);
      expect(now[i].qty, `qty of variant ${v.variant_id}`).toBe(qty);
    });
  }
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
        const key: Record<string, string> = keyed === 0 ? { "idempotency-key": uid("key") } : {};
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
      { numRuns: 120 },
    );
    await catalogInvariants();
    // The properties of either side must have been held on a fair share of the draws.
    expect(accepted).toBeGreaterThan(15);
    expect(replayed).toBeGreaterThan(15);
  }, 120_000);

  it("an accepted sync, add or update leaves what its entries mean", async () => {
    const foreign = await foreignSku();
    const checked = { sync: 0, add: 0, update: 0 };
    // Items naming their product by id with one list: the others are held by the properties above.
    const oneList = scenario.map((s): Scenario => ({ ...s, select: "id", next: undefined }));
    await fc.assert(
      fc.asyncProperty(oneList, async (s) => {
        const prefix = `${uid("M")}-`;
        const seeded = await seed(s, prefix);
        const body = oneItem(s, prefix, seeded, foreign);
        const was = (await get(`/v1/products/${seeded.id}`)).json;
        const r = await put("/v1/products", body, { headers: await ifMatch(s, seeded.id) });
        if (r.status !== 200) return;
        checked[s.mode]++;
        const now = r.json.products[0];
        meaning(s.mode, body.variants[s.mode], was.variants, now.variants, now.price);
      }),
      { numRuns: 120 },
    );
    // Each form held on enough accepted draws (a tenth of the draws are accepted syncs, adds or updates).
    expect(
      Object.values(checked).every((n) => n >= 5),
      JSON.stringify(checked),
    ).toBe(true);
  }, 120_000);

  it("an update whose expected_qty is not the stored qty is refused with 409 naming it, and one whose counts all are applies", async () => {
    let refused = 0;
    let applied = 0;
    // Updates of counts and prices alone, so that an expected count is the only thing refused.
    const guarded = scenario.map(
      (s): Scenario => ({ ...s, mode: "update", select: "id", next: undefined, own: {}, fields: {}, noMinus: false }),
    );
    await fc.assert(
      fc.asyncProperty(guarded, async (s) => {
        const prefix = `${uid("Q")}-`;
        const seeded = await seed(s, prefix);
        const was = (await get(`/v1/products/${seeded.id}`)).json;
        const stored = new Map<number, number>(was.variants.map((v: Json) => [v.variant_id, v.qty]));
        // An expected_qty on a variant an entry before already expects is left out: the plans hold
        // the first (src/products/update/states.ts), which docs/stock.md does not say.
        const expects = new Set<number>();
        const update: Json[] = [];
        for (const e of oneItem(s, prefix, seeded, "").variants.update as Json[]) {
          if (!stored.has(e.variant_id)) continue;
          const { variant_id, qty, adjust, price, expected_qty } = e;
          update.push({
            variant_id,
            ...(adjust === undefined ? (qty === undefined ? {} : { qty }) : { adjust }),
            ...(price === undefined ? {} : { price }),
            ...(expected_qty === undefined || expects.has(variant_id) ? {} : { expected_qty }),
          });
          if (expected_qty !== undefined) expects.add(variant_id);
        }
        if (!update.length) return;
        const headers = await ifMatch(s, seeded.id);
        const body = { product_id: seeded.id, variants: { update } };
        const r = await put("/v1/products", body, { headers });
        const wrong = update.flatMap((e, i) =>
          e.expected_qty === undefined || e.expected_qty === stored.get(e.variant_id)
            ? []
            : [
                `variants.update[${i}].expected_qty: variant ${e.variant_id} has qty ${stored.get(e.variant_id)}, not ${e.expected_qty}`,
              ],
        );
        if (s.ifMatch === "stale") {
          expect(r.status, r.text).toBe(412);
        } else if (wrong.length) {
          refused++;
          expect([r.status, r.json.errors]).toEqual([409, wrong]);
          expect((await get(`/v1/products/${seeded.id}`)).json).toEqual(was);
        } else {
          applied++;
          expect(r.status, r.text).toBe(200);
          meaning("update", update, was.variants, r.json.products[0].variants, was.price);
        }
      }),
      { numRuns: 80 },
    );
    expect(refused).toBeGreaterThan(5);
    expect(applied).toBeGreaterThan(20);
  }, 120_000);
});

describe("PUT of several items with variant lists", () => {
  it("applies each item on its own: a refused one writes nothing, success counts the others, the answer holds each changed product once as stored", async () => {
    const foreign = await foreignSku();
    let partial = 0;
    await fc.assert(
      fc.asyncProperty(items, async (drawn) => {
        const base = `${uid("S")}-`;
        const owner = owners(drawn);
        const seeded = new Map<number, Seeded>();
        for (const j of new Set(owner)) seeded.set(j, await seed(drawn[j].s, `${base}${j}-`));
        const ids = owner.map((o) => (seeded.get(o) as Seeded).id);
        const body = severalItems(drawn, base, (o) => seeded.get(o) as Seeded, foreign);
        const before = new Map<number, Awaited<ReturnType<typeof stateOf>>>();
        for (const id of new Set(ids)) before.set(id, await stateOf(id));
        const r = await put("/v1/products", body);
        expect(r.status, r.text).toBeLessThan(500);
        for (const e of r.json.errors) expect(namesPath(e, body, false), e).toBe(true);
        const refused = new Set(r.json.errors.map((e: string) => Number(/^\[(\d+)\]/.exec(e)?.[1])));
        const accepted = drawn.map((_, j) => j).filter((j) => !refused.has(j));
        expect(r.json.success, r.text).toBe(accepted.length);
        if (accepted.length) expect(r.status, r.text).toBe(200);
        else refusal(r, body, false);
        if (accepted.length && refused.size) partial++;
        // The products accepted items name, once each, in the order they are first named, as stored.
        const changed = [...new Set(accepted.map((j) => ids[j]))];
        expect(r.json.products.map((p: Json) => p.product_id)).toEqual(changed);
        for (const [id, was] of before) {
          const now = await stateOf(id);
          if (changed.includes(id)) {
            expect(r.json.products[changed.indexOf(id)]).toEqual(now.product);
            expect(now.events.n).toBeGreaterThan(was.events.n);
          } else expect(now).toEqual(was);
          await invariants(id);
        }
      }),
      { numRuns: 40 },
    );
    await catalogInvariants();
    expect(partial).toBeGreaterThan(5);
  }, 120_000);

  it("applies items in order, each as if sent alone: a body answers and leaves what its items sent one by one do", async () => {
    const foreign = await foreignSku();
    // Without the items claiming a SKU the item before frees: one request keeps it from other products.
    const apart = items.map((drawn) => drawn.map((d) => ({ ...d, steal: undefined })));
    await fc.assert(
      fc.asyncProperty(apart, async (drawn) => {
        const [ra, rb] = [`${uid("A")}-`, `${uid("B")}-`];
        const seeded = new Map<number, [Seeded, Seeded]>();
        for (const j of new Set(owners(drawn))) {
          seeded.set(j, [await seed(drawn[j].s, `${ra}${j}-`), await seed(drawn[j].s, `${rb}${j}-`)]);
        }
        const body = (run: 0 | 1, base: string) =>
          severalItems(drawn, base, (o) => seeded.get(o)?.[run] as Seeded, foreign);
        const together = await put("/v1/products", body(0, ra));
        const alone = [];
        for (const item of body(1, rb)) alone.push(await put("/v1/products", [item]));
        // Ids and SKU prefixes of the two runs' products taken out.
        const same = (json: unknown, run: 0 | 1, base: string) => {
          let text = JSON.stringify(json);
          for (const [j, p] of seeded) {
            text = text.replaceAll(`${base}${j}-`, `<p${j}>`).replaceAll(`product ${p[run].id}`, `product <${j}>`);
          }
          return normal(JSON.parse(text), "\u0000", -1);
        };
        const errors = drawn.map((_, j) => together.json.errors.filter((e: string) => e.startsWith(`[${j}]`)));
        const each = alone.map((a, j) => a.json.errors.map((e: string) => e.replace(/^\[0\]/, `[${j}]`)));
        expect(same(errors, 0, ra)).toEqual(same(each, 1, rb));
        expect(together.json.success).toBe(alone.filter((a) => a.json.success === 1).length);
        for (const [, [pa, pb]] of seeded) {
          const [ga, gb] = [await get(`/v1/products/${pa.id}`), await get(`/v1/products/${pb.id}`)];
          expect(same(ga.json, 0, ra)).toEqual(same(gb.json, 1, rb));
        }
      }),
      { numRuns: 30 },
    );
  }, 120_000);
});
