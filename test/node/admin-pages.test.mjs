// npm run test:admin: every page of the admin (docs/admin.md, "Pages"), the sign-in page first, at
// 390 px and 1280 px has no axe-core violation of any impact (minor included) and no sideways
// scroll of the page. Each list holds rows, the orders and customers lists a second page.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { closeAdmin, driver, openAdmin, signIn } from "./admin-page.mjs";
import { problems } from "./playwright-page.mjs";
import { callServer, startServer } from "./serve.mjs";

/** @type {import("./serve.mjs").Server} */
let server;
/** @type {import("./admin-page.mjs").Page} */
let page;

before(async () => {
  server = await startServer();
});
after(() => closeAdmin(page, server));

test("axe finds no violation on any page, at 390 and 1280 px", async () => {
  /** @param {string} method @param {string} p @param {unknown} [body] */
  const call = async (method, p, body) => (await callServer(server, method, p, body)).json;
  const made = await call("POST", "/v1/products", [
    { title: "Sweep bowl", sku: "SWEEP-BOWL", price: 90, stock: 40 },
    {
      title: "Sweep shirt",
      sku: "SWEEP-SHIRT",
      price: 200,
      variants: { add: [{ variant_option1_name: "Size", variant_option1_value: "S", sku: "SWEEP-S", qty: 4 }] },
    },
  ]);
  const product = made.products[1].product_id;
  // 26 orders of 26 customers: the orders and customers lists then have a second page, so their
  // pagers are on the page beside the header's navigation. Sara's is the newest.
  const order = await call("POST", "/v1/orders", [
    ...Array.from({ length: 25 }, (_, i) => ({
      order_id: "create",
      customer: { email: `sweep-${i}@example.com` },
      products: [{ sku: "SWEEP-BOWL", qty: 1 }],
    })),
    {
      order_id: "create",
      customer: { email: "sweep@example.com", billing_details: { firstname: "Sara", lastname: "Sweep" } },
      products: [{ sku: "SWEEP-BOWL", qty: 1 }],
    },
  ]);
  const id = order.results.create_26.order_id;
  assert.ok(id, JSON.stringify(order).slice(0, 300));
  const customer = (await call("GET", "/v1/customers?search=sweep@example.com")).customers[0].customer_id;
  await call("POST", "/v1/webhooks", { url: "http://127.0.0.1:9/sweep", events: ["order.new"] });
  await call("POST", "/v1/shipping-methods", { name: "Sweep post", price: 49, countries: ["SE"] });
  await call("POST", "/v1/keys", { name: "sweep shop", type: "publishable" });
  page = await openAdmin(server, { signedIn: false });
  const d = driver(page);
  /** @param {string} name */
  const check = async (name) => {
    for (const width of [390, 1280]) {
      await d.width(width);
      assert.deepEqual(await d.axe(), [], `${name} at ${width} px`);
      const wide = await page.evaluate("document.documentElement.scrollWidth > document.documentElement.clientWidth");
      assert.equal(wide, false, `${name} scrolls sideways at ${width} px`);
    }
  };
  await check("the sign-in page");
  await d.width(1280);
  await signIn(page, server.key);
  const pages = [
    ["#/today", "Today"],
    ["#/orders", "Orders"],
    [`#/orders/${id}`, `Order #${id}`],
    ["#/customers", "Customers"],
    [`#/customers/${customer}`, "Sara Sweep"],
    ["#/products", "Products"],
    ["#/products/new", "New product"],
    [`#/products/${product}`, "Sweep"],
    ["#/shipping", "Shipping"],
    ["#/webhooks", "Webhooks"],
    ["#/keys", "Keys"],
  ];
  for (const [hash, heading] of pages) {
    await d.go(hash, heading);
    await check(hash);
  }
  assert.deepEqual(problems(page.events), []);
});
