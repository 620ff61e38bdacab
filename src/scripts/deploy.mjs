#!/usr/bin/env node
// `npm run deploy` (docs/operations.md, "Deploying to Cloudflare"): from a logged-in wrangler (or with
// CLOUDFLARE_API_TOKEN set), one command that
//   1. creates the D1 database when wrangler.toml still has the all-zero placeholder id (or finds
//      it by name) and writes its id into wrangler.toml,
//   2. creates the dead-letter queue (`wrangler deploy` creates the queues the Worker binds, but
//      not a queue that is only a consumer's dead_letter_queue),
//   3. applies the remote migrations,
//   4. generates API_KEY when the Worker has none (printed once), and
//   5. deploys, with that key uploaded in the same step.
// Running it again changes nothing that exists. `--dry-run` only looks (read-only wrangler calls)
// and prints the plan; without a Cloudflare account (not logged in) it prints the plan from the
// project's own files (wrangler.toml, drizzle/) and says which login step comes next.
// wrangler is taken from PATH: npm puts node_modules/.bin first.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { copyAssets } from "./assets.mjs";

const root = path.resolve(import.meta.dirname, "../..");
const CONFIG = path.join(root, "wrangler.toml");
const PLACEHOLDER = "00000000-0000-0000-0000-000000000000";
const dryRun = process.argv.includes("--dry-run");

/**
 * Runs wrangler, non-interactively, and returns what it printed.
 * @param {string[]} args
 * @param {{ quiet?: boolean }} [opts] quiet: capture only (the caller decides what to show)
 */
function wrangler(args, { quiet = false } = {}) {
  if (!quiet) console.log(`$ wrangler ${args.join(" ")}`);
  const r = spawnSync("wrangler", args, {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false", NO_COLOR: "1", FORCE_COLOR: "0" },
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.error) fail(`could not run wrangler: ${r.error.message}`);
  const out = `${r.stdout ?? ""}${r.stderr ?? ""}`;
  if (!quiet && out.trim()) console.log(out.trimEnd().replace(/^/gm, "  "));
  return { ok: r.status === 0, out, stdout: r.stdout ?? "" };
}

/** @param {string} message @returns {never} */
function fail(message) {
  console.error(`\ndeploy: ${message}`);
  process.exit(1);
}

/**
 * The value of `key = "value"` in one [[table]] block of wrangler.toml (comments ignored).
 * @param {string} toml @param {string} table @param {string} key
 */
function blockValues(toml, table, key) {
  const values = [];
  const blocks = toml.split(/^(?=\[)/m).filter((b) => b.startsWith(`[[${table}]]`) || b.startsWith(`[${table}]`));
  for (const b of blocks) {
    for (const m of b.matchAll(new RegExp(`^\\s*${key}\\s*=\\s*"([^"]*)"`, "gm"))) values.push(m[1]);
  }
  return values;
}

const toml = readFileSync(CONFIG, "utf8");
const dbName = blockValues(toml, "d1_databases", "database_name")[0];
const dbId = blockValues(toml, "d1_databases", "database_id")[0];
const bound = [
  ...new Set([...blockValues(toml, "queues.producers", "queue"), ...blockValues(toml, "queues.consumers", "queue")]),
];
/** Queues wrangler deploy does not create: a consumer's dead-letter queue that no binding names. */
const queues = [...new Set(blockValues(toml, "queues.consumers", "dead_letter_queue"))].filter(
  (q) => !bound.includes(q),
);
if (!dbName) fail("wrangler.toml has no [[d1_databases]] database_name");

/** Replaces the placeholder id in wrangler.toml, touching nothing else (comments stay). */
function writeDatabaseId(/** @type {string} */ id) {
  const text = readFileSync(CONFIG, "utf8");
  const line = new RegExp(`^(\\s*database_id\\s*=\\s*)"${PLACEHOLDER}"`, "m");
  if (!line.test(text)) fail(`wrangler.toml: no database_id = "${PLACEHOLDER}" line to replace`);
  writeFileSync(CONFIG, text.replace(line, `$1"${id}"`));
}

/** The JSON array in wrangler's output: from the first line that opens one (a banner may precede it). */
const jsonArray = (/** @type {string} */ text) => text.slice(text.search(/^\[/m));

/** @returns {{ name: string, uuid: string }[]} */
function listDatabases() {
  const r = wrangler(["d1", "list", "--json"], { quiet: true });
  if (!r.ok) fail(`wrangler d1 list failed:\n${r.out}`);
  try {
    return JSON.parse(jsonArray(r.stdout));
  } catch {
    fail(`wrangler d1 list --json answered no JSON:\n${r.out}`);
  }
}

/** @returns {string[] | undefined} secret names, or undefined when the Worker does not exist yet */
function secretNames() {
  const r = wrangler(["secret", "list", "--format", "json"], { quiet: true });
  if (!r.ok) {
    if (/does not exist|not found|10007/i.test(r.out)) return undefined;
    fail(`wrangler secret list failed:\n${r.out}`);
  }
  try {
    return JSON.parse(jsonArray(r.stdout)).map((/** @type {{name: string}} */ s) => s.name);
  } catch {
    fail(`wrangler secret list answered no JSON:\n${r.out}`);
  }
}

/** Every [[table]] block's `key = value` pairs (strings, numbers and inline tables as text). */
function blocks(/** @type {string} */ table) {
  return toml
    .split(/^(?=\[)/m)
    .filter((b) => b.startsWith(`[[${table}]]`))
    .map((b) =>
      Object.fromEntries(
        [...b.matchAll(/^\s*(\w+)\s*=\s*(.+?)\s*$/gm)].map((m) => [m[1], m[2].replace(/^"(.*)"$/, "$1")]),
      ),
    );
}

const migrations = readdirSync(path.join(root, "drizzle"))
  .filter((f) => f.endsWith(".sql"))
  .sort();
const requiredSecrets = /\[secrets\][^[]*?required\s*=\s*\[([^\]]*)\]/.exec(toml)?.[1]?.match(/"[^"]+"/g) ?? [];
const crons = /^\s*crons\s*=\s*\[([^\]]*)\]/m.exec(toml)?.[1]?.match(/"[^"]+"/g) ?? [];

/**
 * What a deploy creates, binds and asks for, read from the project's files, and what each costs on
 * the Workers free plan (the figures: docs/operations.md, "What it costs on the free plan").
 * `account` is what wrangler found, or undefined when it could not look (not logged in).
 * @param {{ existingDb?: { uuid: string }, needKey: boolean } | undefined} account
 */
function planLines(account) {
  const db =
    dbId !== PLACEHOLDER
      ? `D1 database ${dbName}: configured (${dbId})`
      : !account
        ? `D1 database ${dbName}: create it, unless the account has one by that name, and write its id into wrangler.toml`
        : account.existingDb
          ? `D1 database ${dbName}: exists (${account.existingDb.uuid}); write its id into wrangler.toml`
          : `D1 database ${dbName}: create it and write its id into wrangler.toml`;
  const key = !account
    ? "generated and uploaded with the deployment if the Worker has none, printed once"
    : account.needKey
      ? "not set; generate one, upload it with the deployment, print it once"
      : "set";
  return [
    db,
    ...queues.map((q) => `queue ${q} (dead letters): create unless it exists`),
    ...bound.map((q) => `queue ${q}: created by wrangler deploy unless it exists`),
    ...blocks("ratelimits").map(
      (r) => `rate limit ${r.name}: ${r.simple} (bound with the deployment; nothing to create)`,
    ),
    storefrontLimits,
    `migrations: apply what is not applied yet to the remote ${dbName}; ${migrations.length} bundled: ${migrations.join(", ")}`,
    ...requiredSecrets.map((name) => `secret ${name.slice(1, -1)}: ${key}`),
    `cron ${crons.join(", ")}: the scheduled job (idempotency purge, unpaid hold, webhook sweep, ended sessions)`,
    "deploy the Worker with its static assets (the API reference's script, the manual under /guide/, the admin under /admin/)",
  ];
}

// How much stock a storefront can hold (docs/storefront.md, "Storefront orders"): deployed as
// wrangler.toml sets it, the defaults when it does not.
const varOf = (/** @type {string} */ name, /** @type {string} */ fallback) =>
  blockValues(toml, "vars", name)[0]?.trim() || fallback;
const storefrontLimits =
  `storefront limits ([vars]): STOREFRONT_MAX_LINE_QTY ${varOf("STOREFRONT_MAX_LINE_QTY", "50")} units of an item per order, ` +
  `STOREFRONT_MAX_HELD_UNITS ${varOf("STOREFRONT_MAX_HELD_UNITS", "200")} units held by one client address's unpaid orders`;

const FREE_PLAN = [
  'On the Workers free plan (docs/operations.md, "What it costs on the free plan"):',
  "  Worker: 100,000 requests a day, 10 ms of CPU each (every accepted request fits but an orders page past about 2 MB: docs/performance.md);",
  "  static assets (/scalar, /guide, /admin): free, no Worker request;",
  "  D1: 5 GB, 5 million rows read and 100,000 rows written a day;",
  "  Queues: 10,000 operations a day (about 3,300 webhook events: docs/webhooks.md);",
  "  cron triggers and rate-limit bindings: no charge.",
];

// Configuration that deploys and works but leaves something out (GET /health says the same).
const storeUrl = blockValues(toml, "vars", "STORE_URL")[0] ?? "";
const WARNINGS = storeUrl.trim()
  ? []
  : [
      'STORE_URL is empty in wrangler.toml [vars]: no product will have a url ("" in the modelled dialect, null in ours),',
      "  so clients that tell products apart by url (a spider) see them all alike. Set it to the storefront's",
      '  product base URL (docs/products.md, "URL and slug") before going to production.',
    ];

const printPlan = (/** @type {string[]} */ lines, /** @type {string} */ note) =>
  console.log(
    `Plan${note}:\n${lines.map((l, i) => `  ${i + 1}. ${l}`).join("\n")}\n\n${FREE_PLAN.join("\n")}\n` +
      (WARNINGS.length ? `\nWarning: ${WARNINGS.join("\n")}\n` : ""),
  );

// 0. Logged in?
const who = wrangler(["whoami"], { quiet: true });
if (!who.ok || /not authenticated/i.test(who.out)) {
  if (dryRun) {
    printPlan(planLines(undefined), " (dry run without an account: read from wrangler.toml and drizzle/)");
    console.log(
      "Next: `npx wrangler login` (or set CLOUDFLARE_API_TOKEN), then `npm run deploy -- --dry-run` again to see\n" +
        "what the account already has, then `npm run deploy`.",
    );
    process.exit(0);
  }
  fail("wrangler is not logged in: run `npx wrangler login` (or set CLOUDFLARE_API_TOKEN), then run this again.");
}

// Look first, so the plan and the run agree.
const existingDb = dbId === PLACEHOLDER ? listDatabases().find((d) => d.name === dbName) : undefined;
const secrets = secretNames();
const needKey = !secrets?.includes("API_KEY");

printPlan(planLines({ existingDb, needKey }), dryRun ? " (dry run: nothing is changed)" : "");
if (dryRun) process.exit(0);

// 1. The database.
if (dbId === PLACEHOLDER) {
  let id = existingDb?.uuid;
  if (!id) {
    const created = wrangler(["d1", "create", dbName]);
    id = /database_id"?\s*[=:]\s*"([0-9a-f-]{36})"/.exec(created.out)?.[1];
    if (!created.ok && /already exists/i.test(created.out)) id = listDatabases().find((d) => d.name === dbName)?.uuid;
    if (!id) fail(`could not create the D1 database ${dbName}:\n${created.out}`);
  }
  writeDatabaseId(id);
  console.log(`wrangler.toml: database_id = "${id}" (commit this change)\n`);
}

// 2. The dead-letter queue. "Already exists" is fine; anything else is confirmed with `queues info`.
for (const q of queues) {
  const r = wrangler(["queues", "create", q]);
  if (r.ok || /already (exists|taken)/i.test(r.out)) continue;
  if (!wrangler(["queues", "info", q], { quiet: true }).ok) fail(`could not create the queue ${q}`);
  console.log(`  (queue ${q} exists)`);
}

// 3. Migrations (non-interactive: CI=true answers wrangler's confirmation).
if (!wrangler(["d1", "migrations", "apply", dbName, "--remote"]).ok) fail("the remote migrations failed");

// 4 and 5. The key, uploaded with the deployment; the Worker's other secrets are kept.
copyAssets();
let key;
let secretsDir;
const deployArgs = ["deploy"];
if (needKey) {
  key = `live_${randomBytes(24).toString("base64url")}`;
  secretsDir = mkdtempSync(path.join(tmpdir(), "edge-store-deploy-"));
  const file = path.join(secretsDir, "secrets.json");
  writeFileSync(file, JSON.stringify({ API_KEY: key }), { mode: 0o600 });
  deployArgs.push("--secrets-file", file);
}
const deployed = wrangler(deployArgs);
if (secretsDir) rmSync(secretsDir, { recursive: true, force: true });
if (!deployed.ok) fail("wrangler deploy failed");
const url = /https:\/\/\S+\.workers\.dev/.exec(deployed.out)?.[0];
console.log(`\nDeployed${url ? `: ${url}` : "."} Check it with: curl -s "${url ?? "https://<your worker>"}/health"`);
if (key) {
  console.log(`\nAPI key (shown once, store it now; rotate with \`wrangler secret put API_KEY\`):\n  ${key}\n`);
}
