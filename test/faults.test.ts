import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { wrapD1 } from "./d1-wrap";
import { call, get, post, put, uid } from "./helpers";

// Fault injection (issue 5): for every D1 call a write request makes, fail that call. The answer
// must be 503 with Retry-After and the envelope, and the store must be unchanged (every change of
// a request is one batch, docs/security.md, "Guarantees"). With an Idempotency-Key, the retry must then take effect
// exactly once, and a further retry must replay it.

const TABLES = ["products", "variants", "orders", "order_lines", "customers", "skus", "idempotency_keys"] as const;
type Snapshot = Record<(typeof TABLES)[number], Record<string, unknown>[]>;

/** Every row of every table the write paths touch, in a stable order. */
async function snapshot(): Promise<Snapshot> {
  const rs = await env.DB.batch(TABLES.map((t) => env.DB.prepare(`SELECT * FROM ${t} ORDER BY rowid`)));
  return Object.fromEntries(TABLES.map((t, i) => [t, rs[i].results])) as Snapshot;
}

const keyHeader = (keyed: boolean): Record<string, string> => (keyed ? { "idempotency-key": uid("key") } : {});

const count = (s: Snapshot) => Object.fromEntries(TABLES.map((t) => [t, s[t].length]));

function expect503(r: Awaited<ReturnType<typeof call>>) {
  expect(r.status, r.text).toBe(503);
  expect(r.headers.get("retry-after")).toBe("1");
  expect(r.headers.get("content-type")).toMatch(/^application\/json/);
  expect(r.json).toEqual({ code: 503, error: "the database is unavailable, retry shortly" });
}

/** How many D1 calls `send` makes on a healthy database (it runs against a fresh fixture). */
async function callsOf(send: (db: D1Database) => Promise<unknown>) {
  const { db, counts } = wrapD1();
  await send(db);
  expect(counts.calls).toBeGreaterThan(0);
  return counts.calls;
}

// ---------------------------------------------------------------------------------------------
// POST /v1/orders

async function orderFixture() {
  const a = uid("FA");
  const b = uid("FB");
  const r = await post("/v1/products", [
    { title: "Fault simple", price: 20, sku: a, stock: 10, disable_minusqty: 1, tax_rate: 25 },
    {
      title: "Fault variants",
      price: 30,
      sku: b,
      tax_rate: 12,
      variants: {
        add: ["S", "M"].map((v) => ({
          variant_option1_name: "Size",
          variant_option1_value: v,
          sku: `${b}-${v}`,
          qty: 5,
        })),
      },
    },
  ]);
  expect(r.status).toBe(200);
  const body = [
    {
      order_id: "create",
      customer: { email: `${a.toLowerCase()}@example.com`, newsletter_subscribe: 1 },
      products: [
        { sku: a, qty: 2 },
        { sku: `${b}-S`, qty: 1 },
      ],
    },
    {
      order_id: "create",
      shipping: { price: 49 },
      discount_add: { amount: 10 },
      products: [{ sku: `${b}-M`, qty: 3 }],
    },
    // Fails on stock: the element is answered, nothing of it is written.
    { order_id: "create", products: [{ sku: a, qty: 1000 }] },
  ];
  const stock = async () => {
    const rows = await env.DB.prepare(
      "SELECT sku, stock AS n FROM products WHERE sku = ?1 UNION ALL SELECT sku, qty FROM variants WHERE sku IN (?2, ?3)",
    )
      .bind(a, `${b}-S`, `${b}-M`)
      .all<{ sku: string; n: number }>();
    return Object.fromEntries(rows.results.map((x) => [x.sku.replace(a, "A").replace(b, "B"), x.n]));
  };
  return { body, stock };
}

/** What a successful run of the fixture's body changes: two orders, three lines, one customer. */
async function expectFullyCreated(
  r: Awaited<ReturnType<typeof call>>,
  before: Snapshot,
  stock: () => Promise<unknown>,
  keyed: boolean,
) {
  expect(r.status, r.text).toBe(200);
  expect(r.json.results.create_1).toMatchObject({ success: true, subtotal: 70, total: 70 });
  expect(r.json.results.create_2).toMatchObject({
    success: true,
    subtotal: 90,
    shipping: 49,
    discount: 10,
    total: 129,
  });
  expect(r.json.results.create_3.success).toBe(false);
  const after = await snapshot();
  expect(count(after)).toEqual({
    ...count(before),
    orders: before.orders.length + 2,
    order_lines: before.order_lines.length + 3,
    customers: before.customers.length + 1,
    idempotency_keys: before.idempotency_keys.length + (keyed ? 1 : 0),
  });
  expect(await stock()).toEqual({ A: 8, "B-S": 4, "B-M": 2 });
}

describe("POST /v1/orders when D1 fails", () => {
  it.each([
    ["without", false],
    ["with", true],
  ])(
    "answers 503 and writes nothing for every failing call, %s an Idempotency-Key",
    async (_, keyed) => {
      const calls = await callsOf(async (db) => {
        const { body } = await orderFixture();
        return post("/v1/orders", body, { env: { DB: db }, headers: keyHeader(keyed) });
      });
      for (let n = 1; n <= calls; n++) {
        const { body, stock } = await orderFixture();
        const headers = keyHeader(keyed);
        const before = await snapshot();
        const { db } = wrapD1({ failCall: n });
        expect503(await post("/v1/orders", body, { env: { DB: db }, headers }));
        expect(await snapshot(), `call ${n} of ${calls}`).toEqual(before);
        expect(await stock()).toEqual({ A: 10, "B-S": 5, "B-M": 5 });

        // The client retries the same request: it takes effect once.
        const retry = await post("/v1/orders", body, { headers });
        await expectFullyCreated(retry, before, stock, keyed);
        if (!keyed) continue;
        const settled = await snapshot();
        const again = await post("/v1/orders", body, { headers });
        expect(again.headers.get("idempotent-replayed")).toBe("true");
        expect(again.status).toBe(200);
        expect(again.json).toEqual(retry.json);
        expect(await snapshot()).toEqual(settled);
        const order = await get(`/v1/orders/${retry.json.results.create_2.order_id}`);
        expect(order.json.total).toBe(129);
      }
    },
    30_000,
  );

  it("answers 503 and writes nothing when a replay of a keyed request fails at any call", async () => {
    const { body, stock } = await orderFixture();
    const headers = { "idempotency-key": uid("key") };
    const before = await snapshot();
    const first = await post("/v1/orders", body, { headers });
    await expectFullyCreated(first, before, stock, true);
    const settled = await snapshot();
    // A retry plans, loses the race for its key at the write, then reads the stored answer.
    const calls = await callsOf((db) => post("/v1/orders", body, { env: { DB: db }, headers }));
    expect(calls).toBeGreaterThanOrEqual(2);
    for (let n = 1; n <= calls; n++) {
      const { db } = wrapD1({ failCall: n });
      expect503(await post("/v1/orders", body, { env: { DB: db }, headers }));
      expect(await snapshot(), `call ${n} of ${calls}`).toEqual(settled);
    }
    const again = await post("/v1/orders", body, { headers });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json).toEqual(first.json);
    expect(await snapshot()).toEqual(settled);
  });
});

// ---------------------------------------------------------------------------------------------
// PUT /v1/products

async function productFixture() {
  const sku = uid("FP");
  const other = uid("FO");
  const r = await post("/v1/products", [
    {
      title: "Before",
      price: 10,
      sku,
      disable_minusqty: 0,
      metadata: { v: 1 },
      variants: {
        add: ["S", "M", "L"].map((v) => ({
          variant_option1_name: "Size",
          variant_option1_value: v,
          sku: `${sku}-${v}`,
          qty: 3,
        })),
      },
    },
    { title: "Other before", price: 5, sku: other, stock: 7 },
  ]);
  expect(r.status).toBe(200);
  const [p, o] = r.json.products;
  // Renames, syncs (keeps S with a new qty, keeps M, deletes L, creates XL), turns the floor on,
  // and changes a second product in the same request.
  const body = [
    {
      sku,
      title: "After",
      price: 12,
      disable_minusqty: 1,
      metadata: { v: 2 },
      variants: {
        sync: [
          { variant_option1_name: "Size", variant_option1_value: "S", sku: `${sku}-S`, qty: 9 },
          { variant_option1_name: "Size", variant_option1_value: "M" },
          { variant_option1_name: "Size", variant_option1_value: "XL", sku: `${sku}-XL`, qty: 1 },
        ],
      },
    },
    { product_id: o.product_id, stock: 2, sku: `${other}-NEW` },
  ];
  return { body, id: p.product_id as number, otherId: o.product_id as number, sku, other };
}

async function expectFullyUpdated(r: Awaited<ReturnType<typeof call>>, f: Awaited<ReturnType<typeof productFixture>>) {
  expect(r.status, r.text).toBe(200);
  expect(r.json.success).toBe(2);
  const p = (await get(`/v1/products/${f.id}`)).json;
  expect(p).toMatchObject({ title: "After", price: 12, disable_minusqty: "1", metadata: { v: 2 } });
  expect(p.variants.map((v: { sku: string; qty: number }) => [v.sku, v.qty])).toEqual([
    [`${f.sku}-S`, 9],
    [`${f.sku}-M`, 3],
    [`${f.sku}-XL`, 1],
  ]);
  const o = (await get(`/v1/products/${f.otherId}`)).json;
  expect(o).toMatchObject({ stock: 2, sku: `${f.other}-NEW` });
  const skus = await env.DB.prepare("SELECT count(*) AS n FROM skus WHERE sku = ?1 OR sku = ?2 OR sku = ?3")
    .bind(`${f.sku}-L`, f.other, `${f.other}-NEW`)
    .first<{ n: number }>();
  expect(skus?.n).toBe(1);
}

describe("PUT /v1/products when D1 fails", () => {
  it.each([
    ["without", false],
    ["with", true],
  ])(
    "answers 503 and changes nothing for every failing call, %s an Idempotency-Key",
    async (_, keyed) => {
      const calls = await callsOf(async (db) => {
        const f = await productFixture();
        return put("/v1/products", f.body, {
          env: { DB: db },
          headers: keyHeader(keyed),
        });
      });
      for (let n = 1; n <= calls; n++) {
        const f = await productFixture();
        const headers = keyHeader(keyed);
        const before = await snapshot();
        const { db } = wrapD1({ failCall: n });
        expect503(await put("/v1/products", f.body, { env: { DB: db }, headers }));
        expect(await snapshot(), `call ${n} of ${calls}`).toEqual(before);

        const retry = await put("/v1/products", f.body, { headers });
        await expectFullyUpdated(retry, f);
        if (!keyed) continue;
        const settled = await snapshot();
        const again = await put("/v1/products", f.body, { headers });
        expect(again.headers.get("idempotent-replayed")).toBe("true");
        expect(again.status).toBe(200);
        expect(again.json.success).toBe(2);
        expect(await snapshot()).toEqual(settled);
      }
    },
    30_000,
  );

  it("keeps each item whole when items naming one product take two rounds and the second fails", async () => {
    // An item naming a product again after one that gives it a new SKU is applied in a round
    // (read + write batch) of its own, so a fault in the second round leaves the first item
    // applied: whole items, never part of one.
    const f = await productFixture();
    const body = (id: number) => [
      { product_id: id, title: "Round 1", sku: uid("R") },
      { product_id: id, title: "Round 2", stock: 1 },
    ];
    const calls = await callsOf((db) => put("/v1/products", body(f.otherId), { env: { DB: db } }));
    const g = await productFixture();
    const { db } = wrapD1({ failCall: calls });
    expect503(await put("/v1/products", body(g.otherId), { env: { DB: db } }));
    expect((await get(`/v1/products/${g.otherId}`)).json).toMatchObject({ title: "Round 1", stock: 7 });
  });

  // A PUT naming one product in two items runs in two rounds (two batches): the key is claimed
  // in the first, so a fault in the second leaves the first applied once and its retries told so.
  it("a keyed PUT stopped between its rounds is never applied twice; retries are told it stopped partway", async () => {
    const make = async () =>
      (
        await post("/v1/products", {
          title: "Rounds",
          price: 1,
          variants: { add: [{ variant_option1_name: "Size", variant_option1_value: "a" }] },
        })
      ).json.products[0];
    const p = await make();
    const body = (id: number) => [
      { product_id: id, variants: { add: [{ variant_option1_value: "b" }] } },
      { product_id: id, title: "two" },
    ];
    const calls = await callsOf((db) =>
      put("/v1/products", body(p.product_id), { env: { DB: db }, headers: { "idempotency-key": uid("key") } }),
    );
    const q = await make();
    const headers = { "idempotency-key": uid("key") };
    const { db } = wrapD1({ failCall: calls });
    expect503(await put("/v1/products", body(q.product_id), { env: { DB: db }, headers }));
    const retry = await put("/v1/products", body(q.product_id), { headers });
    expect(retry.status).toBe(409);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.json.error).toMatch(/^a request with this Idempotency-Key stopped partway/);
    const now = (await call("GET", `/v1/products/${q.product_id}`)).json;
    expect(now.variants.map((v: { variant_option1_value: string }) => v.variant_option1_value)).toEqual(["a", "b"]);
    expect(now.title).toBe("Rounds");
  });

  it("a keyed PUT of several rounds replays its whole answer, and concurrent copies apply once", async () => {
    const p = (
      await post("/v1/products", {
        title: "Rounds",
        price: 1,
        variants: { add: [{ variant_option1_name: "Size", variant_option1_value: "a" }] },
      })
    ).json.products[0];
    const body = [
      { product_id: p.product_id, variants: { add: [{ variant_option1_value: "c" }] } },
      { product_id: p.product_id, title: "after" },
    ];
    const headers = { "idempotency-key": uid("key") };
    const answers = await Promise.all(Array.from({ length: 5 }, () => put("/v1/products", body, { headers })));
    expect(answers.filter((a) => a.status === 200 && !a.headers.get("idempotent-replayed"))).toHaveLength(1);
    const replay = await put("/v1/products", body, { headers });
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.json.success).toBe(2);
    const now = (await call("GET", `/v1/products/${p.product_id}`)).json;
    expect(now.variants).toHaveLength(2);
    expect(now.title).toBe("after");
  });
});
