// npm run test:e2e: the README's serve command as a real process, driven over HTTP the way a
// client (or curl) would: create a product and an order, read them back, stop everything.
import assert from "node:assert/strict";
import http from "node:http";
import { after, before, test } from "node:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import { callServer, startServer } from "./serve.mjs";

/** @type {import("./serve.mjs").Server} */
let server;
/** @type {(method: string, path: string, body?: unknown) => ReturnType<typeof callServer>} */
const call = (method, path, body) => callServer(server, method, path, body);
before(async () => {
  // From an empty state, as a newcomer's first run: the command applies every migration itself
  // (checked by the last test), where the other tests start from a migrated copy.
  server = await startServer({ migrated: false });
});
after(async () => {
  await server?.stop();
});

test("serves, creates a product and an order, and reads them back", async () => {
  const info = await fetch(`${server.base}/`).then((r) => r.json());
  assert.equal(info.name, "edge-store");

  const unauthorized = await fetch(`${server.base}/v1/products`);
  assert.equal(unauthorized.status, 401);

  const sku = `E2E-${Date.now().toString(36)}`;
  const created = await call("POST", "/v1/products", {
    title: "E2E mug",
    price: "129.50",
    sku,
    stock: 5,
    disable_minusqty: 1,
  });
  assert.equal(created.status, 200, created.text);
  assert.equal(created.json.success, 1);
  const productId = created.json.products[0].product_id;
  assert.ok(created.headers.get("x-request-id"));

  const read = await call("GET", `/v1/products/${productId}`);
  assert.equal(read.status, 200, read.text);
  assert.equal(read.json.sku, sku);
  assert.equal(read.json.price, 129.5);
  assert.equal(read.json.stock, 5);

  const bySku = await call("GET", `/v1/products?sku=${encodeURIComponent(sku)}`);
  assert.equal(bySku.status, 200, bySku.text);
  assert.equal(bySku.json.id, String(productId));

  const list = await call("GET", "/v1/products?limit=1");
  assert.equal(list.status, 200, list.text);
  assert.ok(Array.isArray(list.json));
  const count = await call("GET", "/v1/products/count");
  assert.match(count.json.count, /^\d+$/);

  const order = await call("POST", "/v1/orders", [
    { order_id: "create", customer: { email: "e2e@example.com" }, products: [{ sku, qty: 2 }] },
  ]);
  assert.equal(order.status, 200, order.text);
  const result = order.json.results.create_1;
  assert.equal(result.success, true, order.text);
  assert.equal(result.status, "unpaid");
  assert.equal(result.subtotal, 259);

  const readOrder = await call("GET", `/v1/orders/${result.order_id}`);
  assert.equal(readOrder.status, 200, readOrder.text);
  assert.equal(readOrder.json.order_id, result.order_id);
  assert.equal(readOrder.json.products[0].sku, sku);
  assert.equal(readOrder.json.products[0].qty, 2);

  const modelled = await call("GET", `/v1/orders?order_id=${result.order_id}`);
  assert.equal(modelled.status, 200, modelled.text);
  assert.equal(modelled.json[0].order_id, String(result.order_id));
  assert.equal(modelled.json[0].total_pay_amount, "259.00");

  const stock = await call("GET", `/v1/products/${productId}`);
  assert.equal(stock.json.stock, 3, "the order reserved its stock");
});

test("GET /openapi.json is a valid OpenAPI 3.1 document (official schema, offline)", async () => {
  const res = await fetch(`${server.base}/openapi.json`);
  assert.equal(res.status, 200);
  const doc = await res.json();
  const validator = new Validator();
  const result = await validator.validate(doc);
  assert.equal(validator.version, "3.1");
  assert.deepEqual(result.errors ?? [], [], JSON.stringify(result.errors, null, 2));
  assert.equal(result.valid, true);
});

test("every request is one JSON log line on the process output, without the key", async () => {
  await call("GET", "/v1/products?limit=1");
  // wrangler dev relays console.log of the Worker to its stdout; give it a moment to flush.
  await new Promise((r) => setTimeout(r, 500));
  const lines = server
    .output()
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.startsWith('{"level":"info","msg":"request"'));
  assert.ok(lines.length >= 3, `request log lines:\n${server.output()}`);
  for (const l of lines) {
    const line = JSON.parse(l);
    assert.deepEqual(
      Object.keys(line).filter((k) => !["counts"].includes(k)),
      ["level", "msg", "requestId", "method", "route", "status", "durationMs"],
    );
    assert.ok(!l.includes(server.key), "the API key never appears in a log line");
  }
  assert.ok(lines.some((l) => l.includes('"route":"/v1/products/:product_id"')));
});

/**
 * A POST of `size` bytes written as the client wishes: chunked (no Content-Length) or declared.
 * Resolves with the status, or the error code if the connection failed.
 * @param {number} size
 * @param {boolean} isChunked
 * @returns {Promise<string>}
 */
function bigPost(size, isChunked) {
  const url = new URL(`${server.base}/v1/products`);
  return new Promise((resolve) => {
    /** @type {Record<string, string>} */
    const headers = { authorization: server.auth, "content-type": "application/json" };
    if (isChunked) headers["transfer-encoding"] = "chunked";
    else headers["content-length"] = String(size);
    const req = http.request(
      { host: url.hostname, port: url.port, path: url.pathname, method: "POST", headers },
      (res) => {
        res.resume();
        res.on("end", () => resolve(String(res.statusCode)));
      },
    );
    req.on("error", (e) => resolve(`error ${/** @type {any} */ (e).code}`));
    // A server that never answers fails the test instead of hanging it.
    req.setTimeout(20_000, () => {
      req.destroy();
      resolve("no answer within 20 s");
    });
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    const write = () => {
      while (sent < size) {
        sent += chunk.length;
        if (!req.write(chunk)) return req.once("drain", write);
      }
      req.end();
    };
    write();
  });
}

test("oversized bodies, chunked or declared, get 413 and the server's other requests are unaffected", async () => {
  /** @type {Record<string, number>} */
  const big = {};
  /** @type {Record<string, number>} */
  const innocent = {};
  const count = (/** @type {Record<string, number>} */ o, /** @type {string} */ k) => {
    o[k] = (o[k] ?? 0) + 1;
  };
  for (let round = 0; round < 5; round++) {
    await Promise.all([
      bigPost(3 * 1024 * 1024, true).then((s) => count(big, s)),
      bigPost(3 * 1024 * 1024, true).then((s) => count(big, s)),
      bigPost(2 * 1024 * 1024, false).then((s) => count(big, s)),
      ...Array.from({ length: 10 }, () =>
        call("GET", "/v1/products?limit=1").then((r) => count(innocent, String(r.status))),
      ),
    ]);
  }
  assert.deepEqual(big, { 413: 15 });
  assert.deepEqual(innocent, { 200: 50 });
});

test("npm run seed fills a demo catalog and, run again, skips every product it finds", async () => {
  const { execFileSync } = await import("node:child_process");
  const seed = () =>
    execFileSync("node", ["src/scripts/seed.mjs", "--base", server.base, "--key", server.key], {
      cwd: new URL("../..", import.meta.url),
      encoding: "utf8",
    });
  const first = seed();
  const second = seed();
  const made = (first.match(/^(create|skip) /gm) ?? []).length;
  assert.ok(made > 0, first);
  assert.equal((second.match(/^skip /gm) ?? []).length, made, second);
  assert.match(second, / 0 failed\.$/m);
});

test("the manual: /guide redirects to /guide/, which serves the README as HTML, and the output ends with the key", async () => {
  const bare = await fetch(`${server.base}/guide`, { redirect: "manual" });
  assert.ok([301, 302, 307, 308].includes(bare.status), `status ${bare.status}`);
  assert.equal(new URL(bare.headers.get("location") ?? "", server.base).pathname, "/guide/");
  const index = await fetch(`${server.base}/guide/`);
  assert.equal(index.status, 200);
  assert.match(await index.text(), /<h1 id="edge-store">edge-store<\/h1>/);
  // npm run dev's first lines are for the person who ran it: the key, the URLs and KEY/BASE last.
  const startup = server.output().split("\n");
  const last = startup.findIndex((l) => l.startsWith("KEY='"));
  assert.ok(last > 0, "a KEY=... BASE=... line");
  assert.match(startup[last], new RegExp(`^KEY='${server.key}' BASE='${server.base}'$`));
  const block = startup.slice(0, last + 1).join("\n");
  assert.match(block, /Local D1: \d+ migrations applied \(0000_init\.sql to \d{4}_\w+\.sql\)/);
  for (const url of ["/docs", "/admin", "/guide/"]) assert.ok(block.includes(`${server.base}${url}`), url);
  assert.doesNotMatch(block, /Migrations to be applied|┌|│/, "no migration tables");
});
