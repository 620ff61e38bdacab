// The cases of a stock tool and a channel sending what the store has already (rows: bench/README.md,
// "Rows"): a 2,048-variant list synced again unchanged and with one count changed, 100-SKU batches
// changing nothing and 2 counts, a 5,000-SKU catalogue pushed as 50 batches; and the plain
// baselines their rows stand beside.
import { orderBody } from "./cases-everyday.mjs";
import { variantEntries } from "./requests.mjs";
import { BATCH_SKUS, MAX_VARIANTS, ONE_PREFIX, PUSH, SAME_PREFIX, SYNC_QTY } from "./seed.mjs";

/**
 * A stock tool's batch of 100 `{sku, stock}` items over 10 products of 10 SKUs from `first` on,
 * every count `qty` but those at `changed` positions, which get `to`.
 * @param {string} prefix @param {number} first @param {number} qty @param {number[]} changed @param {number} to
 */
const batch = (prefix, first, qty, changed, to) =>
  JSON.stringify(
    Array.from({ length: 100 }, (_, k) => ({
      sku: `${prefix}${first + Math.floor(k / 10)}-${k % 10}`,
      stock: changed.includes(k) ? to : qty,
    })),
  );

// The push's changed counts, 2 of every 100 (2 %: the positions of TOGGLED), flip between 7 and 8
// from one push to the next, so that every push changes exactly 100 of the 5,000; the push that
// changes nothing sends what the last push left.
const TOGGLED = [0, 50];
const push = { value: PUSH.qty };
const PUSH_REQUESTS = (PUSH.products * PUSH.variants) / PUSH.perRequest;
/** Request `j` of a push, its changed counts at `value`. @param {number} j @param {number} value */
const pushBatch = (j, value) => batch(PUSH.prefix, j * 10, PUSH.qty, TOGGLED, value);

/**
 * @param {import("./cases.mjs").Ids} ids
 * @returns {{ everyday: import("./cases.mjs").Case[], large: import("./cases.mjs").Case[] }}
 */
export function rowsCases(ids) {
  const same = JSON.stringify({
    product_id: ids.sameId,
    variants: { sync: variantEntries(SAME_PREFIX, MAX_VARIANTS, SYNC_QTY) },
  });
  const one = [11, 12].map((qty) => {
    const entries = variantEntries(ONE_PREFIX, MAX_VARIANTS, SYNC_QTY);
    entries[MAX_VARIANTS / 2].qty = qty;
    return JSON.stringify({ product_id: ids.oneId, variants: { sync: entries } });
  });
  const order20x5 = orderBody(20, 5);
  /** @type {import("./cases.mjs").Case[]} */
  const everyday = [
    {
      id: "stock-batch-same",
      label: "PUT /v1/products stock-tool batch, 100 SKUs, nothing changed",
      method: "PUT",
      path: "/v1/products",
      body: () => batch(BATCH_SKUS.prefix, 0, BATCH_SKUS.qty, [], 0),
      load: false,
      cpuIterations: 0,
    },
    {
      id: "stock-batch-2",
      label: "PUT /v1/products stock-tool batch, 100 SKUs, 2 changed",
      method: "PUT",
      path: "/v1/products",
      body: (i) => batch(BATCH_SKUS.prefix, 10, BATCH_SKUS.qty, TOGGLED, 6 + (i % 2)),
      load: false,
      cpuIterations: 0,
    },
    {
      id: "push-5000",
      label: `stock push: ${PUSH.products * PUSH.variants} SKUs as ${PUSH_REQUESTS} stock-tool batches of ${PUSH.perRequest}, 2 % changed`,
      method: "PUT",
      path: "/v1/products",
      push: {
        requests: PUSH_REQUESTS,
        start: () => {
          push.value = push.value === 7 ? 8 : 7;
        },
        body: (j) => pushBatch(j, push.value),
      },
      load: false,
      profile: false,
      cpuIterations: 0,
    },
    {
      id: "push-5000-same",
      label: `stock push: ${PUSH.products * PUSH.variants} SKUs as ${PUSH_REQUESTS} stock-tool batches of ${PUSH.perRequest}, nothing changed`,
      method: "PUT",
      path: "/v1/products",
      push: { requests: PUSH_REQUESTS, start: () => {}, body: (j) => pushBatch(j, push.value) },
      load: false,
      profile: false,
      cpuIterations: 0,
    },
    {
      // The order batch of 20 orders of 5 lines: the rows the store's 20x5 stands beside.
      id: "batch-20x5",
      label: "baseline: hand-written 20x5 order batch",
      method: "POST",
      path: "/__bench/order-batch",
      body: () => order20x5,
      load: false,
      cpuIterations: 0,
    },
    {
      // A storefront's product page as it misses the colo's cache (the first view after a change).
      id: "get-10-pk",
      label: "GET /v1/products/{id} (10 variants), publishable key, cache miss",
      method: "GET",
      path: (/** @type {number} */ i) => `/v1/products/${ids.syncIds[10]}?miss=${i}-${Date.now()}`,
      headers: { authorization: "", "x-publishable-key": ids.publishableKey },
      load: false,
      cpuIterations: 0,
    },
  ];
  /** @type {import("./cases.mjs").Case[]} */
  const large = [
    {
      id: `sync-${MAX_VARIANTS}-same`,
      label: `PUT /v1/products sync ${MAX_VARIANTS} variants, the same list again (nothing changed)`,
      method: "PUT",
      path: "/v1/products",
      body: () => same,
      load: false,
      cpuIterations: 0,
    },
    {
      id: `sync-${MAX_VARIANTS}-one`,
      label: `PUT /v1/products sync ${MAX_VARIANTS} variants, one variant's qty changed`,
      method: "PUT",
      path: "/v1/products",
      body: (i) => one[i % 2],
      load: false,
      cpuIterations: 0,
    },
    {
      id: `d1-get-${MAX_VARIANTS}`,
      label: `baseline: hand-written read of the ${MAX_VARIANTS}-variant product (plain SQL, D1 baseline)`,
      method: "GET",
      path: `/__bench/d1/product/${ids.syncIds[MAX_VARIANTS]}`,
      load: false,
      cpuIterations: 0,
    },
  ];
  return { everyday, large };
}
