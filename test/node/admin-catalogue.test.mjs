// npm run test:admin: a merchant builds a product from nothing in headless Chromium (docs/admin.md,
// "Products"): its fields, an image with its preview, two options and the variants they make,
// a refusal shown beside the field it names; the storefront page of docs/storefront.md, served
// from another origin, then sells one variant with a publishable key, and the admin shows the
// order and the stock it took; the merchant edits it later (a new option value, a new variant) and deletes it
// after a confirmation naming it. axe at 390 and 1280 px on the new and the edit page.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import path from "node:path";
import { after, before, test } from "node:test";
import { driver, openAdmin } from "./admin-page.mjs";
import { problems } from "./playwright-page.mjs";
import { callServer, root, startServer } from "./serve.mjs";

/** @type {import("./serve.mjs").Server} */
let server;
/** @type {import("./admin-page.mjs").Page} */
let page;
/** @type {ReturnType<typeof driver>} */
let d;
let made = 0;
/** The shop's own server, another origin than the API's, and the page it serves. */
/** @type {import("node:http").Server} */
let shopServer;
let shopOrigin = "";
let shopHtml = "";

/** @param {string} method @param {string} p @param {unknown} [body] */
const call = async (method, p, body) => (await callServer(server, method, p, body)).json;
const $ = (/** @type {string} */ css) => `document.querySelector(${JSON.stringify(css)})`;
/** The input of the variant row named `name` whose class is `cls`. @param {string} name @param {string} cls */
const cell = (name, cls) =>
  `[...document.querySelectorAll("section.variants tbody tr")].find((r) => r.cells[0].textContent.startsWith(${JSON.stringify(name)})).querySelector("input.${cls}")`;
/**
 * The storefront page of docs/storefront.md ("A storefront page") as the manual shows it, pointed
 * at this server with this key: the example itself is what sells, so it cannot drift.
 * @param {string} base @param {string} pk
 */
function storefrontPage(base, pk) {
  const doc = readFileSync(path.join(root, "docs", "storefront.md"), "utf8");
  const html = /## A storefront page[\s\S]*?```html\n([\s\S]*?)```/.exec(doc)?.[1];
  assert.ok(html, "docs/storefront.md has its storefront page");
  const pointed = html
    .replace('"https://edge-store.example.workers.dev"', JSON.stringify(base))
    .replace('"pk_..."', JSON.stringify(pk));
  assert.ok(pointed.includes(base) && pointed.includes(pk), "the page names the API's address and the key as expected");
  return pointed;
}
/** A 1x1 PNG, served for the image host so the preview has something to show. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);

before(async () => {
  server = await startServer();
  shopServer = createServer((_, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end(shopHtml);
  });
  await new Promise((resolve) => shopServer.listen(0, "127.0.0.1", () => resolve(undefined)));
  shopOrigin = `http://127.0.0.1:${/** @type {import("node:net").AddressInfo} */ (shopServer.address()).port}`;
  await call("POST", "/v1/products", { title: "Taken", sku: "CAT-TAKEN", price: 10 });
  page = await openAdmin(server);
  await page.pw
    .context()
    .route("https://img.example.com/**", (r) => r.fulfill({ contentType: "image/png", body: PNG }));
  d = driver(page);
});

after(async () => {
  try {
    await page?.close();
  } finally {
    shopServer?.close();
    await server?.stop();
  }
});

test("a product from nothing: fields, an image previewed, two options make four variants", async () => {
  await d.go("#/products", "Products");
  await d.clickText("a", "New product");
  await page.waitFor(`document.querySelector("h1")?.textContent === "New product"`, 20_000);
  for (const [id, value] of [
    ["title", "Catalogue tee"],
    ["description", "Organic cotton, boxy fit."],
    ["price", "249,50"],
    ["tax_rate", "12"],
    ["sku", "CAT-TEE"],
    ["brand", "Edge"],
    ["weight", "180"],
    ["categories", "Clothes > Shirts\nSale"],
    ["seo_title", "Catalogue tee in organic cotton"],
    ["seo_description", "A boxy tee."],
  ])
    await d.fill($(`#${id}`), value);
  await d.clickText("button", "Add an image");
  await d.fill($("#img-0"), "https://img.example.com/tee.png");
  await d.fill($("#alt-0"), "The tee, front");
  await page.waitFor(`${$(".images img")}?.complete && ${$(".images img")}.naturalWidth === 1`, 20_000);
  await d.clickText("button", "Add an option");
  await d.fill($("#opt-0"), "Colour");
  await d.fill($("#optv-0"), "Red, Blue");
  await d.clickText("button", "Add an option");
  await d.fill($("#opt-1"), "Size");
  await d.fill($("#optv-1"), "S, M");
  await d.waitText("2 × 2 = 4");
  const names = await page.evaluate(
    `[...document.querySelectorAll("section.variants tbody tr")].map((r) => r.cells[0].textContent + " " + r.querySelector("input.sku").value)`,
  );
  assert.deepEqual(names, [
    "Red / S new CAT-TEE-RED-S",
    "Red / M new CAT-TEE-RED-M",
    "Blue / S new CAT-TEE-BLUE-S",
    "Blue / M new CAT-TEE-BLUE-M",
  ]);
  for (const [i, qty] of ["5", "8", "3", "12"].entries())
    await d.fill(`document.querySelectorAll("section.variants input.qty")[${i}]`, qty);
  await d.fill(cell("Blue / M", "price"), "259");
  // A SKU another product holds: the API's 409 is shown on the row it names, nothing is created.
  await d.fill(cell("Red / S", "sku"), "CAT-TAKEN");
  await d.review("product-new", { widths: [390, 1280] });
  await d.clickText("button", "Create product");
  await page.waitFor(`document.querySelector("tr.row-error")`, 20_000);
  const rowError = await page.evaluate(`${$("tr.row-error")}.textContent`);
  assert.match(rowError, /^Red \/ S.*SKU of Red \/ S: .*CAT-TAKEN/);
  assert.match(await d.text(), /SKU of Red \/ S: /);
  assert.equal((await call("GET", "/v1/products?sku=CAT-TEE-BLUE-M")).length ?? 0, 0);
  await d.fill(cell("Red / S", "sku"), "CAT-TEE-RED-S");
  await d.clickText("button", "Create product");
  await page.waitFor(`document.querySelector("h1")?.textContent === "Catalogue tee"`, 20_000);
  made = Number(/#\/products\/(\d+)/.exec(await page.evaluate("location.hash"))?.[1]);
  const p = await call("GET", `/v1/products/${made}`);
  assert.deepEqual(
    [p.title, p.description, p.price, p.tax_rate, p.sku, p.brand, p.weight, p.seo_title, p.seo_description, p.visible],
    [
      "Catalogue tee",
      "Organic cotton, boxy fit.",
      249.5,
      12,
      "CAT-TEE",
      "Edge",
      180,
      "Catalogue tee in organic cotton",
      "A boxy tee.",
      1,
    ],
  );
  assert.deepEqual(p.categories, [["Clothes", "Shirts"], ["Sale"]]);
  assert.deepEqual(p.images, [{ url: "https://img.example.com/tee.png", alttext: "The tee, front" }]);
  assert.deepEqual(
    p.variants.map((/** @type {any} */ v) => [v.variant_option1_value, v.variant_option2_value, v.sku, v.qty, v.price]),
    [
      ["Red", "S", "CAT-TEE-RED-S", 5, 249.5],
      ["Red", "M", "CAT-TEE-RED-M", 8, 249.5],
      ["Blue", "S", "CAT-TEE-BLUE-S", 3, 249.5],
      ["Blue", "M", "CAT-TEE-BLUE-M", 12, 259],
    ],
  );
  // With variants, the product's own price is named for what it is: orders use the variants'.
  assert.equal(await page.evaluate(`document.querySelector("label[for=price]").textContent`), "Price of new variants");
});

test("bought through the storefront page of docs/storefront.md; the admin shows the order and the stock it took", async () => {
  const pk = (await call("POST", "/v1/keys", { name: "shop", type: "publishable", allowed_origins: [shopOrigin] })).key;
  await call("POST", "/v1/shipping-methods", { name: "Post", price: 49, countries: ["SE"] });
  // The shop's page, another origin, in a tab of the same browser: the customer picks the variant.
  const shop = await page.pw.context().newPage();
  shopHtml = storefrontPage(server.base, pk);
  await shop.goto(`${shopOrigin}/`);
  await shop.locator("#item option[value='CAT-TEE-BLUE-M']").waitFor({ state: "attached" });
  assert.equal(
    await shop.locator("#item option[value='CAT-TEE-BLUE-M']").textContent(),
    "Catalogue tee, Blue / M: 259.00",
  );
  assert.match((await shop.textContent("#catalog")) ?? "", /Catalogue tee, Blue \/ M: 259\.00 \(in_stock\)/);
  await shop.selectOption("#item", "CAT-TEE-BLUE-M");
  await shop.fill("#qty", "2");
  await shop.click("#buy");
  await shop.locator("#result", { hasText: "Order" }).waitFor();
  const result = (await shop.textContent("#result")) ?? "";
  const bought = /^Order (\d+): (\d+), unpaid$/.exec(result);
  assert.ok(bought, result);
  assert.equal(Number(bought[2]), 2 * 259 + 49);
  await shop.close();
  // The merchant's admin: the new order in the list and on its page, and the variant's stock 12 - 2.
  await d.go("#/orders", "Orders");
  await d.waitText("anna@example.com");
  await d.go(`#/orders/${bought[1]}`, `Order #${bought[1]}`);
  const order = await d.text();
  assert.match(order, /CAT-TEE-BLUE-M/);
  assert.match(order, /567\.00/);
  await d.go("#/products", "Products");
  await d.go(`#/products/${made}`, "Catalogue tee");
  assert.equal(await page.evaluate(`${cell("Blue / M", "qty")}.value`), "10");
});

test("edited later: a description, an option renamed, a new size makes two new variants, the others keep stock and ids", async () => {
  await d.go(`#/products/${made}`, "Catalogue tee");
  const before = await call("GET", `/v1/products/${made}`);
  await d.fill($("#description"), "Organic cotton, boxy fit. Pre-washed.");
  await d.fill($("#opt-0"), "Color");
  await d.fill($("#optv-1"), "S, M, L");
  await d.waitText("2 × 3 = 6");
  await d.fill(cell("Red / L", "qty"), "7");
  // A refusal of the API naming a field is shown beside that field.
  await d.fill($("#img-0"), "http://img.example.com/tee.png");
  await d.clickText("button", "Save");
  await page.waitFor(`document.querySelector(".images .field-error")`, 20_000);
  assert.match(await page.evaluate(`${$(".images .field-error")}.textContent`), /^Images: .*https/);
  assert.equal((await call("GET", `/v1/products/${made}`)).updated_at, before.updated_at, "nothing written");
  await d.fill($("#img-0"), "https://img.example.com/tee.png");
  await d.clickText("button", "Save");
  await d.waitText("Saved.");
  const p = await call("GET", `/v1/products/${made}`);
  assert.equal(p.description, "Organic cotton, boxy fit. Pre-washed.");
  assert.deepEqual(new Set(p.variants.map((/** @type {any} */ v) => v.variant_option1_name)), new Set(["Color"]));
  const kept = Object.fromEntries(before.variants.map((/** @type {any} */ v) => [v.sku, [v.variant_id, v.qty]]));
  assert.deepEqual(
    p.variants.map((/** @type {any} */ v) => [v.sku, kept[v.sku]?.[0] === v.variant_id, v.qty]),
    [
      ["CAT-TEE-RED-S", true, 5],
      ["CAT-TEE-RED-M", true, 8],
      ["CAT-TEE-RED-L", false, 7],
      ["CAT-TEE-BLUE-S", true, 3],
      ["CAT-TEE-BLUE-M", true, 10],
      ["CAT-TEE-BLUE-L", false, 0],
    ],
  );
  await d.review("product-edit", { widths: [390, 1280] });
  // The docs' picture (docs/admin-product.png): the whole editor at 1280 px, its save bar last.
  const dir = process.env.ADMIN_SCREENSHOTS;
  if (dir) {
    await page.pw.setViewportSize({
      width: 1280,
      height: await page.evaluate("document.documentElement.scrollHeight"),
    });
    writeFileSync(path.join(dir, "product-editor.png"), await page.pw.screenshot());
    await d.width(1280);
  }
});

test("deleted after a confirmation that names it", async () => {
  await d.go(`#/products/${made}`, "Catalogue tee");
  await d.clickText("button", "Delete product");
  assert.match(await d.text(), /Delete “Catalogue tee” and its 6 variants\? Past orders keep their lines/);
  await d.clickText("button", "Delete “Catalogue tee”");
  await page.waitFor(`document.querySelector("h1")?.textContent === "Products"`, 20_000);
  assert.equal((await callServer(server, "GET", `/v1/products/${made}`)).status, 404);
});

test("no CSP violation or script error", () => {
  assert.deepEqual(problems(page.events), []);
});
