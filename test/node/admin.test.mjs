// npm run test:admin: the admin at /admin (docs/admin.md) in headless Chromium, against the
// README's serve command: sign in with the key (kept nowhere in the browser), then each daily task
// end to end, checked against the API; every page at 360 px and at desktop width with no axe-core
// violation of any impact, screenshots saved for review; sign-out ends the session server-side.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { firstLoadBytes } from "../../admin/build.mjs";
import { byText, driver, openAdmin } from "./admin-page.mjs";
import { problems } from "./playwright-page.mjs";
import { callServer, startServer } from "./serve.mjs";

const SHOTS = process.env.ADMIN_SCREENSHOTS ?? mkdtempSync(path.join(tmpdir(), "edge-store-admin-"));

/** @type {import("./serve.mjs").Server} */
let server;
/** @type {import("./admin-page.mjs").Page} */
let page;
/** @type {ReturnType<typeof driver>} */
let d;
/** @type {import("node:http").Server} */
let receiver;
let receiverUrl = "";
/** @type {Record<string, number>} */
const orders = {};
/** @type {Record<string, any>} */
const products = {};

/** @param {string} method @param {string} p @param {unknown} [body] */
const call = async (method, p, body) => (await callServer(server, method, p, body)).json;

before(async () => {
  server = await startServer();
  receiver = createServer((_, res) => res.writeHead(204).end());
  await new Promise((resolve) => receiver.listen(0, "127.0.0.1", () => resolve(undefined)));
  receiverUrl = `http://127.0.0.1:${/** @type {import("node:net").AddressInfo} */ (receiver.address()).port}/hook`;
  const made = await call("POST", "/v1/products", [
    { title: "Admin mug", sku: "ADM-MUG", price: 100, stock: 10, disable_minusqty: 1 },
    { title: "Admin cap", sku: "ADM-CAP", price: 50, stock: 2 },
    {
      title: "Admin tee",
      sku: "ADM-TEE",
      price: 200,
      variants: {
        add: [
          { variant_option1_name: "Size", variant_option1_value: "S", sku: "ADM-TEE-S", qty: 8 },
          { variant_option1_name: "Size", variant_option1_value: "M", sku: "ADM-TEE-M", qty: 1 },
        ],
      },
    },
  ]);
  for (const p of made.products) products[p.sku] = p;
  const customer = (/** @type {string} */ first, /** @type {string} */ last) => ({
    email: `${first.toLowerCase()}@example.com`,
    billing_details: {
      firstname: first,
      lastname: last,
      address: "Storgatan 1",
      city: "Stockholm",
      zipcode: "111 22",
      country: "SE",
    },
  });
  const created = await call("POST", "/v1/orders", [
    { order_id: "create", customer: customer("Anna", "Svensson"), products: [{ sku: "ADM-MUG", qty: 2 }] },
    { order_id: "create", customer: customer("Bo", "Berg"), products: [{ sku: "ADM-MUG", qty: 1 }] },
    { order_id: "create", customer: customer("Cia", "Carlsson"), products: [{ sku: "ADM-MUG", qty: 1 }] },
    // Enough more for a second page of 25.
    ...Array.from({ length: 26 }, () => ({ order_id: "create", products: [{ sku: "ADM-CAP", qty: 1 }] })),
  ]);
  orders.anna = created.results.create_1.order_id;
  orders.bo = created.results.create_2.order_id;
  orders.cia = created.results.create_3.order_id;
  page = await openAdmin(server, { signedIn: false });
  d = driver(page);
});

after(async () => {
  try {
    await page?.close();
  } finally {
    receiver?.close();
    await server?.stop();
  }
  console.log(`admin screenshots: ${SHOTS}`);
});

/** Screenshot of the page at both widths, and every axe-core finding there. */

test("the first load is small: under 50 KB gzip", async () => {
  const bytes = await firstLoadBytes();
  assert.ok(bytes < 50 * 1024, `${bytes} bytes`);
});

test("/admin is served with a strict Content-Security-Policy, from the static assets", async () => {
  const res = await fetch(`${server.base}/admin/`);
  assert.equal(res.status, 200);
  const csp = res.headers.get("content-security-policy") ?? "";
  for (const rule of ["default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"]) {
    assert.ok(csp.includes(rule), `${rule} in ${csp}`);
  }
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  // Served by the assets, not the Worker: no request id, no bookmark.
  assert.equal(res.headers.get("x-request-id"), null);
});

test("the sign-in page, by keyboard: the key goes nowhere but the session cookie", async () => {
  await d.review("signin", { shots: SHOTS });
  await d.width(1280);
  // The page focuses its heading; the key field is the next stop.
  await d.press("Tab");
  assert.equal(await page.evaluate("document.activeElement.id"), "key");
  await page.type("not-the-key");
  await d.press("Enter");
  await d.waitText("not a live secret key");
  await d.fill(`document.querySelector("#key")`, server.key);
  await d.press("Enter");
  await page.waitFor(`document.querySelector("nav a[href='#/orders']")`, 20_000);
  const stored = await page.evaluate("JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage })");
  assert.ok(!stored.includes(server.key), "the key is not in web storage");
  assert.equal(await page.evaluate("document.cookie"), "", "the session cookie is HttpOnly");
  const { cookies } = await page.send("Network.getCookies", { urls: [server.base] });
  const session = cookies.find((/** @type {any} */ c) => c.name === "__Host-session");
  assert.ok(session, "Chromium kept the __Host- cookie on http://127.0.0.1");
  assert.deepEqual([session.httpOnly, session.secure, session.sameSite, session.path], [true, true, "Strict", "/"]);
});

test("orders: count, search by e-mail, name, id and SKU, views, page through", async () => {
  await d.go("#/orders", "Orders");
  // Newest first, 25 a page: the first orders are on the second page.
  await d.waitText(`#${orders.anna + 28}`);
  await d.waitText("29 orders");
  assert.ok(!(await d.text()).includes(`#${orders.anna}\t`));
  await d.clickText("button", "Next");
  await d.waitText(`#${orders.anna}`);
  assert.ok(await page.evaluate(`${byText("button", "Next")}.disabled`), "the last page");
  await d.clickText("button", "Previous");
  await d.waitText(`#${orders.anna + 28}`);
  for (const q of ["anna@example", "Svensson", String(orders.anna)]) {
    await d.fill(`document.querySelector("#search")`, q);
    await d.clickText("button", "Search");
    await page.waitFor(`document.querySelectorAll("tbody tr").length === 1`, 20_000);
    assert.match(await d.text(), new RegExp(`#${orders.anna}`));
  }
  await d.fill(`document.querySelector("#search")`, "adm-mug");
  await d.clickText("button", "Search");
  await d.waitText("3 orders");
  await d.fill(`document.querySelector("#search")`, "");
  await d.clickText("button", "Search");
  await d.clickText(".views a", "Cancelled");
  await d.waitText("No orders match.");
  await d.clickText(".views a", "Unpaid");
  await page.waitFor(`document.querySelectorAll("tbody tr").length === 25`, 20_000);
  const shown = await page.evaluate(
    `[...new Set([...document.querySelectorAll("tbody .badge")].map((b) => b.textContent))]`,
  );
  assert.deepEqual(shown, ["unpaid"]);
  await d.review("orders", { shots: SHOTS });
});

test("an order: lines, customer, totals, history; edit its lines; the API's refusal shown", async () => {
  await d.go(`#/orders/${orders.anna}`, `Order #${orders.anna}`);
  const text = await d.text();
  for (const s of ["Admin mug", "anna@example.com", "Anna Svensson", "Storgatan 1", "Total", "200.00 SEK", "Created"]) {
    assert.ok(text.includes(s), `${s} on the page`);
  }
  await d.review("order", { shots: SHOTS });
  await d.width(1280);
  // By keyboard: Tab from the top of the page reaches every control, in order.
  // Every control a person can reach: a closed menu's buttons are not (its summary is).
  const CONTROLS = `[...document.querySelectorAll("a[href], button:not([disabled]), input, select, summary, [tabindex='0']")]
    .filter((e) => e.checkVisibility())`;
  const controls = await page.evaluate(`${CONTROLS}.length`);
  await page.evaluate(`window.focused = new Set();
    document.addEventListener("focusin", (e) => window.focused.add(e.target));
    document.querySelector("a[href]").focus()`);
  for (let i = 1; i < controls; i++) await d.press("Tab");
  const missed = await page.evaluate(
    `${CONTROLS}.filter((e) => !window.focused.has(e)).map((e) => e.outerHTML.slice(0, 80))`,
  );
  assert.deepEqual(missed, [], "every control takes the focus");
  // Too many for the stock: the API's own words.
  await d.fill(`document.querySelector("input.qty")`, "50");
  await d.clickText("button", "Save lines");
  await d.waitText("insufficient stock for ADM-MUG");
  await d.fill(`document.querySelector("input.qty")`, "3");
  await d.fill(`document.querySelector("#add-sku")`, "ADM-CAP");
  await d.clickText("button", "Save lines");
  await d.waitText("Lines saved.");
  const order = await call("GET", `/v1/orders/${orders.anna}`);
  assert.deepEqual(
    order.products.map((/** @type {any} */ l) => [l.sku, l.qty]),
    [
      ["ADM-MUG", 3],
      ["ADM-CAP", 1],
    ],
  );
  assert.equal(order.total, 350);
});

test("an order: pay, then ship with a tracking number", async () => {
  await d.clickText("button", "Mark paid");
  await d.waitText("Marked paid.");
  assert.equal((await call("GET", `/v1/orders/${orders.anna}`)).status, "paid");
  await d.fill(`document.querySelector("#tracking")`, "230491712300");
  await d.fill(`document.querySelector("#company")`, "DHL");
  await d.clickText("button", "Mark shipped");
  await d.waitText("Marked shipped.");
  const order = await call("GET", `/v1/orders/${orders.anna}`);
  assert.equal(order.status, "done");
  assert.deepEqual(order.shipping_info, { trackingnumber: "230491712300", company: "DHL" });
  assert.match(await d.text(), /Shipped .* by API_KEY \(admin\)/);
});

test("an order: cancel with restock, and another without", async () => {
  const stock = async () => (await call("GET", `/v1/products/${products["ADM-MUG"].product_id}`)).stock;
  const before = await stock();
  for (const [id, restock] of /** @type {const} */ ([
    [orders.bo, true],
    [orders.cia, false],
  ])) {
    await d.go(`#/orders/${id}`, `Order #${id}`);
    await d.clickText("button", "Cancel…");
    if (!restock) await d.click(`document.querySelector(".cancel input[type=checkbox]")`);
    await d.clickText("button", "Cancel order");
    await d.waitText(restock ? "Cancelled; stock returned." : "Cancelled; stock not returned.");
    assert.equal((await call("GET", `/v1/orders/${id}`)).status, "cancelled");
  }
  assert.equal(await stock(), before + 1, "only the restocked order gave its mug back");
});

test("products: search, stock at a glance, low stock marked", async () => {
  await d.go("#/products", "Products");
  await d.waitText("Admin mug");
  const low = await page.evaluate(`[...document.querySelectorAll("tr.row-low")].map((r) => r.cells[0].textContent)`);
  assert.ok(
    low.some((/** @type {string} */ t) => t.startsWith("Admin cap")),
    `low: ${low}`,
  );
  assert.ok(!low.some((/** @type {string} */ t) => t.startsWith("Admin mug")));
  await d.fill(`document.querySelector("#psearch")`, "ADM-TEE");
  await d.clickText("button", "Search");
  await page.waitFor(`document.querySelectorAll("tbody tr").length === 1`, 20_000);
  await d.review("products", { shots: SHOTS });
});

test("a product: title, price, stock, visibility; its variants' stock and price in one PUT", async () => {
  const mug = products["ADM-MUG"].product_id;
  await d.go(`#/products/${mug}`, "Admin mug");
  await d.fill(`document.querySelector("#title")`, "Admin mug XL");
  await d.fill(`document.querySelector("#price")`, "129.50");
  await d.fill(`document.querySelector("#stock")`, "40");
  await d.click(`document.querySelector("form.product input[type=checkbox]")`);
  await d.clickText("button", "Save");
  await d.waitText("Saved.");
  const p = await call("GET", `/v1/products/${mug}`);
  assert.deepEqual([p.title, p.price, p.stock, p.visible], ["Admin mug XL", 129.5, 40, 0]);

  const tee = products["ADM-TEE"].product_id;
  await d.go(`#/products/${tee}`, "Admin tee");
  assert.ok(await page.evaluate(`document.querySelectorAll("tr.row-low").length === 1`), "size M is low");
  await d.review("product", { shots: SHOTS });
  await d.width(1280);
  await d.fill(`document.querySelectorAll("input.qty")[0]`, "12");
  await d.fill(`document.querySelectorAll("input.qty")[1]`, "6");
  await d.fill(`document.querySelectorAll("input.price")[1]`, "210.00");
  const sent = page.events.length;
  await d.clickText("button", "Save");
  await d.waitText("Saved.");
  const puts = page.events
    .slice(sent)
    .filter((e) => e.method === "Network.requestWillBeSent" && e.params.request.method === "PUT");
  assert.equal(puts.length, 1, "one PUT");
  const t = await call("GET", `/v1/products/${tee}`);
  assert.deepEqual(
    t.variants.map((/** @type {any} */ v) => [v.sku, v.qty, v.price]),
    [
      ["ADM-TEE-S", 12, 200],
      ["ADM-TEE-M", 6, 210],
    ],
  );
});

test("webhooks: add an endpoint, send a test, see its deliveries with status and time, remove it", async () => {
  await d.go("#/webhooks", "Webhooks");
  await d.fill(`document.querySelector("#wh-url")`, receiverUrl);
  await d.clickText("button", "Add endpoint");
  await d.waitText("Signing secret, shown this once");
  assert.match(await d.text(), /whsec_/);
  await d.clickText("button", "Send test");
  await d.waitText("Test delivered.");
  await d.waitText("webhook.test");
  // An event for it: a product change.
  await call("PUT", "/v1/products", { product_id: products["ADM-CAP"].product_id, stock: 9 });
  const deadline = Date.now() + 30_000;
  while (!(await d.text()).includes("product.update") && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 1000));
    await d.clickText("button", "Refresh");
  }
  const row = await page.evaluate(
    `[...document.querySelectorAll(".card tbody tr")].map((r) => r.innerText).join("\\n")`,
  );
  assert.match(row, /product\.update/);
  assert.match(row, /\b204\b/);
  assert.match(row, /\d+ ms/);
  // The delivery names its product.
  assert.match(row, new RegExp(`product\\.update product ${products["ADM-CAP"].product_id}`));
  // Its payload, on demand: the body a delivery sends, indented, and folded away again.
  await d.clickText(".card tbody button", "Payload");
  await page.waitFor(`document.querySelector("tr.payload pre.json")`, 20_000);
  const payload = JSON.parse(await page.evaluate(`document.querySelector("tr.payload pre.json").textContent`));
  assert.equal(payload.type, "product.update");
  assert.equal(payload.data.product_id, products["ADM-CAP"].product_id);
  assert.match(await page.evaluate(`document.querySelector("tr.payload").innerText`), /^POST http/);
  assert.match(await page.evaluate(`document.querySelector("tr.payload pre.json").textContent`), /\n {2}"type"/);
  await d.review("webhooks", { shots: SHOTS });
  await d.width(1280);
  // Sent again: its attempt arrives on top while the open row's Hide button is in hand; that
  // button still folds its own delivery, not the one that now sits in its place.
  const hide = (await page.pw.evaluateHandle(byText(".card tbody button", "Hide payload"))).asElement();
  assert.ok(hide);
  await d.clickText(".card tbody button", "Resend");
  await d.waitText("Sent product.update again");
  const attempts = `document.querySelectorAll(".card tbody tr:not(.payload)").length`;
  const before = await page.evaluate(attempts);
  const until = Date.now() + 30_000;
  while ((await page.evaluate(attempts)) === before && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 1000));
    await d.clickText("button", "Refresh");
  }
  assert.equal(await page.evaluate(attempts), before + 1);
  await hide.click();
  await page.waitFor(`!document.querySelector("tr.payload")`, 20_000);
  await d.width(1280);
  await d.clickText("button", "Remove…");
  await d.click(byText(".card button", "Remove"));
  await d.waitText("No endpoints yet.");
  assert.deepEqual((await call("GET", "/v1/webhooks")).webhooks, []);
});

test("shipping: add a method, change its price and visibility, delete it", async () => {
  await d.go("#/shipping", "Shipping");
  await d.waitText("No shipping methods yet.");
  await d.fill(`document.querySelector("#new-name")`, "Postnord");
  await d.fill(`document.querySelector("#new-price")`, "49.50");
  await d.fill(`document.querySelector("#new-free")`, "500");
  await d.fill(`document.querySelector("#new-countries")`, "se, no");
  await d.clickText("button", "Add method");
  await d.waitText("Method added.");
  const [m] = (await call("GET", "/v1/shipping-methods")).shipping_methods;
  assert.deepEqual([m.name, m.price, m.free_over, m.countries, m.visible], ["Postnord", 49.5, 500, ["SE", "NO"], true]);
  assert.match(await d.text(), /49\.50 SEK · free from 500\.00 SEK · SE, NO/);
  await d.review("shipping", { shots: SHOTS });
  await d.width(1280);
  await d.clickText("button", "Change…");
  await d.fill(`document.querySelector("#m${m.id}-price")`, "59");
  await d.fill(`document.querySelector("#m${m.id}-free")`, "");
  await d.click(byText(".card label.check", "Offered to storefronts"));
  await d.clickText(".card button", "Save");
  await page.waitFor(`document.querySelector(".card .badge")?.textContent === "hidden"`, 20_000);
  const [changed] = (await call("GET", "/v1/shipping-methods")).shipping_methods;
  assert.deepEqual([changed.price, changed.free_over, changed.visible], [59, null, false]);
  // A decimal comma is the merchant's way of writing money: "12,50" is 12.50. What is not an
  // amount goes to the API as typed, and its refusal is shown under the field's label.
  await d.fill(`document.querySelector("#new-name")`, "Broken");
  await d.fill(`document.querySelector("#new-price")`, "12,505");
  await d.clickText("button", "Add method");
  await d.waitText("Price: must use a point as the decimal separator");
  // Emptied, the form has nothing unsaved, so leaving the page later asks nothing.
  await d.fill(`document.querySelector("#new-name")`, "");
  await d.fill(`document.querySelector("#new-price")`, "");
  await d.clickText("button", "Delete…");
  await d.click(byText(".card button", "Delete"));
  await d.waitText("No shipping methods yet.");
  assert.deepEqual((await call("GET", "/v1/shipping-methods")).shipping_methods, []);
});

test("keys: create one (shown once), revoke it", async () => {
  await d.go("#/keys", "Keys");
  await d.fill(`document.querySelector("#key-name")`, "Warehouse");
  await d.click(byText("label.check", "orders:read"));
  await d.clickText("button", "Create key");
  await d.waitText("shown this once");
  const key = /sk_[0-9a-f]{48}/.exec(await d.text())?.[0];
  assert.ok(key);
  const listed = (await call("GET", "/v1/keys")).keys.find((/** @type {any} */ k) => k.name === "Warehouse");
  assert.deepEqual(listed.scopes, ["orders:read"]);
  await d.review("keys", { shots: SHOTS });
  await d.width(1280);
  await d.clickText("button", "Revoke…");
  await d.clickText("button", "Revoke Warehouse");
  await page.waitFor(`document.body.innerText.includes("1 revoked")`, 20_000);
  const revoked = await fetch(`${server.base}/v1/orders`, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(revoked.status, 401);
});

test("no CSP violation or script error on any page", () => {
  assert.deepEqual(problems(page.events), []);
  const foreign = page.events
    .filter((e) => e.method === "Network.requestWillBeSent")
    .map((e) => /** @type {string} */ (e.params.request.url))
    .filter((u) => !u.startsWith(`${server.base}/`));
  // A CSV export is a download of a blob: URL the page made itself; a date field's calendar icon
  // is Chromium's own data: image.
  assert.deepEqual(
    foreign.filter((u) => !u.startsWith("blob:") && !u.startsWith("data:")),
    [],
  );
  // The admin called nothing but /v1, its own files and /health (the configuration warnings its
  // banner repeats).
  const calls = page.events
    .filter((e) => e.method === "Network.requestWillBeSent")
    .map((e) => /** @type {string} */ (e.params.request.url))
    .filter((u) => u.startsWith(`${server.base}/`))
    .map((u) => new URL(u).pathname)
    .filter((p) => !p.startsWith("/admin"));
  assert.ok(
    calls.every((p) => p.startsWith("/v1/") || p === "/health"),
    calls.join("\n"),
  );
});

test("sign-out ends the session on the server at once", async () => {
  const { cookies } = await page.send("Network.getCookies", { urls: [server.base] });
  const cookie = cookies.find((/** @type {any} */ c) => c.name === "__Host-session");
  await d.clickText("summary", "Sign out");
  await d.clickText("button", "This browser");
  await page.waitFor(`document.querySelector("#key")`, 20_000);
  assert.match(await d.text(), /Signed out\./);
  // The old cookie, replayed, is refused: the session ended in D1, not just in the browser.
  const replay = await fetch(`${server.base}/v1/orders`, { headers: { cookie: `${cookie.name}=${cookie.value}` } });
  assert.equal(replay.status, 401);
});
