// npm run test:admin: the product page's stock fields in headless Chromium (docs/admin.md,
// "Products"; docs/stock.md): the lost update of a sale made while the page is open cannot happen.
// "+5" is sent as an adjustment and ends at the sum; a new total is sent as an adjustment with the
// figure it was typed against as expected_qty, and when that figure moved the page says so, shows
// the figure now, keeps what was typed and writes nothing. axe at 360 and 1280 px.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { closeAdmin, driver, openAdmin } from "./admin-page.mjs";
import { problems } from "./playwright-page.mjs";
import { callServer, startServer } from "./serve.mjs";

/** @type {import("./serve.mjs").Server} */
let server;
/** @type {import("./admin-page.mjs").Page} */
let page;
/** @type {ReturnType<typeof driver>} */
let d;
let jug = 0;
let shirt = 0;

/** @param {string} method @param {string} p @param {unknown} [body] */
const call = async (method, p, body) => (await callServer(server, method, p, body)).json;
const product = (/** @type {number} */ id) => call("GET", `/v1/products/${id}`);
/** A sale through the API while the page is open. @param {string} sku @param {number} qty */
const sell = async (sku, qty) => {
  const r = await call("POST", "/v1/orders", [{ order_id: "create", products: [{ sku, qty }] }]);
  assert.equal(r.results?.create_1?.success, true, JSON.stringify(r));
};
/** The bodies of the PUTs the page sent since event number `from`. @param {number} from */
const puts = (from) =>
  page.events
    .slice(from)
    .filter((e) => e.method === "Network.requestWillBeSent" && e.params.request.method === "PUT")
    .map((e) => JSON.parse(e.params.request.postData));

before(async () => {
  server = await startServer();
  const made = await call("POST", "/v1/products", [
    { title: "Stock jug", sku: "STK-JUG", price: 80, stock: 11 },
    {
      title: "Stock shirt",
      sku: "STK-SHIRT",
      price: 250,
      variants: {
        add: [
          { variant_option1_name: "Size", variant_option1_value: "S", sku: "STK-SHIRT-S", qty: 11 },
          { variant_option1_name: "Size", variant_option1_value: "M", sku: "STK-SHIRT-M", qty: 4 },
        ],
      },
    },
  ]);
  [jug, shirt] = made.products.map((/** @type {any} */ p) => p.product_id);
  page = await openAdmin(server);
  d = driver(page);
});

after(() => closeAdmin(page, server));

test("the page shows 11, an order takes 2, the merchant types +5: 14, the sale kept", async () => {
  await d.go(`#/products/${jug}`, "Stock jug");
  assert.equal(await page.evaluate(`document.querySelector("#stock").value`), "11");
  await sell("STK-JUG", 2);
  const from = page.events.length;
  await d.fill(`document.querySelector("#stock")`, "+5");
  await d.clickText("button", "Save");
  await d.waitText("Saved.");
  assert.deepEqual(puts(from), [{ product_id: jug, adjust: 5 }]);
  assert.equal((await product(jug)).stock, 14);
  // The form starts again from what is stored now.
  await page.waitFor(`document.querySelector("#stock").value === "14"`, 20_000);
  await d.fill(`document.querySelector("#stock")`, "-2");
  await d.clickText("button", "Save");
  await page.waitFor(`document.querySelector("#stock").value === "12"`, 20_000);
  assert.equal((await product(jug)).stock, 12);
});

test("a new total against a figure that did not move is written as a guarded adjustment", async () => {
  await d.go(`#/products/${jug}`, "Stock jug");
  const from = page.events.length;
  await d.fill(`document.querySelector("#stock")`, "20");
  await d.clickText("button", "Save");
  await d.waitText("Saved.");
  assert.deepEqual(puts(from), [{ product_id: jug, adjust: 8, expected_stock: 12 }]);
  assert.equal((await product(jug)).stock, 20);
});

test("the total 16 typed against the loaded 11 after a sale of 2: changed since you opened it, now 9, nothing written", async () => {
  await d.go(`#/products/${shirt}`, "Stock shirt");
  const s = `document.querySelectorAll("input.qty")[0]`;
  assert.equal(await page.evaluate(`${s}.value`), "11");
  await sell("STK-SHIRT-S", 2);
  const from = page.events.length;
  await d.fill(s, "16");
  await d.fill(`document.querySelectorAll("input.price")[1]`, "260");
  await d.clickText("button", "Save");
  await d.waitText("Changed since you opened it");
  const [sent] = puts(from);
  assert.deepEqual(sent.variants.update[0], {
    variant_id: sent.variants.update[0].variant_id,
    adjust: 5,
    expected_qty: 11,
  });
  const text = await d.text();
  assert.match(text, /Stock of S is 9 now, not 11/);
  assert.match(text, /Changed since you opened it: now 9/, "beside the field");
  assert.equal(await page.evaluate(`${s}.value`), "16", "what the merchant typed is kept");
  assert.equal(await page.evaluate(`document.querySelectorAll("input.price")[1].value`), "260");
  // Nothing of the save was written: neither the count nor the price beside it.
  const t = await product(shirt);
  assert.deepEqual(
    t.variants.map((/** @type {any} */ v) => [v.sku, v.qty, v.price]),
    [
      ["STK-SHIRT-S", 9, 250],
      ["STK-SHIRT-M", 4, 250],
    ],
  );
  await d.review("product-stock-conflict");
  // Told the figure is 9, the merchant saves 16 again: now knowingly, against 9.
  const again = page.events.length;
  await d.clickText("button", "Save");
  await d.waitText("Saved.");
  assert.deepEqual(puts(again)[0].variants.update[0].expected_qty, 9);
  const after = await product(shirt);
  assert.deepEqual(
    after.variants.map((/** @type {any} */ v) => [v.qty, v.price]),
    [
      [16, 250],
      [4, 260],
    ],
  );
});

test("what is neither a count nor a change is refused on the page, in its words", async () => {
  await d.go(`#/products/${jug}`, "Stock jug");
  const from = page.events.length;
  await d.fill(`document.querySelector("#stock")`, "five");
  await d.clickText("button", "Save");
  await d.waitText("Stock: write a count such as 16, or a change such as +5 or -2");
  assert.deepEqual(puts(from), []);
  await d.fill(`document.querySelector("#stock")`, "20");
});

test("no CSP violation or script error", () => {
  assert.deepEqual(problems(page.events), []);
});
