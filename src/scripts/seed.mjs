#!/usr/bin/env node
// `npm run seed`: fills the database of a running `npm run dev` with a small demo catalog,
// through the API. Safe to run again: a product whose SKU already exists is skipped.
//   npm run seed                        # where npm run dev last served, key from .dev.vars
//   KEY=... BASE=... npm run seed       # the line npm run dev prints (or --base/--key)
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { DEV_BASE_FILE, parseDevVars, serverTarget } from "./args.mjs";

const root = path.resolve(import.meta.dirname, "../..");
const read = (/** @type {string} */ file) => (existsSync(file) ? readFileSync(file, "utf8") : undefined);
const { base, baseFrom, key, keyFrom } = serverTarget({
  args: process.argv.slice(2),
  env: process.env,
  devVars: parseDevVars(read(path.join(root, ".dev.vars")) ?? ""),
  recordedBase: read(process.env.EDGE_STORE_DEV_BASE_FILE ?? path.join(root, DEV_BASE_FILE)),
});
if (!key) {
  console.error(
    "No API key: set KEY (npm run dev prints it), pass --key, or run npm run dev once to create .dev.vars.",
  );
  process.exit(1);
}
const auth = `Basic ${Buffer.from(`${key}:${key}`).toString("base64")}`;

const sizes = ["S", "M", "L"];
const colours = ["Black", "White"];
/** The demo catalog, in the API's field names (docs/products.md); one product with colour and size variants. */
const CATALOG = [
  {
    sku: "DEMO-TEE",
    title: "Organic T-shirt",
    price: 249,
    tax_rate: 25,
    disable_minusqty: 1,
    description: "Soft organic cotton tee.",
    variants: {
      add: colours.flatMap((colour) =>
        sizes.map((size) => ({
          variant_option1_name: "Colour",
          variant_option1_value: colour,
          variant_option2_name: "Size",
          variant_option2_value: size,
          sku: `DEMO-TEE-${colour.slice(0, 3).toUpperCase()}-${size}`,
          qty: 20,
        })),
      ),
    },
  },
  { sku: "DEMO-MUG", title: "Enamel mug", price: "129.50", tax_rate: 25, stock: 40, disable_minusqty: 1 },
  { sku: "DEMO-BOOK", title: "Field notebook", price: 89, tax_rate: 6, stock: 100, weight: 180 },
  { sku: "DEMO-CAP", title: "Wool cap", price: 199, before_price: 249, tax_rate: 25, stock: 15, visible: 1 },
];

/**
 * @param {string} method
 * @param {string} p
 * @param {unknown} [body]
 */
async function call(method, p, body) {
  /** @type {Record<string, string>} */
  const headers = { authorization: auth };
  if (body !== undefined) headers["content-type"] = "application/json";
  let res;
  try {
    res = await fetch(`${base}${p}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (e) {
    const cause = e instanceof Error && e.cause instanceof Error ? e.cause.message : String(e);
    console.error(`Cannot reach ${base}${p} (${cause}); the URL came from ${baseFrom}.`);
    console.error("Start the server with npm run dev, or set BASE to where it runs (npm run dev prints the line).");
    process.exit(1);
  }
  const json = await res.json().catch(() => undefined);
  if (res.status === 401) {
    console.error(`${base} refused the key from ${keyFrom} (401): set KEY to the key npm run dev printed.`);
    process.exit(1);
  }
  return { status: res.status, json };
}

let created = 0;
let skipped = 0;
for (const product of CATALOG) {
  const found = await call("GET", `/v1/products?sku=${encodeURIComponent(product.sku)}`);
  // GET /v1/products?sku= answers the product as a bare object (the modelled dialect), 404 when none has it.
  if (found.status === 200 && found.json?.id) {
    console.log(`skip   ${product.sku} (exists as product ${found.json.id})`);
    skipped++;
    continue;
  }
  const r = await call("POST", "/v1/products", product);
  if (r.status !== 200) {
    console.error(`failed ${product.sku}: ${r.status} ${JSON.stringify(r.json)}`);
    process.exitCode = 1;
    continue;
  }
  const p = r.json.products[0];
  created++;
  console.log(
    `create ${product.sku} -> product ${p.product_id}${p.variants.length ? `, ${p.variants.length} variants` : ""}`,
  );
}
console.log(`\n${created} created, ${skipped} already there, ${CATALOG.length - created - skipped} failed.`);

const order = JSON.stringify([
  {
    order_id: "create",
    customer: { email: "demo@example.com", billing_details: { firstname: "Demo", country: "SE" } },
    shipping: { name: "Postal service", price: 49 },
    products: [
      { sku: "DEMO-TEE-BLA-M", qty: 1 },
      { sku: "DEMO-MUG", qty: 2 },
    ],
  },
]);
console.log(`
Create an order for seeded SKUs:
  curl -s ${base}/v1/orders -H 'Authorization: ${auth}' \\
    -H 'Content-Type: application/json' -d '${order}'`);
