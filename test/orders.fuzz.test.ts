import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { call, get, post, uid } from "./helpers";

// Property-based probes of POST /v1/orders (docs/orders.md, "Orders"), inside the Workers runtime, on the real
// local D1. Storage is shared by the whole file, so every run makes its own catalog.

type Of<A> = A extends fc.Arbitrary<infer T> ? T : never;

const PATH_ERROR = /^[A-Za-z_][\w.[\]]*: \S/;
const cents = (money: number) => Math.round(money * 100);

type Counts = { orders: number; lines: number; customers: number; keys: number; maxId: number };
async function counts(): Promise<Counts> {
  const row = await env.DB.prepare(
    `SELECT (SELECT count(*) FROM orders) AS orders, (SELECT count(*) FROM order_lines) AS lines,
       (SELECT count(*) FROM customers) AS customers, (SELECT count(*) FROM idempotency_keys) AS keys,
       (SELECT coalesce(max(id), 0) FROM orders) AS maxId`,
  ).first<Counts>();
  return row as Counts;
}

/** Stock of every product and variant, keyed "p<id>" (products without variants) and "v<id>". */
async function stockMap(): Promise<Map<string, { n: number; noMinus: boolean }>> {
  const [p, v] = await env.DB.batch<{ k: string; n: number; f: number }>([
    env.DB.prepare(
      "SELECT 'p' || id AS k, stock AS n, disable_minusqty AS f FROM products WHERE NOT EXISTS (SELECT 1 FROM variants WHERE product_id = products.id)",
    ),
    env.DB.prepare("SELECT 'v' || id AS k, qty AS n, no_minus AS f FROM variants"),
  ]);
  return new Map([...p.results, ...v.results].map((r) => [r.k, { n: r.n, noMinus: r.f === 1 }]));
}

// ---------------------------------------------------------------------------------------------
// Random valid batches against a random catalog

const money = fc.integer({ min: 0, max: 50_000 }); // cents
const tax = fc.constantFrom(0, 6, 12, 25);
const productSpec = fc.oneof(
  fc.record({
    kind: fc.constant("simple" as const),
    price: money,
    stock: fc.integer({ min: 0, max: 15 }),
    noMinus: fc.boolean(),
    tax,
  }),
  fc.record({
    kind: fc.constant("variants" as const),
    price: money,
    noMinus: fc.boolean(),
    tax,
    variants: fc.array(fc.record({ qty: fc.integer({ min: 0, max: 15 }), price: fc.option(money) }), {
      minLength: 1,
      maxLength: 3,
    }),
  }),
);
const lineSpec = fc.record({
  target: fc.nat(),
  byId: fc.boolean(),
  qty: fc.integer({ min: 1, max: 8 }),
  price: fc.option(fc.integer({ min: 0, max: 20_000 }), { freq: 3 }),
});
const orderSpec = fc.record({
  lines: fc.array(lineSpec, { minLength: 1, maxLength: 4 }),
  add: fc.array(fc.record({ target: fc.nat(), qty: fc.option(fc.integer({ min: 1, max: 3 })) }), { maxLength: 2 }),
  remove: fc.option(fc.nat(), { freq: 4 }),
  shipping: fc.option(fc.integer({ min: 0, max: 10_000 })),
  discount: fc.option(fc.integer({ min: 0, max: 8_000 })),
  email: fc.option(fc.constantFrom("a", "b", "c")),
  // Fields a client must not be able to set: ignored, never stored.
  forged: fc.boolean(),
});

type Target = { key: string; sku: string; productId: number; variantId: number | null; noMinus: boolean };

async function makeCatalog(specs: Of<typeof productSpec>[]): Promise<Target[]> {
  const tag = uid("OF");
  const body = specs.map((s, i) => ({
    title: `Fuzz ${i}`,
    sku: `${tag}-${i}`,
    price: s.price / 100,
    tax_rate: s.tax,
    disable_minusqty: s.noMinus ? "1" : "0",
    ...(s.kind === "simple"
      ? { stock: s.stock }
      : {
          variants: {
            add: s.variants.map((v, j) => ({
              variant_option1_name: "Size",
              variant_option1_value: `s${j}`,
              sku: `${tag}-${i}-${j}`,
              qty: v.qty,
              ...(v.price === null ? {} : { price: v.price / 100 }),
            })),
          },
        }),
  }));
  const r = await post("/v1/products", body);
  expect(r.status, r.text).toBe(200);
  return r.json.products.flatMap((p: any, i: number): Target[] =>
    p.variants.length
      ? p.variants.map((v: any) => ({
          key: `v${v.variant_id}`,
          sku: v.sku,
          productId: p.product_id,
          variantId: v.variant_id,
          noMinus: specs[i].noMinus,
        }))
      : [{ key: `p${p.product_id}`, sku: p.sku, productId: p.product_id, variantId: null, noMinus: specs[i].noMinus }],
  );
}

function orderBody(o: Of<typeof orderSpec>, targets: Target[], tag: string) {
  const pick = (n: number) => targets[n % targets.length];
  const selector = (t: Target, byId: boolean) =>
    byId ? (t.variantId === null ? { product_id: t.productId } : { variant_id: t.variantId }) : { sku: t.sku };
  const body: Record<string, unknown> = {
    order_id: "create",
    products: o.lines.map((l) => ({
      ...selector(pick(l.target), l.byId),
      qty: l.qty,
      ...(l.price === null ? {} : { price: l.price / 100 }),
    })),
  };
  if (o.add.length) {
    body.products_add = o.add.map((a) => ({ sku: pick(a.target).sku, ...(a.qty === null ? {} : { qty: a.qty }) }));
  }
  if (o.remove !== null) body.products_remove = [{ sku: pick(o.remove).sku }];
  if (o.shipping !== null) body.shipping = { price: o.shipping / 100, name: "Post" };
  if (o.discount !== null) body.discount_add = { amount: o.discount / 100 };
  if (o.email !== null) body.customer = { email: `${o.email}-${tag}@example.com` };
  if (o.forged) Object.assign(body, { status: "paid", total: 0.01, subtotal: 0.01, tax: [], order_number: 1 });
  return body;
}

describe("POST /v1/orders with random valid batches", () => {
  it("moves stock by exactly the created orders' lines, totals add up, nothing else is written", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(productSpec, { minLength: 1, maxLength: 4 }),
        fc.array(orderSpec, { minLength: 1, maxLength: 6 }),
        async (specs, orderSpecs) => {
          const targets = await makeCatalog(specs);
          const tag = uid("c");
          const body = orderSpecs.map((o) => orderBody(o, targets, tag));
          const before = await counts();
          const stockBefore = await stockMap();

          const r = await post("/v1/orders", body);
          expect(r.json, r.text).toBeTypeOf("object");
          const results = body.map((_, i) => r.json.results[`create_${i + 1}`]);
          const created = results.filter((x) => x.success);
          expect(r.status).toBe(created.length ? 200 : 400);
          for (const x of results) {
            if (x.success) continue;
            expect(x.errors.length).toBeGreaterThan(0);
            for (const e of x.errors) expect(e).toMatch(PATH_ERROR);
          }

          // No order exists that the response did not report, and no line of a failed one.
          const after = await counts();
          const ids: number[] = created.map((x) => x.order_id);
          const { results: newIds } = await env.DB.prepare("SELECT id FROM orders WHERE id > ? ORDER BY id")
            .bind(before.maxId)
            .all<{ id: number }>();
          expect(newIds.map((x) => x.id)).toEqual([...ids].sort((a, b) => a - b));
          expect(after.orders - before.orders).toBe(created.length);

          const { results: lines } = await env.DB.prepare(
            "SELECT * FROM order_lines WHERE order_id IN (SELECT value FROM json_each(?)) ORDER BY order_id, position",
          )
            .bind(JSON.stringify(ids))
            .all<any>();
          expect(after.lines - before.lines).toBe(lines.length);

          // Stock before minus stock after is the quantity the created orders took, item by item.
          const taken = new Map<string, number>();
          for (const l of lines) {
            const key = l.variant_id === null ? `p${l.product_id}` : `v${l.variant_id}`;
            taken.set(key, (taken.get(key) ?? 0) + l.qty);
          }
          const stockAfter = await stockMap();
          for (const t of targets) {
            const b = stockBefore.get(t.key)?.n as number;
            const a = stockAfter.get(t.key)?.n as number;
            expect(b - a, t.key).toBe(taken.get(t.key) ?? 0);
            if (t.noMinus) expect(a, t.key).toBeGreaterThanOrEqual(0);
          }

          // Each created order: lines + shipping - discount, in the answer, the DB and GET.
          for (const x of created) {
            const row = await env.DB.prepare("SELECT * FROM orders WHERE id = ?").bind(x.order_id).first<any>();
            const own = lines.filter((l) => l.order_id === x.order_id);
            const subtotal = own.reduce((s, l) => s + l.qty * l.unit_price, 0);
            expect(own.length).toBeGreaterThan(0);
            expect(row.status).toBe("unpaid");
            expect(row.subtotal).toBe(subtotal);
            expect(row.total).toBe(subtotal + row.shipping_price - row.discount);
            expect(row.total).toBeGreaterThanOrEqual(0);
            expect([cents(x.subtotal), cents(x.shipping), cents(x.discount), cents(x.total)]).toEqual([
              row.subtotal,
              row.shipping_price,
              row.discount,
              row.total,
            ]);
            const g = await get(`/v1/orders/${x.order_id}`);
            expect(g.status).toBe(200);
            expect(g.json.status).toBe("unpaid");
            const gLines = g.json.products.reduce((s: number, l: any) => s + cents(l.price) * l.qty, 0);
            expect(cents(g.json.total)).toBe(gLines + cents(g.json.shipping.price) - cents(g.json.discount));
            expect(cents(g.json.total)).toBe(row.total);
            expect(g.json.products).toHaveLength(own.length);
            // Tax parts never exceed what was paid for the lines.
            const taxSum = g.json.tax.reduce((s: number, t: any) => s + cents(t.amount), 0);
            expect(taxSum).toBeLessThanOrEqual(subtotal);
          }
        },
      ),
      { numRuns: 60, seed: 20261122 },
    );
  }, 60_000);
});

// ---------------------------------------------------------------------------------------------
// Random corruptions of a valid body

// biome-ignore lint/suspicious/noControlCharactersInRegex: filtering control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

const hostile = fc.oneof(
  fc.constant(null),
  fc.constant(undefined),
  fc.boolean(),
  fc.double(),
  fc.constantFrom(1e308, -1e308, 2 ** 53 + 1, -1, 0, -0.001, 1.005, Number.MAX_SAFE_INTEGER, 100_001),
  fc.string({ maxLength: 300 }),
  fc.string({ unit: "grapheme", minLength: 200, maxLength: 400 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom("\u0000", "a\u0007b", "x\u0085y", "\ud800", "1e3", "+5", "0x10", " ", "NaN", "create ", "__proto__"),
  fc.constantFrom("x".repeat(256), "x".repeat(10_001), "é".repeat(300)),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 3 }),
  fc.constant(JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}}')),
);

const PATHS: (string | number)[][] = [
  ["order_id"],
  ["status"],
  ["products"],
  ["products", 0],
  ["products", 0, "qty"],
  ["products", 0, "sku"],
  ["products", 0, "price"],
  ["products", 1, "variant_id"],
  ["products", 1, "product_id"],
  ["customer"],
  ["customer", "email"],
  ["customer", "phone"],
  ["customer", "note"],
  ["customer", "type"],
  ["customer", "login_create"],
  ["customer", "billing_details"],
  ["customer", "billing_details", "country"],
  ["customer", "shipping_details", "zipcode"],
  ["payment", "currency"],
  ["payment", "log"],
  ["shipping", "id"],
  ["shipping", "price"],
  ["discount_add"],
  ["discount_add", "amount"],
  ["discount_remove"],
  ["products_add"],
  ["products_add", 0, "qty"],
  ["products_remove", 0, "variant_id"],
  ["metadata"],
];

function validOrder(sku: string, variantId: number, email: string) {
  return {
    order_id: "create",
    customer: {
      type: "consumer",
      email,
      phone: "+46 70 123 45 67",
      note: "ring twice",
      login_create: 0,
      billing_details: { firstname: "Åsa", city: "Malmö", country: "SE" },
      shipping_details: { zipcode: "211 11", country: "se" },
    },
    payment: { method: "card", currency: "SEK", log: "ok" },
    shipping: { id: 2, name: "Post", price: 49 },
    products: [
      { sku, qty: 1, price: 10 },
      { variant_id: variantId, qty: 2 },
    ],
    products_add: [{ sku, qty: 1 }],
    products_remove: [{ sku: "NOT-IN-ORDER", variant_id: null }],
    discount_add: { amount: 5 },
    discount_remove: false,
    metadata: { channel: "fuzz" },
  };
}

function setPath(target: any, path: (string | number)[], value: unknown, drop: boolean) {
  let o = target;
  for (const k of path.slice(0, -1)) o = o[k];
  const last = path[path.length - 1];
  if (drop) delete o[last];
  else o[last] = value;
}

const rawEdit = fc.oneof(
  fc.constant({ kind: "none" as const }),
  fc.record({
    kind: fc.constant("dupkey" as const),
    value: fc.constantFrom('"update"', "1", "null", '"create"'),
    last: fc.boolean(),
  }),
  fc.record({ kind: fc.constant("deep" as const), depth: fc.integer({ min: 20, max: 40 }) }),
  fc.constant({ kind: "proto" as const }),
);

async function fullSnapshot() {
  const tables = ["orders", "order_lines", "customers", "products", "variants", "idempotency_keys"];
  const rs = await env.DB.batch(tables.map((t) => env.DB.prepare(`SELECT * FROM ${t} ORDER BY rowid`)));
  return rs.map((x) => x.results);
}

describe("POST /v1/orders under random corruption", () => {
  it("always answers JSON below 500; refused elements name field paths; nothing created means nothing written", async () => {
    const sku = uid("OC");
    const p = await post("/v1/products", [
      { title: "Corrupt", price: 10, sku, stock: 1_000_000, disable_minusqty: 1 },
      {
        title: "Corrupt variants",
        price: 20,
        variants: { add: [{ variant_option1_name: "Size", variant_option1_value: "M", qty: 1_000_000 }] },
      },
    ]);
    expect(p.status).toBe(200);
    const variantId = p.json.products[1].variants[0].variant_id;
    let seq = 0;

    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...PATHS),
        hostile,
        fc.boolean(),
        rawEdit,
        fc.boolean(),
        async (path, value, drop, edit, withGood) => {
          const email = `fuzz${++seq}@example.com`;
          const order = validOrder(sku, variantId, email);
          setPath(order, path, value, drop);
          // Sometimes a valid element beside the corrupt one: it must be created on its own.
          const good = validOrder(sku, variantId, `good${seq}@example.com`);
          let text = JSON.stringify(order);
          if (edit.kind === "dupkey") {
            // A duplicate key in the text: JSON.parse keeps the last one.
            text = edit.last
              ? `${text.slice(0, -1)},"order_id":${edit.value}}`
              : `{"order_id":${edit.value},${text.slice(1)}`;
          } else if (edit.kind === "deep") {
            text = text.replace(
              '"metadata":{"channel":"fuzz"}',
              `"metadata":${'{"a":'.repeat(edit.depth)}1${"}".repeat(edit.depth)}`,
            );
          } else if (edit.kind === "proto") {
            text = text.replace(
              '"metadata":{"channel":"fuzz"}',
              '"metadata":{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}',
            );
          }
          const elements = withGood ? 2 : 1;
          text = withGood ? `[${text},${JSON.stringify(good)}]` : `[${text}]`;

          const before = await fullSnapshot();
          const r = await call("POST", "/v1/orders", { raw: text });
          expect(r.json, r.text).toBeTypeOf("object");
          expect(r.headers.get("content-type")).toMatch(/^application\/json/);
          expect(r.status, r.text).toBeLessThan(500);
          expect(({} as Record<string, unknown>).polluted).toBeUndefined();

          if (!r.json.results) {
            // Refused before any element was looked at (nesting, shape): the envelope.
            expect([400, 413]).toContain(r.status);
            expect(r.json.code).toBe(r.status);
            expect(r.json.error).toBeTypeOf("string");
            expect(await fullSnapshot()).toEqual(before);
            return;
          }
          const results = Object.values(r.json.results) as any[];
          expect(results).toHaveLength(elements);
          for (const x of results) {
            if (x.success) continue;
            expect(x.errors.length).toBeGreaterThan(0);
            for (const e of x.errors) {
              // A corrupt element as a whole (not an object) has no field to name.
              if (path.length === 0) continue;
              expect(e).toMatch(PATH_ERROR);
            }
          }
          if (withGood) expect(results[1].success, JSON.stringify(results[1])).toBe(true);
          const created = results.filter((x) => x.success);
          expect(r.status).toBe(created.length ? 200 : 400);
          if (!created.length) {
            expect(await fullSnapshot()).toEqual(before);
            return;
          }
          // What was created reads back as sent: metadata as plain data, text not mangled.
          const first = results[0];
          if (first.success) {
            const g = await get(`/v1/orders/${first.order_id}`);
            expect(g.status).toBe(200);
            expect(g.json.status).toBe("unpaid");
            const sent = JSON.parse(text)[0];
            if (sent.metadata !== undefined) expect(g.json.metadata).toEqual(sent.metadata);
            if (edit.kind === "proto") expect(Object.hasOwn(g.json.metadata, "__proto__")).toBe(true);
            if (typeof sent.customer?.note === "string" && sent.customer.note.trim()) {
              expect(g.json.customer.note).toBe(sent.customer.note);
            }
            if (typeof sent.customer?.email === "string" && !CONTROL.test(sent.customer.email)) {
              expect(g.json.customer.email).toBe(sent.customer.email.trim());
            }
          }
        },
      ),
      { numRuns: 250, seed: 20261123 },
    );
  }, 60_000);
});
