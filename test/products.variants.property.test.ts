import { env } from "cloudflare:workers";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { leadScenario } from "./fixtures/lead-bodies";
import { oneByOne } from "./fixtures/one-by-one";
import { ifMatch, normal, oneItem, owners, type Seeded, seed, severalItems } from "./fixtures/variant-bodies";
import {
  besideLists,
  catalogInvariants,
  invariants,
  type Json,
  led,
  meaning,
  namesPath,
  refusal,
  stateOf,
  statusOf,
  store,
} from "./fixtures/variant-checks";
import { cleaned, type Entry, entries, items, type Mode, type Scenario, scenario } from "./fixtures/variant-draws";
import { get, post, put, subscribeAll, uid } from "./helpers";

// PUT /v1/products with variant lists (docs/products.md, "Updating products", "Variants"), on the
// random bodies of test/fixtures/variant-bodies.ts: properties that hold whichever plan writes
// them. Each is held on what the request answers and on what the database keeps after it.

// Events are recorded only while an endpoint subscribes (docs/webhooks.md).
beforeAll(subscribeAll);

/** The scenarios of one item: one in five around a selected variant's own fields (a leading entry). */
const drawn = fc.oneof({ weight: 4, arbitrary: scenario }, { weight: 1, arbitrary: leadScenario });

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
      fc.asyncProperty(drawn, fc.nat(3), async (s, keyed) => {
        const prefix = `${uid("P")}-`;
        const seeded = await seed(s, prefix);
        const body = oneItem(s, prefix, seeded, foreign);
        const headers = await ifMatch(s, seeded.id);
        const key: Record<string, string> = keyed === 0 ? { "idempotency-key": uid("key") } : {};
        const [before, storeBefore] = [await stateOf(seeded.id), await store()];
        const r = await put("/v1/products", body, { headers: { ...headers, ...key } });
        expect(r.status, r.text).toBeLessThan(500);
        const after = await stateOf(seeded.id);
        // An ETag answers a write under If-Match, or its 412 with the product as it is now.
        expect(r.headers.has("etag"), r.text).toBe(headers["if-match"] !== undefined && [200, 412].includes(r.status));
        if (r.status === 412) {
          expect([r.headers.get("etag"), r.json.products]).toEqual([after.etag, [after.product]]);
        }
        if (r.status === 200) {
          accepted++;
          expect(r.json.errors).toEqual([]);
          expect(r.json.products).toEqual([after.product]);
          if (headers["if-match"]) expect(r.headers.get("etag")).toBe(after.etag);
          expect(after.events.n).toBeGreaterThan(before.events.n);
          const was = before.product;
          const selected = "variant_id" in body || (!("product_id" in body) && body.sku !== was.sku);
          besideLists(body, was, after.product, selected);
          if (selected && Object.keys(body.variants).join() === "add") led(body, was, after.product);
        } else {
          refusal(r, body, headers["if-match"] !== undefined);
          expect(r.status, r.text).toBe(statusOf(r.json.errors[0]));
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
    // The properties of either side must have been held on a fair share of the draws (21 to 24
    // of 120 accepted, 30 to 39 replayed, in runs).
    expect(accepted).toBeGreaterThan(8);
    expect(replayed).toBeGreaterThan(10);
  }, 120_000);

  it("an accepted sync, add or update leaves what its entries mean", async () => {
    const foreign = await foreignSku();
    const checked = { sync: 0, add: 0, update: 0 };
    // Items naming their product by id with one list (the others are held by the properties
    // above); half without the entries' refused forms, and adding SKUs the product lacks, so that
    // each list is accepted often enough.
    const oneList = fc.tuple(scenario, fc.boolean()).map(([drawn, clean]): Scenario => {
      const s = clean ? cleaned(drawn) : drawn;
      const entries = (s.entries as Entry[]).map((e) =>
        clean && s.mode === "add" && e.sku.kind === "existing"
          ? { ...e, sku: { kind: "new" as const, n: e.sku.i } }
          : e,
      );
      return { ...s, select: "id", next: undefined, entries: entries as Scenario["entries"] };
    });
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
    // Each form held on accepted draws (2 to 22 of each in 120 draws in runs; the wider draw of
    // selections and slugless products makes fewer adds pass): none may go unchecked.
    expect(
      Object.values(checked).every((n) => n >= 1),
      JSON.stringify(checked),
    ).toBe(true);
  }, 120_000);

  it("a selected variant takes the item's own fields beside an add, and the product the rest", async () => {
    const foreign = await foreignSku();
    let checked = 0;
    // Adds of new SKUs without the entries' refused forms, beside a selected variant's fields.
    const selecting = fc
      .tuple(scenario, fc.constantFrom("variant" as const, "sku-variant" as const))
      .map(([drawn, select]): Scenario => {
        const s = cleaned(drawn);
        const entries = (s.entries as Entry[]).map((e) =>
          e.sku.kind === "existing" ? { ...e, sku: { kind: "new" as const, n: e.sku.i } } : e,
        );
        const variantFields = { ...drawn.variantFields, expected: undefined };
        const add = { select, mode: "add" as const, bare: false, renames: false, variantFields };
        return { ...s, ...add, entries: entries as Scenario["entries"] };
      });
    await fc.assert(
      fc.asyncProperty(selecting, async (s) => {
        const prefix = `${uid("L")}-`;
        const seeded = await seed(s, prefix);
        const body = oneItem(s, prefix, seeded, foreign);
        const was = (await get(`/v1/products/${seeded.id}`)).json;
        const r = await put("/v1/products", body);
        if (r.status !== 200 || "product_id" in body || body.sku === was.sku) return;
        checked++;
        led(body, was, r.json.products[0]);
        besideLists(body, was, r.json.products[0], true);
      }),
      { numRuns: 40 },
    );
    // 12 to 16 of 40 in runs; how many swings with fast-check's bias, so only: held on some.
    expect(checked).toBeGreaterThan(0);
  }, 120_000);

  it("an accepted item of two lists leaves what its lists sent one by one leave", async () => {
    const foreign = await foreignSku();
    let compared = 0;
    // Two lists in the order they apply, without expected counts (an update's beside a sync is of
    // the count as stored before the sync, which one by one it is not).
    const twoLists = fc
      .tuple(scenario, entries, fc.constantFrom(["sync", "add"], ["sync", "update"], ["add", "update"]), fc.boolean())
      .map(([drawn, more, [mode, then], clean]): Scenario => {
        // Half without the entries' refused forms, adding SKUs the product lacks, so that both pass.
        const tidy = (list: unknown, m: string) =>
          ((clean ? cleaned({ ...drawn, entries: list as Scenario["entries"] }).entries : list) as Entry[]).map(
            (e) => ({
              ...e,
              expected: undefined,
              sku: clean && m === "add" && e.sku.kind === "existing" ? { kind: "new" as const, n: e.sku.i } : e.sku,
            }),
          );
        return {
          ...drawn,
          select: "id",
          own: {},
          mode: mode as Mode,
          entries: tidy(drawn.entries, mode) as Scenario["entries"],
          next: { mode: then as Mode, entries: tidy(more, then) as Scenario["entries"] },
        };
      });
    await fc.assert(
      fc.asyncProperty(twoLists, async (s) => {
        const [pa, pb] = [`${uid("A")}-`, `${uid("B")}-`];
        const [sa, sb] = [await seed(s, pa), await seed(s, pb)];
        const together = await put("/v1/products", oneItem(s, pa, sa, foreign), { headers: await ifMatch(s, sa.id) });
        if (together.status !== 200) return;
        const { variants, ...fields } = oneItem(s, pb, sb, foreign);
        const [first, then] = Object.keys(variants);
        const one = await put("/v1/products", { ...fields, variants: { [first]: variants[first] } });
        if (one.status !== 200) return;
        const two = await put("/v1/products", { product_id: sb.id, variants: { [then]: variants[then] } });
        if (two.status !== 200) return;
        compared++;
        const [ga, gb] = [await get(`/v1/products/${sa.id}`), await get(`/v1/products/${sb.id}`)];
        expect(normal(ga.json, pa, sa.id)).toEqual(normal(gb.json, pb, sb.id));
      }),
      { numRuns: 60 },
    );
    // 9 to 11 of 60 in most runs, 3 in one (the rest refused together or one by one): held on some.
    expect(compared).toBeGreaterThan(0);
  }, 120_000);

  it("an update whose expected_qty is not the stored qty is refused with 409 naming it, and one whose counts all are applies", async () => {
    let refused = 0;
    let applied = 0;
    // Updates of counts and prices alone, so that an expected count is the only thing refused.
    const guarded = scenario.map(
      (s): Scenario => ({ ...s, mode: "update", select: "id", next: undefined, own: {}, fields: {}, noMinus: false }),
    );
    await fc.assert(
      // Now and then an entry that expects one more than its variant's stored qty.
      fc.asyncProperty(guarded, fc.option(fc.nat(5), { freq: 2 }), async (s, wrong) => {
        const prefix = `${uid("Q")}-`;
        const seeded = await seed(s, prefix);
        const was = (await get(`/v1/products/${seeded.id}`)).json;
        const stored = new Map<number, number>(was.variants.map((v: Json) => [v.variant_id, v.qty]));
        // An expected_qty on a variant an entry before already expects is left out: the plans hold
        // the first (src/products/update/states.ts), which docs/stock.md does not say.
        const expects = new Set<number>();
        const update: Json[] = [];
        for (const [i, e] of (oneItem(s, prefix, seeded, "").variants.update as Json[]).entries()) {
          if (!stored.has(e.variant_id)) continue;
          const { variant_id, qty, adjust, price } = e;
          const expected_qty = i === wrong ? (stored.get(variant_id) as number) + 1 : e.expected_qty;
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
        const errors = update.flatMap((e, i) =>
          e.expected_qty === undefined || e.expected_qty === stored.get(e.variant_id)
            ? []
            : [
                `variants.update[${i}].expected_qty: variant ${e.variant_id} has qty ${stored.get(e.variant_id)}, not ${e.expected_qty}`,
              ],
        );
        if (s.ifMatch === "stale") {
          expect(r.status, r.text).toBe(412);
        } else if (errors.length) {
          refused++;
          // Worded in the order of the variants, not of the entries.
          expect(r.status, r.text).toBe(409);
          expect([...r.json.errors].sort()).toEqual(errors.sort());
          expect((await get(`/v1/products/${seeded.id}`)).json).toEqual(was);
        } else {
          applied++;
          expect(r.status, r.text).toBe(200);
          meaning("update", update, was.variants, r.json.products[0].variants, was.price);
        }
      }),
      { numRuns: 80 },
    );
    // 12 refused and 56 to 64 applied of 80 in runs; the refused few swing with the draws.
    expect(refused).toBeGreaterThan(0);
    expect(applied).toBeGreaterThan(20);
  }, 120_000);
});

/** The product that holds `sku`, if any. */
async function skuOwner(sku: unknown) {
  const row = await env.DB.prepare("SELECT product_id FROM skus WHERE sku = ?")
    .bind(sku)
    .first<{ product_id: number }>();
  return row?.product_id ?? null;
}

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
        const body = severalItems(drawn, base, (o) => seeded.get(o) as Seeded, foreign);
        // The product each item names: by id, by its owner's variant, or by a SKU as stored before
        // the request (an item selected by SKU may give the SKU the item before claims, naming the
        // product that holds it).
        const ids: number[] = [];
        for (const [j, item] of body.entries()) {
          const bySku = "product_id" in item || "variant_id" in item ? null : await skuOwner(item.sku);
          ids.push("product_id" in item ? item.product_id : (bySku ?? (seeded.get(owner[j]) as Seeded).id));
        }
        const before = new Map<number, Awaited<ReturnType<typeof stateOf>>>();
        for (const { id } of seeded.values()) before.set(id, await stateOf(id));
        const r = await put("/v1/products", body);
        expect(r.status, r.text).toBeLessThan(500);
        for (const e of r.json.errors) expect(namesPath(e, body, false), e).toBe(true);
        const refused = new Set(r.json.errors.map((e: string) => Number(/^\[(\d+)\]/.exec(e)?.[1])));
        const accepted = drawn.map((_, j) => j).filter((j) => !refused.has(j));
        expect(r.json.success, r.text).toBe(accepted.length);
        if (accepted.length) expect(r.status, r.text).toBe(200);
        else {
          refusal(r, body, false);
          // The first refused item's status.
          expect(r.status, r.text).toBe(statusOf(r.json.errors[0].replace(/^\[\d+\](\.|: )/, "")));
        }
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
    // Bodies with accepted and refused items: 29 to 30 of 40 in runs.
    expect(partial).toBeGreaterThan(5);
  }, 120_000);

  it("applies items in order, each as if sent alone: a body answers and leaves what its items sent one by one do", async () => {
    const foreign = await foreignSku();
    // Without the items claiming a SKU the item before frees: one request keeps it from other
    // products. Half of the bodies name one product in every item, so that order shows.
    const apart = fc
      .tuple(items, fc.boolean())
      .map(([drawn, one]) => drawn.map((d, j) => ({ ...d, steal: undefined, again: one && j ? 0 : d.again })));
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
        // One by one but for an item selected by a SKU an item before it synced away and another
        // gave back: the body's rounds, reading afresh, answer it 404 (./fixtures/one-by-one.ts).
        const alone = await oneByOne(body(1, rb), owners(drawn));
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
