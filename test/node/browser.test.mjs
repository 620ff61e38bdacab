// npm run test:browser: GET /docs (Scalar's API reference, served as static assets) in headless
// Chromium driven by Playwright (test/node/playwright-page.mjs), offline: it renders every
// operation from /openapi.json, loads nothing from another origin, breaks no CSP rule, and a
// developer can send an authenticated request from the page and read the answer.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { inflateSync } from "node:zlib";
import { openPage, problems } from "./playwright-page.mjs";
import { startServer } from "./serve.mjs";

// Kept after the run so a person can look at it.
const SHOT = process.env.DOCS_SCREENSHOT ?? path.join(tmpdir(), "edge-store-docs.png");

const OPERATIONS = [
  ["GET", "/"],
  ["GET", "/health"],
  ["POST", "/v1/products"],
  ["GET", "/v1/products"],
  ["PUT", "/v1/products"],
  ["GET", "/v1/products/{product_id}"],
  ["GET", "/v1/products/count"],
  ["POST", "/v1/orders"],
  ["GET", "/v1/orders"],
  ["GET", "/v1/orders/{order_id}"],
  ["POST", "/v1/webhooks"],
  ["GET", "/v1/webhooks"],
  ["DELETE", "/v1/webhooks/{id}"],
  ["GET", "/v1/webhooks/{id}/deliveries"],
];

/** @type {import("./serve.mjs").Server} */
let server;
/** @type {Awaited<ReturnType<typeof openPage>>} */
let page;
before(async () => {
  server = await startServer();
  page = await openPage(`${server.base}/docs`);
  await page.waitFor(`document.querySelector("button.show-api-client-button")`, 60_000);
});
after(async () => {
  try {
    await page?.close();
  } finally {
    await server?.stop();
  }
});

/** Pixels of a non-interlaced 8-bit RGB(A) PNG, enough to tell a blank page from a real one. */
function pngStats(/** @type {Buffer} */ png) {
  assert.equal(png.subarray(0, 8).toString("hex"), "89504e470d0a1a0a", "a PNG signature");
  let pos = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat = [];
  while (pos < png.length) {
    const len = png.readUInt32BE(pos);
    const type = png.subarray(pos + 4, pos + 8).toString("ascii");
    const data = png.subarray(pos + 8, pos + 8 + len);
    if (type === "IHDR") {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      assert.equal(data[8], 8, "8-bit PNG");
      channels = { 2: 3, 6: 4 }[data[9]] ?? 0;
      assert.ok(channels, `colour type ${data[9]}`);
    } else if (type === "IDAT") idat.push(data);
    pos += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  /** @type {Uint8Array} */
  let prev = new Uint8Array(stride);
  const colours = new Set();
  let nonWhite = 0;
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const cur = new Uint8Array(stride);
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? cur[i - channels] : 0;
      const b = prev[i];
      const c = i >= channels ? prev[i - channels] : 0;
      const p = a + b - c;
      const pa = Math.abs(p - a);
      const pb = Math.abs(p - b);
      const pc = Math.abs(p - c);
      const pred = [0, a, b, (a + b) >> 1, pa <= pb && pa <= pc ? a : pb <= pc ? b : c][filter];
      cur[i] = (line[i] + pred) & 0xff;
    }
    for (let x = 0; x < width; x += 4) {
      const o = x * channels;
      colours.add((cur[o] << 16) | (cur[o + 1] << 8) | cur[o + 2]);
      if (cur[o] < 230 || cur[o + 1] < 230 || cur[o + 2] < 230) nonWhite++;
    }
    prev = cur;
  }
  return { width, height, colours: colours.size, inkShare: nonWhite / ((width / 4) * height) };
}

test("GET /docs: Scalar renders from the same origin only, without CSP violations", async () => {
  const title = await page.evaluate("document.title");
  assert.match(title, /edge-store/);
  const requests = page.events
    .filter((e) => e.method === "Network.requestWillBeSent")
    .map((e) => /** @type {string} */ (e.params.request.url));
  assert.ok(requests.includes(`${server.base}/scalar/standalone.js`), requests.join("\n"));
  assert.ok(requests.includes(`${server.base}/openapi.json`), requests.join("\n"));
  for (const url of requests)
    assert.ok(url.startsWith(`${server.base}/`) || url.startsWith("data:"), `foreign request: ${url}`);
  assert.deepEqual(problems(page.events), []);
  // No link hands the document's address to another site (Scalar's hosted client).
  const foreign = await page.evaluate(
    `[...document.querySelectorAll("a[href]")].map((a) => a.href).filter((h) => !h.startsWith(location.origin) && decodeURIComponent(h).includes(location.host))`,
  );
  assert.deepEqual(foreign, []);
  // The sidebar names every operation's path once its group is open.
  const text = await page.evaluate("document.body.innerText");
  for (const tag of ["service", "products", "orders"]) assert.ok(text.includes(tag), `tag ${tag}`);
  const doc = await fetch(`${server.base}/openapi.json`).then((r) => r.json());
  for (const [method, p] of OPERATIONS) assert.ok(doc.paths[p]?.[method.toLowerCase()], `${method} ${p} documented`);
});

test("a developer sends an authenticated request from the page and sees the answer", async () => {
  const sku = `DOCS-${Date.now().toString(36)}`;
  const made = await fetch(`${server.base}/v1/products`, {
    method: "POST",
    headers: { authorization: server.auth, "content-type": "application/json" },
    body: JSON.stringify({ title: "Seen from the docs", price: 10, sku }),
  });
  assert.equal(made.status, 200);
  // Open the products group, go to the product list operation, open its Test Request client.
  await page.click(
    `[...document.querySelectorAll("button")].find(b => b.innerText.trim() === "Open Group - products")`,
  );
  await page.click(
    `[...document.querySelectorAll("a")].find(b => b.innerText.startsWith("List, search or look up products"))`,
  );
  const opener = `[...document.querySelectorAll("button.show-api-client-button")].find(b => b.innerText.includes("get /v1/products)"))`;
  await page.waitFor(opener, 20_000);
  await new Promise((r) => setTimeout(r, 1000)); // the page settles its scroll first
  await page.click(opener);
  // The client's Basic auth fields (preselected by the page's configuration), the key as both: the
  // user name an editable line whose placeholder is "janedoe", the password an input; the client's
  // are the last shown (the page's own reference shows a pair too).
  const user = `[...document.querySelectorAll("[data-placeholder='janedoe'][contenteditable]")].filter(e => e.offsetParent).at(-1)`;
  await page.waitFor(user, 20_000);
  await page.click(user);
  await page.type(server.key);
  const password = `[...document.querySelectorAll("input[placeholder='********']")].filter(e => e.offsetParent).at(-1)`;
  await page.click(password);
  await page.type(server.key);
  const sends = page.events.length;
  await page.click(
    `[...document.querySelectorAll("button")].filter(b => b.offsetParent && b.innerText.trim().startsWith("Send")).at(-1)`,
  );
  // The answer as the page shows it: status and the product just created.
  await page.waitFor(`document.body.innerText.includes(${JSON.stringify(sku)})`, 20_000);
  const shown = await page.evaluate("document.body.innerText");
  assert.match(shown, /\b200\b/);
  const sent = page.events
    .slice(sends)
    .filter((e) => e.method === "Network.requestWillBeSent" && e.params.request.url.includes("/v1/products"));
  assert.ok(sent.length >= 1, "the page sent the request");
  const req = sent.at(-1)?.params.request;
  assert.equal(new URL(req.url).origin, server.base);
  assert.equal(req.headers.authorization ?? req.headers.Authorization, server.auth);
  const answered = page.events.find(
    (e) => e.method === "Network.responseReceived" && e.params.requestId === sent.at(-1)?.params.requestId,
  );
  assert.equal(answered?.params.response.status, 200);
  assert.ok(answered?.params.response.headers["x-d1-bookmark"] ?? answered?.params.response.headers["X-D1-Bookmark"]);
});

test("the reference links operations to their topic pages, which the Worker serves", async () => {
  // Scalar shows each open operation's externalDocs as a link.
  await page.waitFor(`document.querySelectorAll('a[href*="/guide/"]').length > 0`, 20_000);
  const hrefs = /** @type {string[]} */ (
    await page.evaluate(`[...new Set([...document.querySelectorAll('a[href*="/guide/"]')].map(a => a.href))]`)
  );
  assert.ok(hrefs.length >= 1, "a topic link on the page");
  for (const href of hrefs) {
    const url = new URL(href, server.base);
    assert.equal(url.origin, server.base);
    const res = await fetch(url);
    assert.equal(res.status, 200, href);
    const html = await res.text();
    if (url.hash) assert.ok(html.includes(`id="${url.hash.slice(1)}"`), `${href}: the anchor exists`);
    assert.match(html, /href="\/docs"/, "the page links the reference back");
  }
});

test("the rendered page is a real, non-blank screenshot", async () => {
  const { data } = await page.send("Page.captureScreenshot", { format: "png" });
  const png = Buffer.from(data, "base64");
  const stats = pngStats(png);
  assert.ok(stats.colours > 20, `only ${stats.colours} colours: a blank page?`);
  assert.ok(stats.inkShare > 0.02, `only ${(stats.inkShare * 100).toFixed(1)}% of the page is not white`);
  writeFileSync(SHOT, png);
  console.log(`screenshot: ${SHOT} (${png.length} bytes, ${stats.colours} colours)`);
});
