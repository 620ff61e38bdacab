// npm run test:admin: every page of the admin (docs/admin.md, "Pages") at 390 px and 1280 px has
// no serious or critical axe-core finding and no sideways scroll of the page.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { driver, signIn } from "./admin-page.mjs";
import { openPage, problems } from "./playwright-page.mjs";
import { callServer, startServer } from "./serve.mjs";

/** @type {import("./serve.mjs").Server} */
let server;
/** @type {Awaited<ReturnType<typeof openPage>>} */
let page;

before(async () => {
  server = await startServer();
});
after(async () => {
  try {
    await page?.close();
  } finally {
    await server?.stop();
  }
});

test("axe finds nothing serious on any page, at 390 and 1280 px", async () => {
  /** @param {string} method @param {string} p @param {unknown} [body] */
  const call = async (method, p, body) => (await callServer(server, method, p, body)).json;
  const made = await call("POST", "/v1/products", [
    { title: "Sweep bowl", sku: "SWEEP-BOWL", price: 90, stock: 2 },
    {
      title: "Sweep shirt",
      sku: "SWEEP-SHIRT",
      price: 200,
      variants: { add: [{ variant_option1_name: "Size", variant_option1_value: "S", sku: "SWEEP-S", qty: 4 }] },
    },
  ]);
  const product = made.products[1].product_id;
  const order = await call("POST", "/v1/orders", [
    {
      order_id: "create",
      customer: { email: "sweep@example.com", billing_details: { firstname: "Sara", lastname: "Sweep" } },
      products: [{ sku: "SWEEP-BOWL", qty: 1 }],
    },
  ]);
  const id = order.results.create_1.order_id;
  const customer = (await call("GET", "/v1/customers")).customers[0].customer_id;
  page = await openPage(`${server.base}/admin`);
  const d = driver(page);
  await signIn(page, server.key);
  const pages = [
    ["#/today", "Today"],
    ["#/orders", "Orders"],
    [`#/orders/${id}`, `Order #${id}`],
    ["#/customers", "Customers"],
    [`#/customers/${customer}`, "Sara Sweep"],
    ["#/products", "Products"],
    [`#/products/${product}`, "Sweep"],
    ["#/shipping", "Shipping"],
    ["#/webhooks", "Webhooks"],
    ["#/keys", "Keys"],
  ];
  for (const [hash, heading] of pages) {
    await d.go(hash, heading);
    for (const width of [390, 1280]) {
      await d.width(width);
      assert.deepEqual(await d.axe(), [], `${hash} at ${width} px`);
      const wide = await page.evaluate("document.documentElement.scrollWidth > document.documentElement.clientWidth");
      assert.equal(wide, false, `${hash} scrolls sideways at ${width} px`);
    }
  }
  assert.deepEqual(problems(page.events), []);
});
