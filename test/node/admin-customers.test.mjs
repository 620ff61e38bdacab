// npm run test:admin: a merchant finds a customer (docs/admin.md, "Customers"): the list with
// orders, spend and last order, a search by e-mail, the customer's page with their orders; and
// the order list's search box, which after a change of view still names what the list applies.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { byText, closeAdmin, driver, openAdmin } from "./admin-page.mjs";
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

test("the customers list, a search by e-mail and the customer's orders", async () => {
  /** @param {string} method @param {string} p @param {unknown} [body] */
  const call = async (method, p, body) => (await callServer(server, method, p, body)).json;
  await call("POST", "/v1/products", [{ title: "Teapot", sku: "CU-POT", price: 250, stock: 50 }]);
  const vera = { email: "vera@example.com", billing_details: { firstname: "Vera", lastname: "Holm" } };
  const olle = { email: "olle@example.com", billing_details: { firstname: "Olle", lastname: "Berg" } };
  const line = (/** @type {number} */ qty) => [{ sku: "CU-POT", qty }];
  const made = await call("POST", "/v1/orders", [
    { order_id: "create", customer: vera, products: line(1) },
    { order_id: "create", customer: vera, products: line(2) },
    { order_id: "create", customer: olle, products: line(1) },
    { order_id: "create", customer: vera, products: line(4) },
  ]);
  const ids = [1, 2, 3, 4].map((n) => made.results[`create_${n}`].order_id);
  await call("PUT", "/v1/orders", [{ order_id: ids[3], status: "cancelled" }]);

  page = await openAdmin(server);
  const d = driver(page);
  await d.go("#/customers", "Customers");
  await page.waitFor(`document.querySelectorAll("tbody tr").length === 2`, 20_000);
  const rows = await page.evaluate(
    `[...document.querySelectorAll("tbody tr")].map((r) => r.innerText.replace(/\\s+/g, " ").trim())`,
  );
  assert.equal(rows.length, 2);
  assert.match(rows[0], /^Olle Berg olle@example\.com 1 250\.00 SEK #/);
  assert.match(rows[1], new RegExp(`^Vera Holm vera@example\\.com 3 750\\.00 SEK #${ids[3]},`));

  await d.fill(`document.querySelector("#csearch")`, "VERA@");
  await d.clickText("button", "Search");
  await page.waitFor(`document.querySelectorAll("tbody tr").length === 1`, 20_000);
  await d.click(byText("tbody a", "Vera Holm"));
  await page.waitFor(`document.querySelector("h1")?.textContent === "Vera Holm"`, 20_000);
  const text = await d.text();
  assert.match(text, /Total spent\n+750\.00 SEK/);
  const orders = await page.evaluate(
    `[...document.querySelectorAll("tbody tr td:first-child")].map((c) => c.textContent)`,
  );
  assert.deepEqual(
    orders,
    [ids[3], ids[1], ids[0]].map((id) => `#${id}`),
  );
  assert.match(text, /cancelled/);
  for (const width of [390, 1280]) {
    await d.width(width);
    assert.deepEqual(await d.axe(), [], `customer page at ${width} px`);
  }

  // From the customer to the orders list: the search box names the e-mail, and a change of view
  // keeps the search applied, so the box never shows one customer over another's orders.
  await d.click(byText("a", "Find every order with this e-mail"));
  await d.go(`#/orders?q=${encodeURIComponent("vera@example.com")}`, "Orders");
  await d.waitText("3 orders");
  assert.equal(await page.evaluate(`document.querySelector("#search").value`), "vera@example.com");
  await d.click(byText("nav.views a", "Unpaid"));
  await d.waitText("2 orders");
  assert.equal(await page.evaluate(`document.querySelector("#search").value`), "vera@example.com");
  const customers = await page.evaluate(
    `[...document.querySelectorAll("td[data-label=Customer]")].map((c) => c.innerText)`,
  );
  assert.ok(
    customers.every((/** @type {string} */ c) => c.includes("vera@example.com")),
    customers.join(),
  );
  // Clearing the box and searching shows everyone's again.
  await d.fill(`document.querySelector("#search")`, "");
  await d.clickText("button", "Search");
  await d.waitText("3 orders");
  assert.deepEqual(problems(page.events), []);
});
