import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type DB, getDb } from "../src/db/client";
import { readCatalog } from "../src/orders/catalog";
import { createCold } from "../src/orders/cold";
import type { PlanOptions } from "../src/orders/create";
import { lineRow } from "../src/orders/insert";
import { planOrder, reserveStock } from "../src/orders/plan";
import type { OrderInput } from "../src/orders/schema";
import { wrapD1 } from "./d1-wrap";
import { get, post, subscribeAll, uid } from "./helpers";

// The one-trip create of a cold isolate plans in SQL (src/orders/cold.ts); the read path plans in
// JavaScript (plan.ts, lines.ts, totals.ts). They must agree to the unit: on random catalogs and
// orders, the SQL plan writes exactly the orders, lines and stock the JavaScript plan would, and
// refuses (writing nothing) exactly when the JavaScript plan refuses any order of the request.

type Of<A> = A extends fc.Arbitrary<infer T> ? T : never;

/** A D1 binding object no isolate cache has seen: each call is a cold isolate. */
const coldDb = (): DB =>
  getDb(
    new Proxy(env.DB, {
      get(target, prop) {
        const v = (target as any)[prop];
        return typeof v === "function" ? v.bind(target) : v;
      },
    }),
  );

const opts = (): PlanOptions => ({ now: Date.now(), defaultCurrency: "SEK", events: [] });

type Made = {
  id: number;
  sku: string | null;
  variants: { variant_id: number; sku: string | null }[];
};

const productArb = fc.record({
  price: fc.integer({ min: 0, max: 500_000 }),
  tax: fc.constantFrom(0, 6, 12, 25),
  stock: fc.integer({ min: 0, max: 20 }),
  noMinus: fc.integer({ min: 0, max: 9 }).map((n) => n < 3),
  ownSku: fc.boolean(),
  colour: fc.boolean(),
  variants: fc.array(
    fc.record({
      price: fc.integer({ min: 0, max: 500_000 }),
      qty: fc.integer({ min: 0, max: 20 }),
      sku: fc.boolean(),
    }),
    { maxLength: 3 },
  ),
});

const lineArb = fc.record({
  target: fc.nat(),
  mode: fc.nat(4),
  // One line in ten names something the plan refuses (kind 0 to 2 unknown, 3 to 7 mismatched).
  bad: fc.integer({ min: 0, max: 79 }),
  qty: fc.integer({ min: 1, max: 4 }),
  price: fc.option(fc.integer({ min: 0, max: 300_000 }), { nil: undefined }),
});

const orderArb = fc.record({
  lines: fc.array(lineArb, { minLength: 1, maxLength: 5 }),
  shipping: fc.integer({ min: 0, max: 10_000 }),
  email: fc.boolean(),
});

/** Creates the random catalog through the API; unique SKUs per run. */
async function makeCatalog(specs: Of<typeof productArb>[]): Promise<Made[]> {
  const tag = uid("CO");
  const body = specs.map((s, i) => ({
    title: `Cold ${tag} ${i}`,
    sku: s.ownSku || !s.variants.length ? `${tag}-P${i}` : undefined,
    price: s.price / 100,
    tax_rate: s.tax,
    ...(s.variants.length ? {} : { stock: s.stock }),
    disable_minusqty: s.noMinus ? 1 : 0,
    ...(s.variants.length
      ? {
          variants: {
            add: s.variants.map((v, j) => ({
              variant_option1_name: "Size",
              variant_option1_value: `S${j}`,
              ...(s.colour ? { variant_option2_name: "Colour", variant_option2_value: `C${j}` } : {}),
              sku: v.sku ? `${tag}-P${i}V${j}` : undefined,
              price: v.price / 100,
              qty: v.qty,
            })),
          },
        }
      : {}),
  }));
  const r = await post("/v1/products", body);
  expect(r.status, r.text).toBe(200);
  return r.json.products.map((p: any) => ({
    id: p.product_id,
    sku: p.sku,
    variants: (p.variants ?? []).map((v: any) => ({ variant_id: v.variant_id, sku: v.sku })),
  }));
}

/** One line's identifiers: right ones, agreeing extras, and the kinds the plan refuses. */
function selector(made: Made[], l: Of<typeof lineArb>) {
  if (l.bad === 0) return { sku: `NOPE-${uid()}` };
  if (l.bad === 1) return { variant_id: 900_000_000 + l.target };
  if (l.bad === 2) return { product_id: 900_000_000 + l.target };
  const mode = l.bad < 8 ? l.bad - 3 + 5 : l.mode; // 5 to 9: the kinds the plan refuses
  const targets = made.flatMap((p) =>
    p.variants.length
      ? p.variants.map((v) => ({ p, v }))
      : [{ p, v: undefined as Made["variants"][number] | undefined }],
  );
  const { p, v } = targets[l.target % targets.length];
  const other = made[(made.indexOf(p) + 1) % made.length];
  if (v) {
    switch (mode) {
      case 0:
        return v.sku ? { sku: v.sku } : { variant_id: v.variant_id };
      case 1:
        return { variant_id: v.variant_id };
      case 2:
        return { variant_id: v.variant_id, product_id: p.id };
      case 3:
        // The product's own SKU is accepted beside a variant_id.
        return { variant_id: v.variant_id, sku: p.sku ?? v.sku ?? undefined };
      case 4:
        return v.sku ? { sku: v.sku, product_id: p.id } : { variant_id: v.variant_id };
      case 5:
        return { variant_id: v.variant_id, product_id: other.id };
      case 6:
        return { product_id: p.id };
      case 7:
        return v.sku ? { sku: v.sku, variant_id: null } : { variant_id: v.variant_id, sku: "NOT-ITS" };
      case 8:
        return p.sku ? { sku: p.sku } : { variant_id: v.variant_id, sku: "NOT-ITS" };
      default:
        return { variant_id: v.variant_id, sku: "NOT-ITS" };
    }
  }
  switch (mode) {
    case 0:
      return p.sku ? { sku: p.sku } : { product_id: p.id };
    case 1:
      return { product_id: p.id };
    case 2:
      return { product_id: p.id, variant_id: null };
    case 3:
      return p.sku ? { sku: p.sku, product_id: p.id } : { product_id: p.id };
    case 4:
      return p.sku ? { sku: p.sku, variant_id: null } : { product_id: p.id };
    case 5:
      return p.sku ? { sku: p.sku, product_id: other.id } : { product_id: 900_000_000 };
    default:
      return { product_id: p.id, sku: "NOT-ITS" };
  }
}

async function snapshot(made: Made[]) {
  const ids = JSON.stringify(made.map((p) => p.id));
  const [p, v, o] = await env.DB.batch<Record<string, unknown>>([
    env.DB.prepare("SELECT id, stock FROM products WHERE id IN (SELECT value FROM json_each(?1)) ORDER BY id").bind(
      ids,
    ),
    env.DB.prepare(
      "SELECT id, qty FROM variants WHERE product_id IN (SELECT value FROM json_each(?1)) ORDER BY id",
    ).bind(ids),
    env.DB.prepare("SELECT count(*) AS n FROM orders"),
  ]);
  return { products: p.results, variants: v.results, orders: o.results[0].n as number };
}

describe("POST /v1/orders from a cold isolate: the SQL plan", () => {
  it("agrees with the JavaScript plan on random catalogs and orders (differential)", async () => {
    const stats = { ok: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(
        fc.array(productArb, { minLength: 1, maxLength: 4 }),
        fc.array(orderArb, { minLength: 1, maxLength: 3 }),
        async (specs, orderSpecs) => {
          const made = await makeCatalog(specs);
          const items = orderSpecs.map((o, index) => ({
            index,
            data: {
              order_id: "create",
              products: o.lines.map((l) => ({ ...selector(made, l), qty: l.qty, price: l.price })),
              shipping: { price: o.shipping },
              ...(o.email ? { customer: { email: `${uid("c")}@example.com` } } : {}),
            } as unknown as OrderInput,
          }));
          // The reference: the read path's JavaScript plan on the catalog as it is now.
          const o = opts();
          const cat = await readCatalog(
            getDb(env.DB),
            items.flatMap((i) => i.data.products),
          );
          const plans = items.map(({ index, data }) => planOrder(index, data, cat, o));
          const planned = plans.filter((p) => !("errors" in p)) as Exclude<
            (typeof plans)[number],
            { errors: string[] }
          >[];
          const { ok, failed } = reserveStock(planned);
          const allOk = planned.length === plans.length && failed.length === 0;

          const before = await snapshot(made);
          stats[allOk ? "ok" : "refused"]++;
          const got = await createCold(coldDb(), items, o);
          if (!allOk) {
            // Refused whole, nothing written: the read path then words each order's errors.
            expect(got).toBeUndefined();
            expect(await snapshot(made)).toEqual(before);
            return;
          }
          expect(got).toBeDefined();
          for (const p of ok) {
            const out = got?.get(p.index);
            if (!out?.ok) throw new Error(`order ${p.index} not created`);
            // The order token (the read-back credential of a storefront's order) is random per order.
            const { token, ...rest } = out as typeof out & { token?: string };
            expect(token).toMatch(/^[0-9a-f-]{36}$/);
            expect({ ...rest, orderId: 0 }).toEqual({ ok: true, orderId: 0, ...p.summary });
            const row = await env.DB.prepare(
              "SELECT subtotal, discount, total, tax, shipping_price, currency FROM orders WHERE id = ?",
            )
              .bind(out.orderId)
              .first<Record<string, unknown>>();
            expect({ ...row, tax: JSON.parse(row?.tax as string) }).toEqual({
              subtotal: p.summary.subtotal,
              discount: 0,
              total: p.summary.total,
              tax: p.summary.tax,
              shipping_price: p.summary.shipping,
              currency: "SEK",
            });
            const { results: lines } = await env.DB.prepare(
              `SELECT position, product_id, variant_id, sku, title, options, qty, unit_price, tax_rate
               FROM order_lines WHERE order_id = ? ORDER BY position`,
            )
              .bind(out.orderId)
              .all<Record<string, unknown>>();
            expect(lines.map((l) => ({ ...l, options: JSON.parse(l.options as string) }))).toEqual(
              p.lines.map(lineRow),
            );
          }
          // Stock: what the plan's lines take, from variants and from products without variants.
          const taken = new Map<string, number>();
          for (const p of ok) for (const l of p.lines) taken.set(l.stockKey, (taken.get(l.stockKey) ?? 0) + l.qty);
          const after = await snapshot(made);
          const expectStock = (rows: Record<string, unknown>[], prefix: string, col: string) =>
            rows.map((r) => ({ ...r, [col]: (r[col] as number) - (taken.get(`${prefix}${r.id}`) ?? 0) }));
          expect(after.products).toEqual(expectStock(before.products, "p", "stock"));
          expect(after.variants).toEqual(expectStock(before.variants, "v", "qty"));
        },
      ),
      { numRuns: 100 },
    );
    // Both outcomes must be exercised, not only refusals.
    expect(stats.ok).toBeGreaterThan(25);
    expect(stats.refused).toBeGreaterThan(25);
  });

  it("is one round trip, and so is the next: it reads no rows for the cache", async () => {
    const sku = uid("CW");
    const p = await post("/v1/products", { title: "Warm", sku, price: 10, stock: 5 });
    expect(p.status).toBe(200);
    const { db, counts, reset } = wrapD1();
    const body = [{ order_id: "create", products: [{ sku, qty: 1 }], customer: { email: `${uid("w")}@example.com` } }];
    const first = await post("/v1/orders", body, { env: { DB: db } });
    expect(first.json.results.create_1).toMatchObject({ success: true, subtotal: 10, total: 10 });
    // The customer, the order (whose status is NULL, failing the batch, if anything is refused;
    // RETURNING gives the answer), its lines, the stock of variants and of products, the sold
    // products' and the catalogue's versions, the event.
    expect(counts).toMatchObject({ calls: 1, statementsPerCall: [8] });
    reset();
    const second = await post("/v1/orders", body, { env: { DB: db } });
    expect(second.json.results.create_1).toMatchObject({ success: true, subtotal: 10 });
    expect(counts).toMatchObject({ calls: 1, statementsPerCall: [8] });
    expect((await get(`/v1/products/${p.json.products[0].product_id}`)).json.stock).toBe(3);
  });

  it("writes the order.created event only while an endpoint subscribes, in the same batch", async () => {
    const sku = uid("CE");
    expect((await post("/v1/products", { title: "Evented", sku, price: 1, stock: 5 })).status).toBe(200);
    const items = [{ index: 0, data: { order_id: "create", products: [{ sku, qty: 1 }] } as unknown as OrderInput }];
    const quiet = opts();
    const a = await createCold(coldDb(), items, quiet);
    expect(a?.get(0)?.ok).toBe(true);
    expect(quiet.events).toEqual([]);
    await subscribeAll();
    const loud = opts();
    const b = await createCold(coldDb(), items, loud);
    const id = b?.get(0)?.ok ? (b.get(0) as { orderId: number }).orderId : 0;
    expect(loud.events?.map((e) => e.type)).toEqual(["order.created"]);
    const row = await env.DB.prepare("SELECT order_id FROM events WHERE id = ?")
      .bind(loud.events?.[0].id)
      .first<{ order_id: number }>();
    expect(row?.order_id).toBe(id);
  });

  it.each([
    ["a discount", { discount_add: { amount: 100 } }],
    ["products_add", { products_add: [{ sku: "X", qty: 1 }] }],
    ["products_remove", { products_remove: [{ sku: "X" }] }],
  ])("leaves an order with %s to the read path (not sent)", async (_, extra) => {
    const { db, counts } = wrapD1();
    const items = [
      { index: 0, data: { order_id: "create", products: [{ sku: "X", qty: 1 }], ...extra } as unknown as OrderInput },
    ];
    expect(await createCold(getDb(db), items, opts())).toBeUndefined();
    expect(counts.calls).toBe(0);
  });
});
