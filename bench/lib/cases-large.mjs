// The product writes and reads at the contract's largest sizes with their plain-SQL baselines, the
// largest pages, the webhook consumer at its fetch budget, and writers racing on one product.
import { request, variantEntries } from "./requests.mjs";
import { LARGE_ORDERS, MAX_VARIANTS, paidWindow, SYNC_SIZES, WORST_ORDERS } from "./seed.mjs";

/** @typedef {import("./requests.mjs").Target} Target */

/**
 * The large cases, in the order they run and print (after everydayCases).
 * @param {import("./cases.mjs").Ids} ids
 * @returns {import("./cases.mjs").Case[]}
 */
export function largeCases(ids) {
  /** @param {number} n */
  const sync = (n) => {
    // Two bodies that differ in every variant's qty, alternated, so every request changes all n.
    const a = JSON.stringify({ product_id: ids.syncIds[n], variants: { sync: variantEntries(`S${n}`, n, 11) } });
    const b = JSON.stringify({ product_id: ids.syncIds[n], variants: { sync: variantEntries(`S${n}`, n, 12) } });
    return /** @param {number} i */ (i) => (i % 2 ? a : b);
  };
  /** @type {import("./cases.mjs").Case[]} */
  const list = [];
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
      // miss the colo's cache (src/products/version.ts), as the first read after any change does.
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
      label: `queue consumer: 10 events (orders of 500 lines, products) x 20 endpoints, one invocation at its fetch budget, ${label}`,
      method: "POST",
      path: `/__bench/consume/run?${query}`,
      load: false,
      cpuIterations: 0,
      verify: (t, invocations) => verifyConsume(t, invocations, outcome),
    });
  }
  // The other writes of a product's largest variant list, planned in JavaScript: a create of
  // 2,048 variants (a new product per request, so after the products pages, which they would join) and a
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
  // The largest page accepted: limit=500 of orders of 500 lines (MAX_LINES), with details. Last:
  // its 43 MB answer leaves the isolate collections that fell in the cases after it (the
  // consumer's read 20 ms of collection in one request when it followed).
  list.push({
    id: "list-orders-worst",
    label: "GET /v1/orders?limit=500&include_details=true (500 orders x 500 lines)",
    method: "GET",
    path: `/v1/orders?limit=500&include_details=true&${paidWindow(WORST_ORDERS)}`,
    load: false,
    heap: true,
    bySize: true,
    requests: 10,
    cpuIterations: 0,
  });
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
