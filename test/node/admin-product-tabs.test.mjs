// npm run test:admin: two tabs edit one product's title in headless Chromium (docs/admin.md,
// "No lost work"). The page sends If-Match with the product's ETag for product fields: the second
// save is refused (412), the page says what the title is now, beside the field, keeps what was
// typed and writes nothing; saving again then replaces it knowingly. A sale made while a page is
// open moves the ETag but changes no field it edits: that save goes through.
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
let lamp = 0;
let shade = 0;

/** @param {string} method @param {string} p @param {unknown} [body] */
const call = async (method, p, body) => (await callServer(server, method, p, body)).json;
const title = `document.querySelector("#title")`;
/** The PUTs the page sent since event `from`, with their If-Match. @param {number} from */
const puts = (from) =>
  page.events
    .slice(from)
    .filter((e) => e.method === "Network.requestWillBeSent" && e.params.request.method === "PUT")
    .map((e) => ({ ifMatch: e.params.request.headers["If-Match"], body: JSON.parse(e.params.request.postData) }));

before(async () => {
  server = await startServer();
  const made = await call("POST", "/v1/products", { title: "Tab lamp", sku: "TAB-LAMP", price: 300, stock: 9 });
  lamp = made.products[0].product_id;
  const shades = await call("POST", "/v1/products", {
    title: "Tab shade",
    price: 90,
    variants: { add: [{ variant_option1_name: "Colour", variant_option1_value: "Linen", sku: "TAB-SHADE-L", qty: 5 }] },
  });
  shade = shades.products[0].product_id;
  page = await openAdmin(server);
  d = driver(page);
});

after(() => closeAdmin(page, server));

test("two tabs edit the title: the second save shows the conflict, writes nothing, keeps what was typed", async () => {
  await d.go(`#/products/${lamp}`, "Tab lamp");
  const tab = await page.pw.context().newPage();
  try {
    await tab.goto(`${server.base}/admin/#/products/${lamp}`);
    const wait = async (/** @type {string} */ expr) => {
      const deadline = Date.now() + 20_000;
      while (!(await tab.evaluate(`!!(${expr})`).catch(() => false))) {
        assert.ok(Date.now() < deadline, `the second tab: ${expr}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    await wait(`document.querySelector("#title")?.value === "Tab lamp"`);
    // The second tab saves first.
    await tab.fill("#title", "Desk lamp");
    await tab.click("button[type=submit]");
    await wait(`document.body.innerText.includes("Saved.")`);
    assert.equal((await call("GET", `/v1/products/${lamp}`)).title, "Desk lamp");
  } finally {
    await tab.close();
  }
  // This tab still shows the title it loaded; its save names the one stored now.
  const from = page.events.length;
  await d.fill(title, "Floor lamp");
  await d.clickText("button", "Save");
  await d.waitText("Changed since you opened it");
  const [sent] = puts(from);
  assert.match(sent.ifMatch, /^"[^"]+"$/);
  assert.deepEqual(sent.body, { product_id: lamp, title: "Floor lamp" });
  const text = await d.text();
  assert.match(text, /Title is now “Desk lamp” \(saved in another tab or by someone else\)\. Nothing was saved/);
  assert.equal(
    await page.evaluate(`document.querySelector("#title-hint").textContent`),
    "Changed since you opened it: now “Desk lamp”",
    "beside the field",
  );
  assert.equal(await page.evaluate(`${title}.value`), "Floor lamp", "what was typed is kept");
  assert.equal((await call("GET", `/v1/products/${lamp}`)).title, "Desk lamp", "nothing written");
  for (const width of [390, 1280]) {
    await d.width(width);
    assert.deepEqual(await d.axe(), [], `the conflict at ${width} px`);
  }
  await d.width(1280);
  // Told, the merchant saves again: now against the version just shown.
  await d.clickText("button", "Save");
  await d.waitText("Saved.");
  assert.equal((await call("GET", `/v1/products/${lamp}`)).title, "Floor lamp");
});

test("a sale while the page is open does not refuse a title change: it changes no field the page edits", async () => {
  await d.go("#/products", "Products");
  await d.go(`#/products/${lamp}`, "Floor lamp");
  const order = await call("POST", "/v1/orders", [{ order_id: "create", products: [{ sku: "TAB-LAMP", qty: 1 }] }]);
  assert.equal(order.results.create_1.success, true);
  const from = page.events.length;
  await d.fill(title, "Reading lamp");
  await d.clickText("button", "Save");
  await d.waitText("Saved.");
  // Refused once (the ETag moved with the sale), then sent again with the product's new ETag.
  const sent = puts(from);
  assert.equal(sent.length, 2);
  assert.notEqual(sent[0].ifMatch, sent[1].ifMatch);
  const p = await call("GET", `/v1/products/${lamp}`);
  assert.deepEqual([p.title, p.stock], ["Reading lamp", 8]);
});

test("a variant's price saved elsewhere meanwhile: the conflict is named on its row, nothing written", async () => {
  await d.go(`#/products/${shade}`, "Tab shade");
  // Another tab (here: the API) sets the price first.
  const id = (await call("GET", `/v1/products/${shade}`)).variants[0].variant_id;
  await call("PUT", "/v1/products", { product_id: shade, variants: { update: [{ variant_id: id, price: 95 }] } });
  await d.fill(`document.querySelector("section.variants input.price")`, "99");
  await d.clickText("button", "Save");
  await d.waitText("Changed since you opened it");
  assert.match(await page.evaluate(`document.querySelector("tr.row-error").textContent`), /Linen.*Price is now 95/);
  assert.equal((await call("GET", `/v1/products/${shade}`)).variants[0].price, 95);
  await d.clickText("button", "Save");
  await d.waitText("Saved.");
  assert.equal((await call("GET", `/v1/products/${shade}`)).variants[0].price, 99);
});

test("a change of stock alone is sent without If-Match: its own guard applies", async () => {
  await d.go("#/products", "Products");
  await d.go(`#/products/${lamp}`, "Reading lamp");
  const from = page.events.length;
  await d.fill(`document.querySelector("#stock")`, "+2");
  await d.clickText("button", "Save");
  await d.waitText("Saved.");
  const [sent] = puts(from);
  assert.deepEqual(sent, { ifMatch: undefined, body: { product_id: lamp, adjust: 2 } });
});

test("no CSP violation or script error", () => {
  assert.deepEqual(problems(page.events), []);
});
