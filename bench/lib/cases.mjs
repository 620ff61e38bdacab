// The requests of every case, and the probe that tells whether a case can be measured.
import { request, variantEntries } from "./requests.mjs";
import { LARGE_ORDERS, MAX_VARIANTS, ORDER_PRODUCTS, paidWindow, SYNC_SIZES, WORST_ORDERS } from "./seed.mjs";

/**
 * @typedef {import("./requests.mjs").Target} Target
 * @typedef {{
 *   id: string, label: string, method: string, path: string | ((i: number) => string),
 *   body?: (i: number) => string,
 *   baseline?: "bare" | "batch" | "status-batch" | "cancel-batch",
 *   d1Baseline?: string,
 *   load: boolean,
 *   cpuIterations: number,
 *   profile?: boolean,
 *   connections?: number,
 *   contention?: boolean,
 *   heap?: boolean,
 *   bySize?: boolean,
 *   requests?: number,
 *   headers?: Record<string, string>,
 *   status?: number,
 *   verify?: (t: Target, invocations: number) => Promise<{ ok: boolean, text: string }>,
 * }} Case
 *
 * `path`: a function of the request's index (-1 for the probe and the load phase) where each
 * request must differ, e.g. to miss the edge cache every time. `d1Baseline`: the hand-written plain-SQL
 * case (bench/worker/plain.ts) whose D1 SQL time the "D1 ratio" column divides this case's by. `load`: also run under autocannon (req/s, and the ratio to `baseline`). `profile` (default
 * true): workerd CPU per request. `cpuIterations`: requests of the optional Node CPU phase
 * (`--node`). `connections`: autocannon connections (default 8). `contention`: a load case that
 * reports its share of 503 answers (writers losing the race) instead of a ratio. `heap`: also its wall time,
 * answer bytes and D1 counts after the body (a streamed answer), and the isolate's heap in 5 more
 * requests. `requests`: profiled requests, when fewer than the bench's (a case of seconds). `bySize`:
 * a page whose CPU grows with its size, never refused: where it passes 10 ms is reported, not missed. `verify`: run
 * after the case's profiled requests, with how many requests it served (probe included); says
 * whether they all did the work the case claims.
 */

/**
 * The path of a case's request `i` (see Case).
 * @param {Case} c
 * @param {number} i
 */
export const pathOf = (c, i) => (typeof c.path === "function" ? c.path(i) : c.path);

/** @param {number} orders @param {number} lines */
function orderBody(orders, lines) {
  const body = [];
  let k = 0;
  for (let o = 0; o < orders; o++) {
    const products = [];
    for (let l = 0; l < lines; l++, k++) {
      const p = k % ORDER_PRODUCTS;
      products.push({ sku: `O${p}-${["S", "M", "L"][Math.floor(k / ORDER_PRODUCTS) % 3]}`, qty: 1 + (l % 2) });
    }
    body.push({
      order_id: "create",
      products,
      customer: {
        email: `bench${o}@example.com`,
        type: "consumer",
        billing_details: {
          firstname: "Bench",
          lastname: "Mark",
          address: "Gatan 1",
          city: "Stockholm",
          zipcode: "11122",
          country: "SE",
        },
      },
      payment: { method: "invoice", currency: "SEK" },
      shipping: { id: 1, name: "Postnord", price: 49 },
    });
  }
  return JSON.stringify(body);
}

/**
 * Every case, in the order they run and print.
 * @param {{ syncIds: Record<number, number>, syncVariantIds: Record<number, number[]>, pageBig: number[], pageOffset: number, statusOrder: number, baselineStatusOrder: number,
 *   cancelOrders: number[], baselineCancelOrders: number[], secretKey: string, publishableKey: string }} ids
 * @returns {Case[]}
 */
export function cases(ids) {
  const order1x3 = orderBody(1, 3);
  const order20x5 = orderBody(20, 5);
  /** @param {number} n */
  const sync = (n) => {
    // Two bodies that differ in every variant's qty, alternated, so every request changes all n.
    const a = JSON.stringify({ product_id: ids.syncIds[n], variants: { sync: variantEntries(`S${n}`, n, 11) } });
    const b = JSON.stringify({ product_id: ids.syncIds[n], variants: { sync: variantEntries(`S${n}`, n, 12) } });
    return /** @param {number} i */ (i) => (i % 2 ? a : b);
  };
  /** @type {Case[]} */
  const list = [
    {
      id: "bare",
      label: "baseline: bare authenticated route (no D1)",
      method: "GET",
      path: "/__bench/bare",
      load: true,
      cpuIterations: 300,
    },
    {
      id: "batch",
      label: "baseline: hand-written 1x3 order batch",
      method: "POST",
      path: "/__bench/order-batch",
      body: () => order1x3,
      load: true,
      cpuIterations: 200,
    },
    {
      id: "orders-1x3",
      label: "POST /v1/orders 1 order x 3 lines",
      method: "POST",
      path: "/v1/orders",
      body: () => order1x3,
      baseline: "batch",
      load: true,
      cpuIterations: 200,
    },
    {
      // The same order with a stored secret key: verified once per isolate, then no D1 query of its own.
      id: "orders-1x3-key",
      label: "POST /v1/orders 1 order x 3 lines, stored secret key",
      method: "POST",
      path: "/v1/orders",
      body: () => order1x3,
      headers: { authorization: `Bearer ${ids.secretKey}` },
      load: false,
      cpuIterations: 200,
    },
    {
      id: "get-product-key",
      label: "GET /v1/products/{id} (10 variants), stored secret key",
      method: "GET",
      path: `/v1/products/${ids.syncIds[10]}`,
      headers: { authorization: `Bearer ${ids.secretKey}` },
      load: false,
      cpuIterations: 100,
    },
    {
      // After the probe, every read is a hit of the colo's cache under the catalog version.
      id: "catalog-pk",
      // A page of one chunk: a streamed page is not kept in the cache (docs/keys.md).
      label: "GET /v1/products?limit=40&offset=100&include_details=true, publishable key, cached",
      method: "GET",
      path: "/v1/products?limit=40&offset=100&include_details=true",
      headers: { authorization: "", "x-publishable-key": ids.publishableKey },
      load: false,
      cpuIterations: 50,
    },
    {
      id: "orders-20x5",
      label: "POST /v1/orders 20 orders x 5 lines",
      method: "POST",
      path: "/v1/orders",
      body: () => order20x5,
      baseline: "batch",
      load: true,
      cpuIterations: 40,
    },
    {
      id: "stock",
      label: "PUT /v1/products stock by SKU",
      method: "PUT",
      path: "/v1/products",
      body: (i) => JSON.stringify({ sku: "STK-1", stock: 5 + (i % 2) }),
      baseline: "batch",
      load: true,
      cpuIterations: 200,
    },
    {
      // A stock tool's batch: one {sku, stock} item per variant of the 100-variant product.
      id: "stock-100",
      label: "PUT /v1/products stock-tool batch, 100 SKUs of one product",
      method: "PUT",
      path: "/v1/products",
      body: (i) => JSON.stringify(Array.from({ length: 100 }, (_, k) => ({ sku: `S100-${k}`, stock: 20 + (i % 2) }))),
      baseline: "batch",
      load: true,
      cpuIterations: 60,
    },
  ];
  // The usual stock-tool batch (docs/products.md, "Stock tools"): 100 items, each the stock of one SKU,
  // spread over the 40 order products (several SKUs of one product), stock alternating so every
  // request changes all 100. Stock stays far above what the order cases take.
  list.push({
    id: "stock-batch",
    label: "PUT /v1/products stock-tool batch, 100 SKUs",
    method: "PUT",
    path: "/v1/products",
    body: (i) =>
      JSON.stringify(
        Array.from({ length: 100 }, (_, k) => ({
          sku: `O${k % ORDER_PRODUCTS}-${["S", "M", "L"][Math.floor(k / ORDER_PRODUCTS)]}`,
          stock: 1_000_000 + (i % 2),
        })),
      ),
    baseline: "batch",
    load: false,
    cpuIterations: 20,
  });
  // The same two requests as the first of a fresh isolate meets them: /__bench/cold/ hands the
  // store a D1 binding object it has never seen, so per-isolate caches keyed on it are empty.
  list.push(
    {
      id: "orders-1x3-cold",
      label: "POST /v1/orders 1 x 3, cold isolate cache",
      method: "POST",
      path: "/__bench/cold/v1/orders",
      body: () => order1x3,
      baseline: "batch",
      load: true,
      cpuIterations: 100,
    },
    {
      id: "stock-cold",
      label: "PUT /v1/products stock by SKU, cold isolate cache",
      method: "PUT",
      path: "/__bench/cold/v1/products",
      body: (i) => JSON.stringify({ sku: "STK-1", stock: 5 + (i % 2) }),
      baseline: "batch",
      load: true,
      cpuIterations: 100,
    },
  );
  // PUT /v1/orders: a status change flips one order between paid and unpaid (every request a real
  // change); a cancel cancels a different order each time, with restock of its 3 lines, until the
  // CANCEL_ORDERS seeded ones are used up (later requests are already-cancelled no-ops running the
  // same statements). Each has a hand-written baseline running the same SQL in one batch on its
  // own orders.
  /** @param {number} id */
  const flip = (id) => /** @param {number} i */ (i) =>
    JSON.stringify([{ order_id: id, status: i % 2 ? "unpaid" : "paid" }]);
  /** @param {number[]} ids */
  const cancelOne = (ids) => /** @param {number} i */ (i) =>
    JSON.stringify([{ order_id: ids[i % ids.length], status: "cancelled" }]);
  list.push(
    {
      id: "status-batch",
      label: "baseline: hand-written order status change batch",
      method: "PUT",
      path: "/__bench/order-status",
      body: flip(ids.baselineStatusOrder),
      load: true,
      cpuIterations: 200,
    },
    {
      id: "orders-status",
      label: "PUT /v1/orders status change",
      method: "PUT",
      path: "/v1/orders",
      body: flip(ids.statusOrder),
      baseline: "status-batch",
      load: true,
      cpuIterations: 200,
    },
    {
      id: "cancel-batch",
      label: "baseline: hand-written order cancel batch",
      method: "PUT",
      path: "/__bench/order-status",
      body: cancelOne(ids.baselineCancelOrders),
      load: true,
      cpuIterations: 200,
    },
    {
      id: "orders-cancel",
      label: "PUT /v1/orders cancel with restock",
      method: "PUT",
      path: "/v1/orders",
      body: cancelOne(ids.cancelOrders),
      baseline: "cancel-batch",
      load: true,
      cpuIterations: 200,
    },
  );
  for (const n of SYNC_SIZES) {
    list.push({
      id: `sync-${n}`,
      label: `PUT /v1/products sync ${n} variants`,
      method: "PUT",
      path: "/v1/products",
      body: sync(n),
      // CPU only: a ratio to the bare route says nothing here, and writers racing on one product
      // are the contention rows.
      load: false,
      cpuIterations: n <= 100 ? 60 : 10,
      ...(n === MAX_VARIANTS ? { d1Baseline: `d1-sync-${n}` } : {}),
    });
  }
  // The plain SQL of the largest sync (bench/worker/plain.ts), beside it: the D1 baseline.
  list.push({
    id: `d1-sync-${MAX_VARIANTS}`,
    label: `baseline: hand-written sync of ${MAX_VARIANTS} variants (plain SQL, D1 baseline)`,
    method: "PUT",
    path: "/__bench/d1/sync",
    body: sync(MAX_VARIANTS),
    load: false,
    cpuIterations: 0,
  });
  // The same sync with a product field beside it (the title it has): one more statement of the SQL
  // plan's batch since the sixteenth round (the id keeps its name from when the JavaScript plan took it).
  list.push({
    id: `sync-${MAX_VARIANTS}-js`,
    label: `PUT /v1/products sync ${MAX_VARIANTS} variants with the product's title`,
    method: "PUT",
    path: "/v1/products",
    body: (() => {
      const plain = sync(MAX_VARIANTS);
      const titled = [0, 1].map((i) => JSON.stringify({ title: `Sync ${MAX_VARIANTS}`, ...JSON.parse(plain(i)) }));
      return /** @param {number} i */ (i) => titled[i % 2];
    })(),
    load: false,
    cpuIterations: 10,
  });
  // The same sync refused: one entry takes the SKU of another product (the sync-10 one's own),
  // which only the SKU registry's constraint finds; the answer words it (`status`: 409).
  list.push({
    id: `sync-${MAX_VARIANTS}-refused`,
    label: `PUT /v1/products sync ${MAX_VARIANTS} variants, refused (another product's SKU)`,
    method: "PUT",
    path: "/v1/products",
    body: (() => {
      const taken = [11, 12].map((qty) => {
        const entries = variantEntries(`S${MAX_VARIANTS}`, MAX_VARIANTS, qty);
        entries[MAX_VARIANTS / 2].sku = `SYNC${SYNC_SIZES[0]}`;
        return JSON.stringify({ product_id: ids.syncIds[MAX_VARIANTS], variants: { sync: entries } });
      });
      return /** @param {number} i */ (i) => taken[i % 2];
    })(),
    status: 409,
    load: false,
    cpuIterations: 0,
  });
  // The largest sync answered with Prefer: return=minimal (docs/products.md, "Updating products").
  for (const n of [MAX_VARIANTS]) {
    list.push({
      id: `sync-${n}-minimal`,
      label: `PUT /v1/products sync ${n} variants, Prefer: return=minimal`,
      method: "PUT",
      path: "/v1/products",
      body: sync(n),
      headers: { prefer: "return=minimal" },
      d1Baseline: `d1-sync-${n}`,
      load: false,
      cpuIterations: 10,
    });
  }
  // What a sync answers with (the updated product as GET returns it), on its own.
  list.push(
    {
      id: `get-${MAX_VARIANTS}`,
      label: `GET /v1/products/{id} of the ${MAX_VARIANTS}-variant product`,
      method: "GET",
      path: `/v1/products/${ids.syncIds[MAX_VARIANTS]}`,
      load: false,
      cpuIterations: 10,
    },
    {
      // The same product as a storefront reads it. A query the route ignores makes every request
      // miss the colo's cache (src/products/edge.ts), as the first read after any change does.
      id: "get-2048-pk",
      label: "GET /v1/products/{id} of the 2048-variant product, publishable key, cache miss",
      method: "GET",
      path: (/** @type {number} */ i) => `/v1/products/${ids.syncIds[MAX_VARIANTS]}?miss=${i}-${Date.now()}`,
      headers: { authorization: "", "x-publishable-key": ids.publishableKey },
      load: false,
      cpuIterations: 10,
    },
    {
      // The modelled reads' largest page (docs/modelled-reads.md): 500 products with details, one
      // of them with 2,048 variants (seedPages), answered whole under the byte bound.
      id: "list-products",
      label: `GET /v1/products?limit=500&offset=N&include_details=true (one of 2,048 variants, the rest of 3)`,
      method: "GET",
      path: `/v1/products?limit=500&offset=${ids.pageOffset}&include_details=true`,
      d1Baseline: "d1-list-products",
      load: false,
      cpuIterations: 10,
    },
    {
      // The window that was refused with 400 (docs/modelled-reads.md, "Paging"): whole, streamed.
      id: "list-products-2x2048",
      label:
        "GET /v1/products?limit=100&offset=0&include_details=true (two of 2,048 variants as a shop names them, 98 of 1 to 6)",
      method: "GET",
      path: "/v1/products?limit=100&offset=0&include_details=true",
      load: false,
      heap: true,
      bySize: true,
      cpuIterations: 0,
    },
    {
      id: "d1-list-products",
      label: "baseline: hand-written products page of 500 with variants (plain SQL, D1 baseline)",
      method: "GET",
      path: `/__bench/d1/products?limit=500&offset=${ids.pageOffset}`,
      load: false,
      cpuIterations: 0,
    },
    {
      id: "lookup-2048",
      label: "GET /v1/products?product_id=...&include_details=true of a 2,048-variant product",
      method: "GET",
      path: `/v1/products?product_id=${ids.pageBig[0]}&include_details=true`,
      load: false,
      cpuIterations: 10,
    },
    {
      // The page that was cut at 32 orders (docs/modelled-reads.md, "Paging"): streamed.
      id: "list-orders-46",
      label: "GET /v1/orders?limit=100 (46 orders, 24 of them x 500 lines)",
      method: "GET",
      path: `/v1/orders?limit=100&${paidWindow(LARGE_ORDERS)}`,
      load: false,
      heap: true,
      bySize: true,
      cpuIterations: 0,
    },
    {
      // The largest page accepted: limit=500 of orders of 500 lines (MAX_LINES), with details.
      id: "list-orders-worst",
      label: "GET /v1/orders?limit=500&include_details=true (500 orders x 500 lines)",
      method: "GET",
      path: `/v1/orders?limit=500&include_details=true&${paidWindow(WORST_ORDERS)}`,
      load: false,
      heap: true,
      bySize: true,
      requests: 10,
      cpuIterations: 0,
    },
    {
      id: "list-orders",
      label: "GET /v1/orders?limit=500&include_details=true (500 orders x 4 lines)",
      method: "GET",
      path: "/v1/orders?limit=500&offset=0&include_details=true&from_status_date=4000000000",
      load: false,
      cpuIterations: 10,
    },
  );
  // One webhook consumer invocation at its full fetch budget (bench/worker/consume.ts): every
  // receiver answering 200, then every receiver failing so that each attempt queues its retry.
  // A third, with every signing key imported again, as in the first invocation of a fresh isolate.
  for (const [id, query, outcome, label] of /** @type {const} */ ([
    ["consume", "status=200", "delivered", "receivers answer 200"],
    ["consume-fail", "status=500", "retrying", "receivers answer 500, retries queued"],
    ["consume-cold", "status=200&keys=cold", "delivered", "receivers answer 200, signing keys not cached"],
  ])) {
    list.push({
      id,
      label: `queue consumer: 10 events x 20 endpoints, one invocation at its fetch budget, ${label}`,
      method: "POST",
      path: `/__bench/consume/run?${query}`,
      load: false,
      cpuIterations: 0,
      verify: (t, invocations) => verifyConsume(t, invocations, outcome),
    });
  }
  // The other writes of a product's largest variant list, planned in JavaScript: a create of
  // 2,048 variants (a new product per request, so last: they would join the products page) and a
  // variants.update of all 2,048 by id.
  list.push(
    // A variants.update of all 2,048 by id, setting every count (update) or adding 1 or 2 to it
    // (adjust, a relative change: docs/stock.md); refused, one entry takes the SKU of another
    // product (as sync-2048-refused), worded from the plan's read (docs/design.md, "Writes").
    .../** @type {{ id: string, label: string, change: (i: number, k: number) => object, status?: number, cpuIterations: number }[]} */ ([
      { id: "update", label: "", change: (i) => ({ qty: 20 + (i % 2) }), cpuIterations: 10 },
      { id: "adjust", label: ", adjust", change: (i) => ({ adjust: 1 + (i % 2) }), cpuIterations: 10 },
      {
        id: "update",
        label: ", refused (another product's SKU)",
        change: (i, k) => ({ qty: 20 + (i % 2), ...(k === MAX_VARIANTS / 2 ? { sku: `SYNC${SYNC_SIZES[0]}` } : {}) }),
        status: 409,
        cpuIterations: 0,
      },
    ]).map(({ id, label, change, status, cpuIterations }) => ({
      id: `${id}-${MAX_VARIANTS}${status ? "-refused" : ""}`,
      label: `PUT /v1/products variants.update of ${MAX_VARIANTS} variants by id${label}`,
      method: "PUT",
      path: "/v1/products",
      body: (/** @type {number} */ i) =>
        JSON.stringify({
          product_id: ids.syncIds[MAX_VARIANTS],
          variants: {
            update: ids.syncVariantIds[MAX_VARIANTS].map((variant_id, k) => ({ variant_id, ...change(i, k) })),
          },
        }),
      ...(status ? { status } : {}),
      load: false,
      cpuIterations,
    })),
    {
      id: `create-${MAX_VARIANTS}`,
      label: `POST /v1/products with ${MAX_VARIANTS} variants over five options`,
      method: "POST",
      path: "/v1/products",
      body: (i) =>
        JSON.stringify({
          title: `Created ${i}`,
          price: 100,
          variants: { add: variantEntries(`CR${i}x${Date.now()}`, MAX_VARIANTS, 1) },
        }),
      d1Baseline: `d1-create-${MAX_VARIANTS}`,
      load: false,
      cpuIterations: 10,
    },
    {
      id: `d1-create-${MAX_VARIANTS}`,
      label: `baseline: hand-written create of ${MAX_VARIANTS} variants (plain SQL, D1 baseline)`,
      method: "POST",
      path: "/__bench/d1/create",
      body: (i) =>
        JSON.stringify({
          title: `Plain ${i}`,
          price: 100,
          variants: { add: variantEntries(`PL${i}x${Date.now()}`, MAX_VARIANTS, 1) },
        }),
      load: false,
      cpuIterations: 0,
    },
  );
  // Writers racing on one product: every request changes all 10 variants of the same product.
  for (const connections of [8, 16]) {
    list.push({
      id: `contention-${connections}`,
      label: `contention: ${connections} writers syncing one 10-variant product`,
      method: "PUT",
      path: "/v1/products",
      body: sync(10),
      load: true,
      profile: false,
      connections,
      contention: true,
      cpuIterations: 0,
    });
  }
  return list;
}

/**
 * What a consumer case's invocations left in D1: each must have recorded its whole budget of
 * attempts with the expected outcome and marked its own fresh events dispatched. Also removes the
 * case's endpoints and events (bench/worker/consume.ts).
 * @param {Target} t @param {number} invocations @param {string} outcome
 */
async function verifyConsume(t, invocations, outcome) {
  const r = await request(t, "POST", "/__bench/consume/check");
  if (r.status !== 200) return { ok: false, text: `check answered ${r.status} ${r.text.slice(0, 200)}` };
  const { budget, batch, poolBatches, deliveries, dispatched } = r.json;
  const want = budget * invocations;
  const got = deliveries[outcome] ?? 0;
  const others = Object.entries(deliveries).filter(([k]) => k !== outcome);
  const wantDispatched = batch * Math.min(invocations, poolBatches);
  const ok = got === want && others.length === 0 && dispatched === wantDispatched;
  return {
    ok,
    text: `${invocations} invocations recorded ${got} ${outcome} deliveries (${budget} each: ${want} expected)${others.length ? `, and ${JSON.stringify(Object.fromEntries(others))}` : ""}, marked ${dispatched} events dispatched (${wantDispatched} expected)`,
  };
}

/**
 * One request of the case, to tell "not merged yet" (the app's own 404 `no route ...`) and
 * failures apart from a case that can be measured.
 * @param {Target} t @param {Case} c
 * @returns {Promise<{ ok: true } | { ok: false, reason: string }>}
 */
export async function probe(t, c) {
  const r = await request(t, c.method, pathOf(c, -1), c.body?.(0));
  if (r.status === 404 && /^no route /.test(r.json?.error ?? ""))
    return { ok: false, reason: "n/a (endpoint not merged)" };
  if (c.status ? r.status !== c.status : r.status < 200 || r.status > 299) {
    const why = r.json?.errors?.[0] ?? r.json?.error ?? r.text.slice(0, 120);
    return { ok: false, reason: `error ${r.status}: ${why}` };
  }
  const results = r.json?.results;
  if (results && typeof results === "object") {
    const failed = Object.values(results).find((x) => x && x.success === false);
    if (failed) return { ok: false, reason: `error: an order failed: ${failed.errors?.[0]}` };
  }
  return { ok: true };
}
