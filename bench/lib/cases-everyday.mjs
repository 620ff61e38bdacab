// The everyday requests: orders, stock, status changes and reads with keys, most of them under
// load beside the hand-written batch that is their baseline (bench/README.md, Method), and cold.
import { ORDER_PRODUCTS } from "./seed.mjs";

/** @param {number} orders @param {number} lines */
export function orderBody(orders, lines) {
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
 * The everyday cases, in the order they run and print (the first of cases()).
 * @param {import("./cases.mjs").Ids} ids
 * @returns {import("./cases.mjs").Case[]}
 */
export function everydayCases(ids) {
  const order1x3 = orderBody(1, 3);
  const order20x5 = orderBody(20, 5);
  /** @type {import("./cases.mjs").Case[]} */
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
  return list;
}
