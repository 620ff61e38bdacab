// npm run test:admin: the order list and the order actions in headless Chromium (docs/admin.md,
// "Orders"): quick views, date range, sort, count, search by SKU, filters kept in the address and
// through Back; bulk Mark paid, Ship and Cancel; Export CSV of the view; a card per order at 360 px; actions
// that follow the key's scopes and the order's state; no lost work (unsaved-changes guard, decimal
// comma, refusals in the page's words). axe at 360 and 1280 px on each page.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, test } from "node:test";
import { byText, closeAdmin, driver, openAdmin, signIn } from "./admin-page.mjs";
import { problems } from "./playwright-page.mjs";
import { callServer, startServer } from "./serve.mjs";

/** @type {import("./serve.mjs").Server} */
let server;
/** @type {import("./admin-page.mjs").Page} */
let page;
/** @type {ReturnType<typeof driver>} */
let d;
/** @type {Record<string, number>} */
const o = {};
let lamp = 0;

/** @param {string} method @param {string} p @param {unknown} [body] */
const call = async (method, p, body) => (await callServer(server, method, p, body)).json;
const order = (/** @type {number} */ id) => call("GET", `/v1/orders/${id}`);
const rowIds = () =>
  page.evaluate(`[...document.querySelectorAll("table.orders tbody tr a")].map((a) => Number(a.textContent.slice(1)))`);

before(async () => {
  server = await startServer();
  const made = await call("POST", "/v1/products", [
    { title: "Lamp", sku: "ORD-LAMP", price: 300, stock: 50, disable_minusqty: 1 },
    { title: "Bulb", sku: "ORD-BULB", price: 20, stock: 100 },
  ]);
  lamp = made.products[0].product_id;
  const who = (/** @type {string} */ first, /** @type {string} */ last) => ({
    email: `${first.toLowerCase()}@example.com`,
    phone: "+46701234567",
    billing_details: {
      firstname: first,
      lastname: last,
      address: "Gatan 2",
      zipcode: "111 22",
      city: "Stockholm",
      country: "SE",
    },
  });
  const created = await call("POST", "/v1/orders", [
    { order_id: "create", customer: who("Dora", "Dahl"), products: [{ sku: "ORD-LAMP", qty: 1 }] },
    { order_id: "create", customer: who("Erik", "Ek"), products: [{ sku: "ORD-BULB", qty: 2 }] },
    {
      order_id: "create",
      customer: who("Fia", "Falk"),
      products: [
        { sku: "ORD-LAMP", qty: 2 },
        { sku: "ORD-BULB", qty: 3 },
      ],
    },
    { order_id: "create", customer: who("Gun", "Gran"), products: [{ sku: "ORD-BULB", qty: 1 }] },
    { order_id: "create", customer: who("Hans", "Holm"), products: [{ sku: "ORD-LAMP", qty: 1 }] },
    { order_id: "create", customer: who("Ida", "Ivarsson"), products: [{ sku: "ORD-BULB", qty: 1 }] },
  ]);
  for (const [i, name] of ["dora", "erik", "fia", "gun", "hans", "ida"].entries()) {
    o[name] = created.results[`create_${i + 1}`].order_id;
  }
  // To ship: Erik and Fia paid; Gun shipped on invoice, never paid.
  await call("PUT", "/v1/orders", [
    { order_id: o.erik, status: "paid" },
    { order_id: o.fia, status: "paid" },
    { order_id: o.gun, status: "done" },
  ]);
  page = await openAdmin(server);
  d = driver(page);
});

after(() => closeAdmin(page, server));

test("views, sort, count, date range and SKU search, kept in the address and through Back", async () => {
  await d.go("#/orders", "Orders");
  await d.waitText("6 orders");
  await d.clickText(".views a", "To ship");
  await d.waitText("2 orders");
  assert.deepEqual(await rowIds(), [o.fia, o.erik]);
  await d.choose(`document.querySelector("#sort")`, "low");
  await page.waitFor(`document.querySelector("table.orders tbody tr a")?.textContent === "#${o.erik}"`, 20_000);
  assert.match(await page.evaluate("location.hash"), /view=to_ship.*sort=low|sort=low.*view=to_ship/);
  await d.review("orders-to-ship");
  // Into an order and back: by the page's link, and by the browser's Back.
  await d.click(`document.querySelector("table.orders tbody tr a")`);
  await page.waitFor(`document.querySelector("h1")?.textContent.startsWith("Order #${o.erik}")`, 20_000);
  await d.clickText("a", "← Orders");
  await d.waitText("2 orders");
  assert.deepEqual(await rowIds(), [o.erik, o.fia]);
  await d.click(`document.querySelector("table.orders tbody tr a")`);
  await page.waitFor(`document.querySelector("h1")?.textContent.startsWith("Order #")`, 20_000);
  await page.evaluate("history.back()");
  await d.waitText("2 orders");
  assert.equal(await page.evaluate(`document.querySelector("#sort").value`), "low");
  await d.clickText(".views a", "Shipped unpaid");
  await d.waitText("1 order");
  assert.match(await d.text(), /shipped, unpaid/);
  await d.clickText(".views a", "Today");
  await d.waitText("6 orders");
  await d.clickText(".views a", "All");
  await d.fill(`document.querySelector("#search")`, "ord-lamp");
  await d.clickText("button", "Search");
  await d.waitText("3 orders");
  assert.deepEqual(await rowIds(), [o.hans, o.fia, o.dora]);
  const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
  await page.evaluate(`(() => { const el = document.querySelector("#from"); el.value = "${tomorrow}";
    el.dispatchEvent(new Event("change", { bubbles: true })); })()`);
  await d.waitText("0 orders");
  await d.go("#/orders", "Orders");
  await d.waitText("6 orders");
});

test("at 360 px each order is a card: number, status and total on screen", async () => {
  await d.width(360);
  const off = await page.evaluate(`[...document.querySelectorAll("table.orders td[data-label]")]
    .filter((td) => td.getBoundingClientRect().right > innerWidth).length`);
  assert.equal(off, 0);
  assert.ok(await page.evaluate(`getComputedStyle(document.querySelector("table.orders tr")).display === "grid"`));
  await d.width(1280);
});

test("bulk: mark paid, ship, export CSV (one row per line), cancel with a reason", async () => {
  const pick = (/** @type {number} */ id) =>
    d.click(`document.querySelector("input[aria-label='Select order #${id}']")`);
  await pick(o.dora);
  await pick(o.hans);
  await d.waitText("2 selected");
  await d.review("orders-bulk");
  await d.clickText(".bulk button", "Mark paid (2)");
  await d.waitText("Marked paid: 2 orders.");
  assert.deepEqual([(await order(o.dora)).status, (await order(o.hans)).status], ["paid", "paid"]);
  await pick(o.dora);
  await pick(o.gun);
  await d.clickText(".bulk button", "Ship paid (1)");
  await d.waitText("Shipped: 1 order (1 skipped: not in a state for it).");
  assert.equal((await order(o.dora)).status, "done");
  // Export: the CSV of the view a packer reads, one row per order line.
  await d.go("#/orders?q=fia%40example.com", "Orders");
  await d.waitText("1 order");
  const [download] = await Promise.all([
    page.pw.waitForEvent("download"),
    d.clickText("button", "Export CSV (1 order)"),
  ]);
  const csv = readFileSync(/** @type {string} */ (await download.path()), "utf8")
    .trim()
    .split("\r\n");
  assert.match(
    csv[0],
    /^order,date,status,paid,customer,email,phone,ship_to,address,zipcode,city,country,shipping,tracking,sku,item,variant,qty,unit_price,line_total,order_total,tax,currency,payment$/,
  );
  assert.equal(csv.length, 1 + 2, "Fia's two lines");
  const fia = csv.filter((l) => l.startsWith(`${o.fia},`));
  assert.equal(fia.length, 2);
  assert.match(fia[0], /,paid,yes,Fia Falk,fia@example.com,\+46701234567,Fia Falk,Gatan 2,111 22,Stockholm,SE,/);
  assert.match(fia[0], /,ORD-LAMP,Lamp,,2,300.00,600.00,660.00,/);
  await d.go("#/orders", "Orders");
  await pick(o.fia);
  await pick(o.erik);
  // Cancel the two: neither shipped, so restock is offered ticked and a reason is optional.
  await d.clickText(".bulk button", "Cancel…");
  assert.ok(await page.evaluate(`document.querySelector(".bulk input[type=checkbox]").checked`));
  await d.fill(`document.querySelector("#bulk-reason")`, "customer changed mind");
  await d.clickText(".bulk button", "Cancel the orders");
  await d.waitText("Cancelled: 2 orders.");
  for (const id of [o.fia, o.erik]) {
    const c = await order(id);
    assert.deepEqual([c.status, c.cancel_reason], ["cancelled", "customer changed mind"]);
  }
});

test("an unpaid order ships only as an explicit invoice; the list shows it shipped, unpaid", async () => {
  await d.go(`#/orders/${o.ida}`, `Order #${o.ida}`);
  assert.ok(await page.evaluate(`${byText("button", "Ship unpaid")}.disabled`));
  await d.click(byText("label.check", "Ship unpaid (invoice)"));
  await d.clickText("button", "Ship unpaid");
  await d.waitText("Shipped unpaid: the invoice is still open.");
  const shipped = await order(o.ida);
  assert.deepEqual([shipped.status, shipped.date_paid], ["done", null]);
  assert.match(await page.evaluate(`document.querySelector("h1").textContent`), /shipped, unpaid/);
  assert.match(await d.text(), /Shipped .* by API_KEY \(admin\)/);
});

test("cancelling a shipped order asks a reason and does not pre-tick restock; history says so", async () => {
  const before = (await call("GET", `/v1/products/${lamp}`)).stock;
  await d.go(`#/orders/${o.dora}`, `Order #${o.dora}`);
  assert.equal(await page.evaluate(`document.querySelector("#tracking")`), null, "no ship form once shipped");
  await d.clickText("button", "Cancel…");
  assert.equal(await page.evaluate(`document.querySelector(".cancel input[type=checkbox]").checked`), false);
  assert.ok(await page.evaluate(`${byText("button", "Cancel order")}.disabled`), "a reason first");
  await d.review("order-cancel-shipped");
  await d.fill(`document.querySelector("#reason")`, "lost in transit");
  await d.clickText("button", "Cancel order");
  await d.waitText("Cancelled; stock not returned.");
  assert.equal((await call("GET", `/v1/products/${lamp}`)).stock, before);
  assert.match(await d.text(), /Cancelled .*: lost in transit; stock not returned by API_KEY \(admin\)/);
});

test("no lost work: leaving an edit asks first; refusals name the line on screen", async () => {
  const created = await call("POST", "/v1/orders", [{ order_id: "create", products: [{ sku: "ORD-LAMP", qty: 1 }] }]);
  const id = created.results.create_1.order_id;
  await d.go(`#/orders/${id}`, `Order #${id}`);
  await d.fill(`document.querySelector("input.qty")`, "5000");
  // Leaving asks; staying keeps the edit.
  page.pw.once("dialog", (dialog) => dialog.dismiss());
  await page.evaluate(`location.hash = "#/products"`);
  await new Promise((r) => setTimeout(r, 500));
  assert.match(await page.evaluate("location.hash"), new RegExp(`#/orders/${id}`));
  assert.equal(await page.evaluate(`document.querySelector("input.qty").value`), "5000");
  await d.clickText("button", "Save lines");
  await d.waitText("Quantity of Lamp (ORD-LAMP): insufficient stock for ORD-LAMP");
  assert.ok(!(await d.text()).includes("products[0]"));
  page.pw.once("dialog", (dialog) => dialog.accept());
  await page.evaluate(`location.hash = "#/products"`);
  await page.waitFor(`document.querySelector("h1")?.textContent === "Products"`, 20_000);
});

test("prices take a decimal comma, show the currency, and a wrong one is named in words", async () => {
  await d.go(`#/products/${lamp}`, "Lamp");
  await d.fill(`document.querySelector("#price")`, "399,50");
  await d.clickText("button", "Save");
  await d.waitText("Saved.");
  assert.equal((await call("GET", `/v1/products/${lamp}`)).price, 399.5);
  await d.fill(`document.querySelector("#price")`, "39,9,9");
  await d.clickText("button", "Save");
  await d.waitText("Price: write an amount such as 399.50 or 399,50");
  // The wrong price is unsaved: leaving asks.
  page.pw.once("dialog", (dialog) => dialog.accept());
  await d.go("#/products", "Products");
  await d.waitText("399.50 SEK");
});

test("the low-stock mark is per variant, at the threshold the merchant sets", async () => {
  await call("POST", "/v1/products", [
    {
      title: "Shade",
      sku: "ORD-SHADE",
      price: 50,
      variants: {
        add: [
          { variant_option1_name: "Colour", variant_option1_value: "Red", sku: "ORD-SHADE-R", qty: 7 },
          { variant_option1_name: "Colour", variant_option1_value: "Blue", sku: "ORD-SHADE-B", qty: 30 },
        ],
      },
    },
  ]);
  await d.go("#/products", "Products");
  await d.fill(`document.querySelector("#psearch")`, "ORD-SHADE");
  await d.clickText("button", "Search");
  await d.waitText("Shade");
  assert.ok(!(await d.text()).includes("Red: 7"));
  await d.fill(`document.querySelector("#low")`, "8");
  await d.clickText("button", "Search");
  // Folded into a count per product, which opens the low variants.
  await d.waitText("1 variant low");
  await d.clickText("summary", "1 variant low");
  await d.waitText("Red: 7 low");
  assert.ok(!(await d.text()).includes("Blue: 30"));
  await d.review("products-low");
  assert.equal(await page.evaluate(`localStorage.getItem("edge-store-admin-low-stock")`), "8");
});

test("a read-only key is offered no change; a keys-only key lands on Keys", async () => {
  const ro = await call("POST", "/v1/keys", { name: "Viewer", type: "secret", scopes: ["orders:read"] });
  const keysOnly = await call("POST", "/v1/keys", { name: "Keymaster", type: "secret", scopes: ["keys"] });
  const other = await openAdmin(server, { key: ro.key });
  try {
    const od = driver(other);
    await od.go(`#/orders/${o.hans}`, `Order #${o.hans}`);
    const text = await od.text();
    for (const s of ["Mark paid", "Mark shipped", "Cancel…", "Save lines"]) assert.ok(!text.includes(s), s);
    await od.go("#/orders", "Orders");
    await other.evaluate(`document.querySelector("input[aria-label^='Select order']").click()`);
    await od.waitText("1 selected");
    const bulk = await other.evaluate(`document.querySelector(".bulk").innerText`);
    assert.match(await od.text(), /Export CSV/);
    assert.doesNotMatch(bulk, /Mark paid|Ship|Cancel/);
    await od.clickText("summary", "Sign out");
    await od.clickText("button", "This browser");
    await signIn(other, keysOnly.key);
    await other.waitFor(`document.querySelector("h1")?.textContent === "Keys"`, 20_000);
    assert.deepEqual(problems(other.events), []);
  } finally {
    await other.close();
  }
});

test("no CSP violation or script error", () => {
  assert.deepEqual(problems(page.events), []);
});
