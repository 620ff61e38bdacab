// npm run test:admin: an order the unpaid hold cancels, as the merchant then reads it in the
// admin (docs/admin.md, "Orders"): its history says the store cancelled it and returned the stock.
// The hold is set to its shortest (1 minute) and the cron is run by hand (`--test-scheduled`), dated
// past the hold.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { closeAdmin, driver, openAdmin } from "./admin-page.mjs";
import { callServer, startServer } from "./serve.mjs";

/** @type {import("./serve.mjs").Server} */
let server;
/** @type {import("./admin-page.mjs").Page} */
let page;

before(async () => {
  server = await startServer({ args: ["--test-scheduled", "--var", "UNPAID_ORDER_HOLD_MINUTES:1"] });
});

after(() => closeAdmin(page, server));

test("an unpaid order past its hold reads as cancelled by the store, stock returned", async () => {
  /** @param {string} method @param {string} p @param {unknown} [body] */
  const call = async (method, p, body) => (await callServer(server, method, p, body)).json;
  await call("POST", "/v1/products", [{ title: "Held lamp", sku: "HOLD-LAMP", price: 300, stock: 5 }]);
  const made = await call("POST", "/v1/orders", [
    { order_id: "create", customer: { email: "hold@example.com" }, products: [{ sku: "HOLD-LAMP", qty: 2 }] },
  ]);
  const id = made.results.create_1.order_id;
  assert.equal((await call("GET", `/v1/orders/${id}`)).status, "unpaid");

  // The hold runs from the order's creation; the cron releases what is past it. The run is dated a
  // minute and a second ahead (the scheduled event's time), not waited for.
  const at = Date.now() + 61_000;
  const cron = await fetch(
    `${server.base}/cdn-cgi/handler/scheduled?cron=${encodeURIComponent("*/5 * * * *")}&time=${at}`,
  );
  assert.equal(cron.status, 200, await cron.text());
  assert.equal((await call("GET", `/v1/orders/${id}`)).status, "cancelled");

  page = await openAdmin(server);
  const d = driver(page);
  await d.go(`#/orders/${id}`, `Order #${id}`);
  const history = await page.evaluate(`document.querySelector("ol.history").textContent`);
  assert.match(history, /Cancelled .*: unpaid hold expired; stock returned by the store/);
  for (const width of [360, 1280]) {
    await d.width(width);
    assert.deepEqual(await d.axe(), [], `held order at ${width} px`);
  }
});
