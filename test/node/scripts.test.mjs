// The dev script's command line (npm run dev passes every argument through to wrangler dev) and
// its .dev.vars reading, without starting anything.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { argValue, parseDevVars, serverTarget, wranglerDevArgs } from "../../src/scripts/args.mjs";

// Local webhook receivers are allowed in development (docs/webhooks.md, "Webhooks"), and CF-Connecting-IP is
// not trusted there (docs/operations.md, "Rate limits").
// Products get urls locally: STORE_URL on the dev server's origin unless given (docs/products.md).
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

// npm run seed and the scripts that call a running server: nothing assumes port 8787.
const RECORDED = "http://127.0.0.1:9100\n";
for (const [
  name,
  from,
  base,
  key,
] of /** @type {[string, Parameters<typeof serverTarget>[0], string, string | undefined][]} */ ([
  [
    "flags first",
    { args: ["--base", "http://h:1/", "--key", "k1"], env: { BASE: "http://h:2", KEY: "k2" }, recordedBase: RECORDED },
    "http://h:1",
    "k1",
  ],
  [
    "then the pasted KEY=... BASE=... line",
    {
      args: [],
      env: { BASE: "http://h:2", KEY: "k2", API_KEY: "k3" },
      devVars: { API_KEY: "k4" },
      recordedBase: RECORDED,
    },
    "http://h:2",
    "k2",
  ],
  [
    "then where npm run dev last served, and .dev.vars",
    { args: [], env: {}, devVars: { API_KEY: "k4, k5" }, recordedBase: RECORDED },
    "http://127.0.0.1:9100",
    "k4",
  ],
  ["then the default port, and no key", { args: [], env: {} }, "http://127.0.0.1:8787", undefined],
])) {
  test(`serverTarget: ${name}`, () => {
    const got = serverTarget(from);
    assert.equal(got.base, base);
    assert.equal(got.key, key);
  });
}

/** @returns {Promise<number>} a port nothing listens on a moment later */
const closedPort = () =>
  new Promise((resolve) => {
    const srv = createServer().listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      srv.close(() => resolve(typeof addr === "object" && addr ? addr.port : 0));
    });
  });

test("npm run seed: finds the server where npm run dev last served, and names the URL it tried", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "edge-store-seed-"));
  try {
    const port = await closedPort();
    const record = path.join(dir, "dev-base");
    writeFileSync(record, `http://127.0.0.1:${port}\n`);
    const env = { ...process.env, BASE: "", KEY: "some-key", SEED_BASE_URL: "", EDGE_STORE_DEV_BASE_FILE: record };
    const r = spawnSync(process.execPath, ["src/scripts/seed.mjs"], {
      cwd: path.join(import.meta.dirname, "../.."),
      env,
      encoding: "utf8",
    });
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`Cannot reach http://127\\.0\\.0\\.1:${port}/v1/products\\?sku=`));
    assert.match(r.stderr, /came from \.wrangler\/dev-base/);
    const given = spawnSync(process.execPath, ["src/scripts/seed.mjs"], {
      cwd: path.join(import.meta.dirname, "../.."),
      env: { ...env, BASE: `http://127.0.0.1:${port}/` },
      encoding: "utf8",
    });
    assert.match(given.stderr, new RegExp(`Cannot reach http://127\\.0\\.0\\.1:${port}/v1/products.*came from BASE`));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
