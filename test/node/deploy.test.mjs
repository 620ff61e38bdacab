// npm run deploy's orchestration as a real process, offline: src/scripts/deploy.mjs runs in a
// scratch copy of the project with a stand-in `wrangler` first on PATH (test/node/fake-wrangler.mjs)
// that records each call and answers as wrangler 4.164 does. First run, rerun, dry run, logged out.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";

const root = path.resolve(import.meta.dirname, "../..");
const PLACEHOLDER = "00000000-0000-0000-0000-000000000000";
const scratches = /** @type {string[]} */ ([]);
after(() => {
  for (const s of scratches) rmSync(s, { recursive: true, force: true });
});

/** A copy of what deploy.mjs reads, a bin/ with the fake wrangler, and a pretend account. */
function project(account = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), "edge-store-deploy-test-"));
  scratches.push(dir);
  // The scripts, the manual (rendered into the static assets) and the Worker's constants the admin's
  // build bundles (its scopes and event types), with the admin itself.
  cpSync(path.join(root, "src"), path.join(dir, "src"), { recursive: true });
  cpSync(path.join(root, "drizzle"), path.join(dir, "drizzle"), { recursive: true });
  cpSync(path.join(root, "docs"), path.join(dir, "docs"), { recursive: true });
  copyFileSync(path.join(root, "package.json"), path.join(dir, "package.json"));
  copyFileSync(path.join(root, "wrangler.toml"), path.join(dir, "wrangler.toml"));
  copyFileSync(path.join(root, "README.md"), path.join(dir, "README.md"));
  cpSync(path.join(root, "admin"), path.join(dir, "admin"), { recursive: true });
  symlinkSync(path.join(root, "node_modules"), path.join(dir, "node_modules"), "dir");
  mkdirSync(path.join(dir, "bin"));
  const fake = path.join(dir, "bin", "wrangler");
  copyFileSync(path.join(import.meta.dirname, "fake-wrangler.mjs"), fake);
  chmodSync(fake, 0o755);
  const stateFile = path.join(dir, "account.json");
  writeFileSync(
    stateFile,
    JSON.stringify({
      calls: [],
      loggedIn: true,
      databases: [],
      queues: [],
      migrations: {},
      worker: false,
      secrets: {},
      deploys: 0,
      secretsFiles: [],
      ...account,
    }),
  );
  const state = () => JSON.parse(readFileSync(stateFile, "utf8"));
  /** @param {string[]} args */
  const deploy = (...args) => {
    const before = state().calls.length;
    const r = spawnSync(process.execPath, [path.join(dir, "src", "scripts", "deploy.mjs"), ...args], {
      cwd: dir,
      encoding: "utf8",
      env: {
        ...process.env,
        PATH: `${path.join(dir, "bin")}${path.delimiter}${process.env.PATH}`,
        FAKE_WRANGLER_STATE: stateFile,
      },
    });
    /** @type {string[]} */
    const calls = state()
      .calls.slice(before)
      .map((/** @type {string[]} */ c) => c.join(" "));
    return { status: r.status, out: `${r.stdout}${r.stderr}`, calls };
  };
  const toml = () => readFileSync(path.join(dir, "wrangler.toml"), "utf8");
  return { dir, state, deploy, toml };
}

const MUTATING = /^(d1 create|queues create|d1 migrations apply|deploy|secret put)/;

test("first run: creates the database, writes its id, creates the dead-letter queue, migrates, sets a key, deploys", () => {
  const p = project();
  const before = p.toml();
  const r = p.deploy();
  assert.equal(r.status, 0, r.out);
  const s = p.state();
  const id = s.databases[0].uuid;
  assert.deepEqual(
    r.calls.map((c) => c.replace(/--secrets-file \S+/, "--secrets-file <file>")),
    [
      "whoami",
      "d1 list --json",
      "secret list --format json",
      "d1 create store",
      "queues create edge-store-events-dlq",
      "d1 migrations apply store --remote",
      "deploy --secrets-file <file>",
    ],
  );
  // wrangler.toml: only the id changed, comments and everything else as they were.
  assert.equal(p.toml(), before.replace(`database_id = "${PLACEHOLDER}"`, `database_id = "${id}"`));
  assert.notEqual(id, PLACEHOLDER);
  // The dead-letter queue by npm run deploy, the two bound queues by wrangler deploy.
  assert.deepEqual(s.queues, ["edge-store-events-dlq", "edge-store-events", "edge-store-retries"]);
  assert.ok(s.migrations[id].length >= 4, "every bundled migration applied");
  // The key: generated, uploaded with the deployment, printed exactly once, its file gone.
  const key = s.secrets.API_KEY;
  assert.match(key, /^live_[\w-]{32}$/);
  assert.equal(r.out.split(key).length - 1, 1, "the key is printed once");
  assert.ok(!existsSync(s.secretsFiles[0]), "the secrets file is removed after the deploy");
  assert.match(r.out, /https:\/\/edge-store\.dev-example\.workers\.dev/);
  assert.equal(s.deploys, 1);

  // Rerun: nothing that exists is created again; the key stays; wrangler.toml stays.
  const tomlAfter = p.toml();
  const again = p.deploy();
  assert.equal(again.status, 0, again.out);
  assert.deepEqual(again.calls, [
    "whoami",
    "secret list --format json",
    "queues create edge-store-events-dlq",
    "d1 migrations apply store --remote",
    "deploy",
  ]);
  assert.match(again.out, /already taken/);
  assert.match(again.out, /No migrations to apply/);
  assert.match(again.out, /API_KEY: set/);
  assert.doesNotMatch(again.out, /live_/);
  const s2 = p.state();
  assert.equal(s2.secrets.API_KEY, key);
  assert.equal(s2.databases.length, 1);
  assert.equal(p.toml(), tomlAfter);
  assert.equal(s2.deploys, 2);
});

test("--dry-run prints the plan and changes nothing", () => {
  const p = project();
  const before = p.toml();
  const r = p.deploy("--dry-run");
  assert.equal(r.status, 0, r.out);
  assert.deepEqual(r.calls, ["whoami", "d1 list --json", "secret list --format json"]);
  assert.ok(!r.calls.some((c) => MUTATING.test(c)));
  for (const line of [
    "D1 database store: create it and write its id into wrangler.toml",
    "queue edge-store-events-dlq (dead letters): create unless it exists",
    "queue edge-store-events: created by wrangler deploy unless it exists",
    "queue edge-store-retries: created by wrangler deploy unless it exists",
    "migrations: apply what is not applied yet to the remote store",
    "secret API_KEY: not set; generate one, upload it with the deployment, print it once",
    "rate limit AUTH_FAILURES: { limit = 100, period = 60 }",
    "0000_init.sql",
  ]) {
    assert.ok(r.out.includes(line), `plan has: ${line}\n${r.out}`);
  }
  assert.match(r.out, /dry run: nothing is changed/);
  assert.match(r.out, /Warning: STORE_URL is empty in wrangler\.toml \[vars\]: no product will have a url/);
  assert.equal(p.toml(), before);
  assert.deepEqual(p.state().databases, []);
});

test("--dry-run says nothing of STORE_URL once wrangler.toml sets it", () => {
  const p = project();
  const file = path.join(p.dir, "wrangler.toml");
  writeFileSync(file, p.toml().replace(/^STORE_URL = ""$/m, 'STORE_URL = "https://shop.example.com/products"'));
  assert.match(p.toml(), /STORE_URL = "https:/);
  const r = p.deploy("--dry-run");
  assert.equal(r.status, 0, r.out);
  assert.doesNotMatch(r.out, /STORE_URL/);
});

test("--dry-run states the storefront limits wrangler.toml sets", () => {
  const p = project();
  const file = path.join(p.dir, "wrangler.toml");
  writeFileSync(file, p.toml().replace(/^STOREFRONT_MAX_HELD_UNITS = "200"$/m, 'STOREFRONT_MAX_HELD_UNITS = "40"'));
  const r = p.deploy("--dry-run");
  assert.equal(r.status, 0, r.out);
  assert.match(r.out, /STOREFRONT_MAX_LINE_QTY 50 units of an item per order, STOREFRONT_MAX_HELD_UNITS 40 units held/);
});

test("a database that exists by name (an earlier run stopped midway) is reused, not created", () => {
  const uuid = "4c6d5e8a-1b2c-4d3e-8f90-a1b2c3d4e5f6";
  const p = project({ databases: [{ uuid, name: "store" }], queues: ["edge-store-events"] });
  const r = p.deploy();
  assert.equal(r.status, 0, r.out);
  assert.ok(!r.calls.includes("d1 create store"));
  assert.match(p.toml(), new RegExp(`database_id = "${uuid}"`));
  assert.deepEqual(p.state().queues, ["edge-store-events", "edge-store-events-dlq", "edge-store-retries"]);
});

test("--dry-run without an account: the plan from the project's files, then the login step", () => {
  const p = project({ loggedIn: false });
  const before = p.toml();
  const r = p.deploy("--dry-run");
  assert.equal(r.status, 0, r.out);
  assert.deepEqual(r.calls, ["whoami"]);
  const migrations = readdirSync(path.join(root, "drizzle")).filter((f) => f.endsWith(".sql"));
  for (const line of [
    "dry run without an account",
    "D1 database store: create it, unless the account has one by that name",
    "queue edge-store-events-dlq (dead letters): create unless it exists",
    "queue edge-store-events: created by wrangler deploy unless it exists",
    "queue edge-store-retries: created by wrangler deploy unless it exists",
    "rate limit AUTH_FAILURES: { limit = 100, period = 60 }",
    "rate limit KEY_REQUESTS: { limit = 600, period = 60 }",
    "storefront limits ([vars]): STOREFRONT_MAX_LINE_QTY 50 units of an item per order, STOREFRONT_MAX_HELD_UNITS 200 units held by one client address's unpaid orders",
    `${migrations.length} bundled: ${migrations.sort().join(", ")}`,
    "secret API_KEY: generated and uploaded with the deployment if the Worker has none",
    'cron "*/5 * * * *"',
    "On the Workers free plan",
    "Queues: 10,000 operations a day",
    "Next: `npx wrangler login`",
  ]) {
    assert.ok(r.out.includes(line), `plan has: ${line}\n${r.out}`);
  }
  assert.equal(p.toml(), before);
});

test("not logged in: says how to log in and changes nothing", () => {
  const p = project({ loggedIn: false });
  const before = p.toml();
  const r = p.deploy();
  assert.equal(r.status, 1);
  assert.match(r.out, /npx wrangler login/);
  assert.deepEqual(r.calls, ["whoami"]);
  assert.equal(p.toml(), before);
});
