// A TypeScript integration with typed calls (docs/clients.md): lists products, then orders one of
// the first with stock. Against `npm run dev` (and `npm run seed` for a catalog), from the repo,
// with the KEY=... BASE=... line npm run dev printed:
//   KEY=<the dev key> BASE=<its URL> npm run example:client
// (npm run runs the project's Node 24, which runs TypeScript as is; a plain `node main.ts` needs
// Node 22.18 or later.)
// openapi.d.ts is generated from GET /openapi.json (npm run client:types); openapi-fetch turns it
// into a client whose paths, query parameters, bodies and answers are checked by TypeScript.
import createClient from "openapi-fetch";
import type { paths } from "./openapi.d.ts";

const key = process.env.KEY;
if (!key) throw new Error("set KEY to an API key (npm run dev prints one)");
const baseUrl = process.env.BASE || "http://127.0.0.1:8787";
const api = createClient<paths>({
  baseUrl,
  headers: { Authorization: `Basic ${btoa(`${key}:${key}`)}` },
});

// GET /v1/products answers the modelled API's bare array (a lookup by id or SKU, one object).
const listed = await api.GET("/v1/products", { params: { query: { limit: 10 } } }).catch((e: unknown) => {
  throw new Error(
    `cannot reach ${baseUrl}/v1/products (${e instanceof Error ? e.message : e}): is npm run dev running? set BASE`,
  );
});
if (listed.error) throw new Error(`listing products: ${listed.response.status} ${listed.error.error}`);
const products = Array.isArray(listed.data) ? listed.data : [listed.data];
for (const p of products) console.log(`product ${p.id}  ${p.sku || "(no sku)"}  ${p.title}  stock ${p.stock}`);

// A product with variants is ordered by one of its variants: this takes one without.
const product = products.find((p) => p.sku && p.stock > 0 && p.hasVariants === "0");
if (!product) throw new Error("no product without variants with a SKU and stock: create one, or run npm run seed");

// POST /v1/orders takes a list of orders to create; each answer is under create_1, create_2, ...
const created = await api.POST("/v1/orders", {
  body: [{ order_id: "create", products: [{ sku: product.sku, qty: 1 }] }],
});
if (created.error) throw new Error(`creating the order: ${created.response.status} ${created.error.error}`);
const order = created.data.results.create_1;
if (!order?.success) throw new Error(`the order was refused: ${JSON.stringify(order)}`);
console.log(`order ${order.order_id}: ${order.status}, total ${order.total} ${order.currency}`);
