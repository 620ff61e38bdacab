// The typed client (docs/clients.md) against a running server: examples/typed-client/openapi.d.ts is
// what openapi-typescript makes of the /openapi.json the server serves, and the example, run as a
// user runs it, lists the products and creates an order.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { clientTypes, TYPES_FILE } from "../../src/scripts/client-types.mjs";
import { callServer, root, startServer } from "./serve.mjs";

/** @type {import("./serve.mjs").Server} */
let server;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.stop();
});

test("examples/typed-client/openapi.d.ts is generated from the served GET /openapi.json", async () => {
  const doc = await (await fetch(`${server.base}/openapi.json`)).json();
  assert.equal(readFileSync(TYPES_FILE, "utf8"), await clientTypes(doc), "run npm run client:types");
});

test("the typed example lists products and creates an order, of a product without variants (as after npm run seed)", async () => {
  // Listed first, with stock: a product with variants is ordered by a variant, so the example skips it.
  const tee = await callServer(server, "POST", "/v1/products", {
    title: "Tee",
    price: 199,
    sku: "CLIENT-TEE",
    variants: { add: [{ variant_option1_name: "Size", variant_option1_value: "M", sku: "CLIENT-TEE-M", qty: 5 }] },
  });
  assert.equal(tee.status, 200, tee.text);
  const made = await callServer(server, "POST", "/v1/products", {
    title: "Mug",
    price: 129,
    sku: "CLIENT-1",
    stock: 3,
  });
  assert.equal(made.status, 200, made.text);
  const out = execFileSync(process.execPath, [path.join("examples", "typed-client", "main.ts")], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, KEY: server.key, BASE: server.base },
  });
  assert.match(out, /^product \d+ {2}CLIENT-1 {2}Mug {2}stock 3$/m);
  const id = /^order (\d+): unpaid, total 129 SEK$/m.exec(out)?.[1];
  assert.ok(id, out);
  const order = await callServer(server, "GET", `/v1/orders/${id}`);
  assert.equal(order.json.products[0].sku, "CLIENT-1");
});
