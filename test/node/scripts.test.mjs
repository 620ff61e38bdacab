// The dev script's command line (npm run dev passes every argument through to wrangler dev) and
// its .dev.vars reading, without starting anything.
import assert from "node:assert/strict";
import { test } from "node:test";
import { argValue, parseDevVars, wranglerDevArgs } from "../../src/scripts/args.mjs";

// Local webhook receivers are allowed in development (src/docs/webhooks.md, "Webhooks"), and CF-Connecting-IP is
// not trusted there (src/docs/operations.md, "Rate limits").
// Products get urls locally: STORE_URL on the dev server's origin unless given (src/docs/products.md).
const LOCAL = ["--var", "ALLOW_LOCAL_WEBHOOKS:true", "--var", "LOCAL_DEV:true"];
const STORE = (port = "8787") => ["--var", `STORE_URL:http://127.0.0.1:${port}/products`];

test("npm run dev: defaults to 127.0.0.1:8787", () => {
  assert.deepEqual(wranglerDevArgs([], {}), ["dev", "--ip", "127.0.0.1", "--port", "8787", ...LOCAL, ...STORE()]);
});

for (const [args, expected] of /** @type {[string[], string[]][]} */ ([
  [
    ["--ip", "127.0.0.1"],
    ["dev", "--port", "8787", ...LOCAL, ...STORE(), "--ip", "127.0.0.1"],
  ],
  [
    ["--ip", "0.0.0.0"],
    ["dev", "--port", "8787", ...LOCAL, ...STORE(), "--ip", "0.0.0.0"],
  ],
  [
    ["--ip=0.0.0.0", "--port=9000"],
    ["dev", ...LOCAL, ...STORE("9000"), "--ip=0.0.0.0", "--port=9000"],
  ],
  [
    ["--port", "9000", "--persist-to", "/tmp/x"],
    ["dev", "--ip", "127.0.0.1", ...LOCAL, ...STORE("9000"), "--port", "9000", "--persist-to", "/tmp/x"],
  ],
  [
    ["--local-protocol", "https"],
    ["dev", "--ip", "127.0.0.1", "--port", "8787", ...LOCAL, ...STORE(), "--local-protocol", "https"],
  ],
  [
    ["--var", "STORE_URL:https://shop.example/p"],
    ["dev", "--ip", "127.0.0.1", "--port", "8787", ...LOCAL, "--var", "STORE_URL:https://shop.example/p"],
  ],
])) {
  test(`npm run dev -- ${args.join(" ")}: each option once, the caller's unchanged`, () => {
    const out = wranglerDevArgs(args, {});
    assert.deepEqual(out, expected);
    for (const name of ["--ip", "--port"]) {
      assert.ok(out.filter((a) => a === name || a.startsWith(`${name}=`)).length <= 1, `${name} once`);
    }
  });
}

test(".dev.vars: API_KEY stays a secret, other entries go to wrangler dev as --var", () => {
  const vars = parseDevVars(`# comment\nAPI_KEY="k1, k2"\nDEFAULT_CURRENCY=EUR\n export X='a:b'\n\nnot a line\n`);
  assert.deepEqual(vars, { API_KEY: "k1, k2", DEFAULT_CURRENCY: "EUR", X: "a:b" });
  assert.deepEqual(wranglerDevArgs([], vars), [
    "dev",
    "--ip",
    "127.0.0.1",
    "--port",
    "8787",
    ...LOCAL,
    ...STORE(),
    "--var",
    "DEFAULT_CURRENCY:EUR",
    "--var",
    "X:a:b",
  ]);
});

test("argValue reads --name value and --name=value", () => {
  assert.equal(argValue(["--port", "1"], "--port"), "1");
  assert.equal(argValue(["--port=2"], "--port"), "2");
  assert.equal(argValue(["--portal", "3"], "--port"), undefined);
});

test(".dev.vars: a STORE_URL there replaces npm run dev's default", () => {
  const out = wranglerDevArgs([], { STORE_URL: "https://shop.example/products" });
  assert.deepEqual(out.slice(-2), ["--var", "STORE_URL:https://shop.example/products"]);
  assert.equal(out.filter((a) => a.startsWith("STORE_URL:")).length, 1);
});
