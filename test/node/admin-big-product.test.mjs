// npm run test:admin: a product of 2,048 variants in headless Chromium (docs/admin.md,
// "Products"): it opens in under a second and a keystroke in its filter takes under 50 ms
// (measured in the page with performance.now(), the figures printed); the merchant finds one
// variant by its values, changes its price and reads "Saved." beside the save button, on screen;
// the product list folds its low variants into a count that opens them. axe at 390 and 1280 px.
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
let big = 0;

/** @param {string} method @param {string} p @param {unknown} [body] */
const call = async (method, p, body) => (await callServer(server, method, p, body)).json;
const median = (/** @type {number[]} */ xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const COLOURS = ["Red", "Blue", "Green", "Black", "White", "Grey", "Navy", "Sand"];
const SIZES = ["XS", "S", "M", "L", "XL", "XXL", "3XL", "4XL"];
const FITS = ["Slim", "Regular", "Loose", "Boxy"];
const CUTS = ["Crew", "Vee", "Henley", "Polo", "Scoop", "Mock", "Raglan", "Tank"];

before(async () => {
  server = await startServer();
  const add = [];
  for (const c of COLOURS)
    for (const s of SIZES)
      for (const f of FITS)
        for (const k of CUTS)
          add.push({
            variant_option1_name: "Colour",
            variant_option1_value: c,
            variant_option2_name: "Size",
            variant_option2_value: s,
            variant_option3_name: "Fit",
            variant_option3_value: f,
            variant_option4_name: "Cut",
            variant_option4_value: k,
            sku: `BIG-${c}-${s}-${f}-${k}`.toUpperCase(),
            qty: add.length % 3 === 0 ? 2 : 40,
          });
  assert.equal(add.length, 2048);
  const r = await call("POST", "/v1/products", { title: "Big tee", sku: "BIG", price: 199, variants: { add } });
  assert.equal(r.success, 1, JSON.stringify(r.errors));
  big = r.products[0].product_id;
  page = await openAdmin(server);
  d = driver(page);
});

after(() => closeAdmin(page, server));

/** Opens the product from the list in the page and answers the milliseconds until its variants show. */
const openTimed = async () => {
  await d.go("#/products", "Products");
  return page.evaluate(`new Promise((resolve) => {
    const t0 = performance.now();
    location.hash = "#/products/${big}";
    const done = () => document.querySelectorAll("section.variants tbody tr").length === 50
      && document.querySelector("h1")?.textContent === "Big tee";
    const check = () => (done() ? resolve(performance.now() - t0) : setTimeout(check, 5));
    check();
  })`);
};

test("opens in under a second and types in under 50 ms; one variant found, changed, saved in sight", async () => {
  const opens = [];
  for (let i = 0; i < 3; i++) opens.push(await openTimed());
  const rendered = await page.evaluate(`document.querySelectorAll("main *").length`);
  // Each keystroke: from its keydown to the filtered table laid out.
  await page.evaluate(`(() => {
    const f = document.querySelector("#vfilter");
    window.keys = [];
    f.addEventListener("keydown", () => { window.t0 = performance.now(); }, true);
    f.addEventListener("input", () => setTimeout(() => {
      document.body.getBoundingClientRect();
      window.keys.push(performance.now() - window.t0);
    }, 0));
  })()`);
  await page.pw.focus("#vfilter");
  await page.pw.keyboard.type("navy xl boxy polo", { delay: 30 });
  await page.waitFor(`window.keys.length === 17`, 20_000);
  const keys = /** @type {number[]} */ (await page.evaluate("window.keys"));
  console.log(
    `2,048 variants: open ${opens.map((t) => `${Math.round(t)} ms`).join(", ")}; ${rendered} elements; keystrokes median ${median(keys).toFixed(1)} ms, max ${Math.max(...keys).toFixed(1)} ms`,
  );
  assert.ok(median(opens) < 1000, `opened in ${opens.join(", ")} ms`);
  assert.ok(median(keys) < 50, `keystrokes took ${keys.join(", ")} ms`);
  assert.ok(rendered < 1500, `${rendered} elements on the page`);
  // Each word is the start of a value or part of a SKU ("xl" is also in XXL and its SKUs).
  const rows = await page.evaluate(
    `[...document.querySelectorAll("section.variants tbody tr")].map((r) => r.cells[0].textContent)`,
  );
  assert.deepEqual(rows, [
    "Navy / XL / Boxy / Polo",
    "Navy / XXL / Boxy / Polo",
    "Navy / 3XL / Boxy / Polo low",
    "Navy / 4XL / Boxy / Polo",
  ]);
  const before = await call("GET", `/v1/products/${big}`);
  const target = before.variants.find((/** @type {any} */ v) => v.sku === "BIG-NAVY-XL-BOXY-POLO");
  const from = page.events.length;
  await d.fill(`document.querySelectorAll("section.variants input.price")[0]`, "219");
  await d.clickText("button", "Save");
  await d.waitText("Saved.");
  // The outcome is on screen, beside the button, not thousands of pixels away.
  const [msg, button] = await page.evaluate(`[".savebar .msg", ".savebar button[type=submit]"].map((s) => {
    const r = document.querySelector(s).getBoundingClientRect(); return { top: r.top, bottom: r.bottom };
  })`);
  assert.ok(msg.top >= 0 && msg.bottom <= 900 && Math.abs(msg.top - button.top) < 120, JSON.stringify({ msg, button }));
  const sent = page.events
    .slice(from)
    .filter((e) => e.method === "Network.requestWillBeSent" && e.params.request.method === "PUT")
    .map((e) => JSON.parse(e.params.request.postData));
  assert.deepEqual(sent, [
    { product_id: big, variants: { update: [{ variant_id: target.variant_id, price: "219.00" }] } },
  ]);
  const after = await call("GET", `/v1/products/${big}`);
  const changed = after.variants.filter(
    (/** @type {any} */ v, /** @type {number} */ i) =>
      v.price !== before.variants[i].price || v.qty !== before.variants[i].qty,
  );
  assert.deepEqual(
    changed.map((/** @type {any} */ v) => [v.sku, v.price]),
    [["BIG-NAVY-XL-BOXY-POLO", 219]],
  );
  for (const width of [390, 1280]) {
    await d.width(width);
    assert.deepEqual(await d.axe(), [], `the big product at ${width} px`);
  }
  await d.width(1280);
});

test("the product list folds the low variants into a count that opens them", async () => {
  await d.go("#/products", "Products");
  const row = `[...document.querySelectorAll("table.list tbody tr")].find((r) => r.textContent.startsWith("Big tee"))`;
  await page.waitFor(row, 20_000);
  const summary = await page.evaluate(`${row}.querySelector("details.low-variant summary").textContent`);
  assert.equal(summary, "683 variants low");
  assert.ok((await page.evaluate(`${row}.getBoundingClientRect().height`)) < 120);
  // Listed once opened.
  assert.equal(await page.evaluate(`${row}.querySelectorAll("details.low-variant li").length`), 0);
  await d.click(`${row}.querySelector("details.low-variant summary")`);
  await page.waitFor(`${row}.querySelectorAll("details.low-variant li").length === 683`, 20_000);
  assert.match(
    await page.evaluate(`${row}.querySelector("details.low-variant li").textContent`),
    /^Red \/ XS \/ Slim \/ Crew: 2/,
  );
  // A product with variants is listed at the price orders use: the variants'.
  assert.match(await page.evaluate(`${row}.cells[2].textContent`), /^199\.00/);
  for (const width of [390, 1280]) {
    await d.width(width);
    assert.deepEqual(await d.axe(), [], `the product list at ${width} px`);
  }
  await d.width(1280);
});

test("no CSP violation or script error", () => {
  assert.deepEqual(problems(page.events), []);
});
