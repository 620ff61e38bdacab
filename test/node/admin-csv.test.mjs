// npm run test:admin: the order list's CSV is the whole view (docs/admin.md, "Orders"): 35 orders
// over two pages of the list come out as one file of 35 orders, read page by page; and the
// admin's other words that must not mislead: a webhook URL registered twice is named before it
// is sent, and cancelling a paid order shows its total and says refunds are the provider's.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, test } from "node:test";
import { byText, closeAdmin, driver, openAdmin } from "./admin-page.mjs";
import { problems } from "./playwright-page.mjs";
import { callServer, startServer } from "./serve.mjs";

/** @type {import("./serve.mjs").Server} */
let server;
/** @type {import("./admin-page.mjs").Page} */
let page;
/** @type {ReturnType<typeof driver>} */
let d;
/** @param {string} method @param {string} p @param {unknown} [body] */
const call = async (method, p, body) => (await callServer(server, method, p, body)).json;

before(async () => {
  server = await startServer({ args: ["--var", "ALLOW_LOCAL_WEBHOOKS:true"] });
  page = await openAdmin(server);
  d = driver(page);
});
after(() => closeAdmin(page, server));

test("a view of 35 orders exports as one CSV of 35 orders", async () => {
  await call("POST", "/v1/products", [{ title: "Candle", sku: "CSV-CANDLE", price: 40, stock: 500 }]);
  const body = Array.from({ length: 35 }, (_, i) => ({
    order_id: "create",
    customer: { email: `csv${i}@example.com` },
    products: [{ sku: "CSV-CANDLE", qty: 1 + (i % 3) }],
  }));
  const made = await call("POST", "/v1/orders", body);
  assert.equal(Object.values(made.results).filter((r) => /** @type {any} */ (r).success).length, 35);
  await d.go("#/orders?view=unpaid", "Orders");
  await d.waitText("35 orders · showing 1–25");
  const [download] = await Promise.all([
    page.pw.waitForEvent("download"),
    d.clickText("button", "Export CSV (all 35)"),
  ]);
  const lines = readFileSync(/** @type {string} */ (await download.path()), "utf8")
    .trim()
    .split("\r\n");
  assert.equal(lines.length, 1 + 35, "one line per order line: one each");
  assert.equal(new Set(lines.slice(1).map((l) => l.split(",")[0])).size, 35);
  assert.match(download.suggestedFilename(), /^orders-\d{4}-\d{2}-\d{2}\.csv$/);
  await d.waitText("Exported 35 orders of this view as one CSV file.");
});

test("a webhook URL already registered is named before it is added again", async () => {
  const url = "http://127.0.0.1:9/hook";
  await call("POST", "/v1/webhooks", { url, events: ["*"] });
  await d.go("#/webhooks", "Webhooks");
  await d.fill(`document.querySelector("#wh-url")`, "http://127.0.0.1:9/hook");
  await d.clickText("button", "Add endpoint");
  await d.waitText("is already registered");
  assert.equal((await call("GET", "/v1/webhooks")).webhooks.length, 1, "nothing sent yet");
  await d.clickText("button", "Keep the one");
  assert.equal((await call("GET", "/v1/webhooks")).webhooks.length, 1);
  for (const width of [390, 1280]) {
    await d.width(width);
    assert.deepEqual(await d.axe(), [], `webhooks at ${width} px`);
  }
});

test("cancelling a paid order shows its total and says any refund is the payment provider's", async () => {
  await call("POST", "/v1/products", [{ title: "Vase", sku: "CSV-VASE", price: 320, stock: 5 }]);
  const made = await call("POST", "/v1/orders", [
    { order_id: "create", payment: { method: "klarna" }, products: [{ sku: "CSV-VASE", qty: 1 }] },
  ]);
  const id = made.results.create_1.order_id;
  await call("PUT", "/v1/orders", [{ order_id: id, status: "paid" }]);
  await d.go(`#/orders/${id}`, `Order #${id}`);
  await d.clickText("button", "Cancel…");
  const form = await page.evaluate(`document.querySelector(".cancel fieldset").innerText`);
  assert.match(form, new RegExp(`Cancel order #${id} \\(total 320\\.00 SEK\\)\\?`));
  assert.match(
    form,
    /This order was paid \(320\.00 SEK\)\. Cancelling refunds nothing: make any refund with the payment provider \(klarna\)\./,
  );
  await d.click(byText("button", "Cancel order"));
  await d.waitText("Nothing was refunded: refund 320.00 SEK with the payment provider if it is due.");
  assert.equal((await call("GET", `/v1/orders/${id}`)).status, "cancelled");
  assert.deepEqual(problems(page.events), []);
});
