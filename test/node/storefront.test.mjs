// npm run test:browser (with browser.test.mjs): the storefront page of src/docs/storefront.md, "A
// storefront page", run in headless Chromium. A page served from another origin reads the public
// catalog and the shipping methods and creates an order with a publishable key, cross-origin, as a
// shop's own page would, pricing nothing itself; a secret key from the same page is refused by
// CORS, and an origin the key does not list is refused by the API, in words the page can read.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, test } from "node:test";
import { openPage } from "./playwright-page.mjs";
import { startServer } from "./serve.mjs";

/** @type {import("./serve.mjs").Server} */
let api;
/** @type {import("node:http").Server} */
let shop;
let shopOrigin = "";
/** @type {Awaited<ReturnType<typeof openPage>>} */
let page;
let pk = "";

/** @param {string} path @param {{ method?: string, body?: string, headers?: Record<string, string> }} [init] */
const call = (path, init = {}) =>
  fetch(`${api.base}${path}`, {
    ...init,
    headers: { authorization: api.auth, "content-type": "application/json", ...init.headers },
  }).then((r) => r.json());

before(async () => {
  api = await startServer();
  shop = createServer((_, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end('<!doctype html><title>shop</title><ul id="catalog"></ul>');
  });
  await new Promise((resolve) => shop.listen(0, "127.0.0.1", () => resolve(undefined)));
  shopOrigin = `http://127.0.0.1:${/** @type {import("node:net").AddressInfo} */ (shop.address()).port}`;
  const key = await call("/v1/keys", {
    method: "POST",
    body: JSON.stringify({ name: "storefront", type: "publishable", allowed_origins: [shopOrigin] }),
  });
  pk = key.key;
  await call("/v1/products", {
    method: "POST",
    body: JSON.stringify({ title: "Mug", sku: "SHOP-MUG", price: 99, stock: 4, purchase_price: 30 }),
  });
  await call("/v1/shipping-methods", {
    method: "POST",
    body: JSON.stringify({ name: "Postnord", price: 49, countries: ["SE"] }),
  });
  page = await openPage(`${shopOrigin}/`);
  await page.waitFor(`document.querySelector("#catalog")`, 30_000);
});
after(async () => {
  try {
    await page?.close();
  } finally {
    shop?.close();
    await api?.stop();
  }
});

test("a storefront page reads the public catalog and orders with a publishable key", async () => {
  const out = await page.evaluate(`(async () => {
    const BASE = ${JSON.stringify(api.base)};
    const headers = { "X-Publishable-Key": ${JSON.stringify(pk)} };
    const read = async (path) => (await fetch(BASE + path, { headers })).json();
    const product = await read("/v1/products");
    const { shipping_methods } = await read("/v1/shipping-methods?country=SE");
    document.querySelector("#catalog").innerHTML = product.map((p) => "<li>" + p.title + ": " + p.availability + "</li>").join("");
    const body = [{
      order_id: "create",
      customer: { email: "anna@example.com", shipping_details: { country: "SE" } },
      shipping: { id: shipping_methods[0].id },
      products: [{ sku: product[0].sku, qty: 1 }],
    }];
    const res = await fetch(BASE + "/v1/orders", { method: "POST", headers: { ...headers, "Content-Type": "application/json" }, body: JSON.stringify(body) });
    const { order_id, token, total } = (await res.json()).results.create_1;
    const order = await read("/v1/orders/" + order_id + "?token=" + token);
    return { product, status: order.status, total, html: document.querySelector("#catalog").textContent };
  })()`);
  assert.equal(out.status, "unpaid");
  assert.equal(out.total, 99 + 49);
  assert.equal(out.html, "Mug: in_stock");
  assert.equal(out.product[0].purchase_price, undefined);
  assert.equal(out.product[0].stock, undefined);
});

test("the same page cannot use a secret key (no CORS on secret-key routes)", async () => {
  const out = await page.evaluate(`(async () => {
    try {
      await fetch(${JSON.stringify(api.base)} + "/v1/orders", { headers: { Authorization: ${JSON.stringify(api.auth)} } });
      return "read";
    } catch (e) {
      return "blocked";
    }
  })()`);
  assert.equal(out, "blocked");
});

test("a key that does not list the page's origin is refused", async () => {
  const other = await call("/v1/keys", {
    method: "POST",
    body: JSON.stringify({ name: "other shop", type: "publishable", allowed_origins: ["https://other.example"] }),
  });
  const status = await page.evaluate(`(async () => {
    try {
      const r = await fetch(${JSON.stringify(api.base)} + "/v1/products", { headers: { "X-Publishable-Key": ${JSON.stringify(other.key)} } });
      return r.status;
    } catch (e) {
      return "blocked";
    }
  })()`);
  // The preflight passes (the first key lists this origin); the request is 403, and the page can
  // read it (src/docs/keys.md, "CORS": refusals carry CORS too).
  assert.equal(status, 403);
});
