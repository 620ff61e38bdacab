// npm run test:browser: GET /docs in headless Chromium (Debian's `chromium`), offline: a
// screenshot that is a real, non-blank page, and the rendered DOM listing every operation.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { inflateSync } from "node:zlib";
import { startServer } from "./serve.mjs";

const CHROMIUM = process.env.CHROMIUM ?? "chromium";
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
const profile = mkdtempSync(path.join(tmpdir(), "edge-store-chromium-"));
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.stop();
  rmSync(profile, { recursive: true, force: true });
});

/** @param {string[]} extra */
function chromium(extra) {
  const r = spawnSync(
    CHROMIUM,
    [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--disable-dev-shm-usage",
      `--user-data-dir=${profile}`,
      "--window-size=1280,2000",
      ...extra,
      `${server.base}/docs`,
    ],
    { encoding: "utf8", timeout: 90_000, maxBuffer: 64 * 1024 * 1024 },
  );
  assert.equal(r.error, undefined, `could not run ${CHROMIUM}: ${r.error}`);
  assert.equal(r.status, 0, `chromium exited with ${r.status}:\n${r.stderr}`);
  return r.stdout;
}

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

test("GET /docs renders in headless Chromium: a real screenshot", () => {
  const shot = path.join(profile, "docs.png");
  chromium([`--screenshot=${shot}`, "--hide-scrollbars"]);
  const size = statSync(shot).size;
  assert.ok(size > 30_000, `screenshot is only ${size} bytes`);
  const stats = pngStats(readFileSync(shot));
  assert.deepEqual([stats.width, stats.height], [1280, 2000]);
  assert.ok(stats.colours > 20, `only ${stats.colours} colours: a blank page?`);
  assert.ok(stats.inkShare > 0.02, `only ${(stats.inkShare * 100).toFixed(1)}% of the page is not white`);
  copyFileSync(shot, SHOT);
  console.log(`screenshot: ${SHOT} (${size} bytes, ${stats.colours} colours)`);
});

test("GET /docs lists every operation in the rendered DOM", () => {
  const dom = chromium(["--dump-dom"]);
  assert.match(dom, /<title>edge-store [\d.]+: API reference<\/title>/);
  for (const [method, p] of OPERATIONS) {
    const html = `<span class="method ${method.toLowerCase()}">${method}</span> <code class="path">${p}</code>`;
    assert.ok(dom.includes(html), `${method} ${p} is listed`);
  }
  for (const name of ["ProductCreate", "ProductUpdate", "OrderCreate", "Product", "Order", "Error"]) {
    assert.ok(dom.includes(`id="schema-${name}"`), `schema ${name} is rendered`);
  }
});
