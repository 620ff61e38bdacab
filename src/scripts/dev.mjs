#!/usr/bin/env node
// `npm run dev`: local D1 with migrations applied, a development key in .dev.vars (created once,
// never overwritten), the API reference's static assets, then `wrangler dev` on 127.0.0.1:8787;
// once it answers, its origin goes into .wrangler/dev-base for the scripts that call it.
// Every extra argument goes to wrangler dev unchanged (`npm run dev -- --port 9000`, `-- --ip
// 0.0.0.0`; `--persist-to <dir>` also applies the migrations there).
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { argValue, DEV_BASE_FILE, parseDevVars, wranglerDevArgs } from "./args.mjs";
import { copyAssets } from "./assets.mjs";

const root = path.resolve(import.meta.dirname, "../..");
const wrangler = path.join(root, "node_modules", ".bin", "wrangler");
const args = process.argv.slice(2);

/** The first key of API_KEY in .dev.vars, creating the file with a random key when missing. */
function devKey() {
  const file = path.join(root, ".dev.vars");
  if (!existsSync(file)) {
    const key = `dev_${randomBytes(18).toString("base64url")}`;
    writeFileSync(file, `# Created by npm run dev. Local secrets for wrangler dev; never commit.\nAPI_KEY=${key}\n`, {
      mode: 0o600,
    });
    console.log("Created .dev.vars with a new development key.");
  }
  const vars = parseDevVars(readFileSync(file, "utf8"));
  const key = vars.API_KEY?.split(",")[0]?.trim();
  if (!key) {
    console.error(".dev.vars has no API_KEY: add a line API_KEY=<a key of your choice>.");
    process.exit(1);
  }
  return { key, vars };
}

/** One line for wrangler's migration tables: how many were applied, or that none were due. */
function migrationSummary(/** @type {string} */ out) {
  const names = [...new Set(out.match(/\b\d{4}_[\w-]+\.sql\b/g) ?? [])];
  if (names.length === 0) return "migrations up to date";
  const range = names.length === 1 ? names[0] : `${names[0]} to ${names.at(-1)}`;
  return `${names.length} migration${names.length === 1 ? "" : "s"} applied (${range})`;
}

const { key, vars } = devKey();
copyAssets();
// With --persist-to (a fresh directory for a clean database, as the e2e test uses), the
// migrations must go to the same local state that wrangler dev will then serve.
const persistTo = argValue(args, "--persist-to");
const migrateArgs = [
  "d1",
  "migrations",
  "apply",
  "store",
  "--local",
  ...(persistTo ? ["--persist-to", persistTo] : []),
];
// wrangler prints a table of the migrations to apply and another of their results: folded here
// into one line, since the key and the URLs below are what a first run is for. On a failure its
// whole output is shown.
const migrate = spawnSync(wrangler, migrateArgs, {
  cwd: root,
  encoding: "utf8",
  env: { ...process.env, CI: "true", NO_COLOR: "1" }, // non-interactive: apply without the confirmation prompt
});
if (migrate.status !== 0) {
  process.stdout.write(migrate.stdout ?? "");
  process.stderr.write(migrate.stderr ?? "");
  process.exit(migrate.status ?? 1);
}
console.log(`Local D1: ${migrationSummary(migrate.stdout ?? "")}`);

const port = argValue(args, "--port") ?? "8787";
const base = `${argValue(args, "--local-protocol") ?? "http"}://127.0.0.1:${port}`;
const child = spawn(wrangler, wranglerDevArgs(args, vars), { cwd: root, stdio: "inherit" });
for (const sig of /** @type {const} */ (["SIGINT", "SIGTERM"])) process.on(sig, () => child.kill(sig));
child.on("exit", (code) => process.exit(code ?? 0));

// Once the server answers, the lines a first run is for come last: the key, the URLs, and a line
// to paste into a second terminal for the README's Quick start.
for (let i = 0; i < 600; i++) {
  const up = await fetch(`${base}/health`, { signal: AbortSignal.timeout(2000) }).then(
    (r) => r.ok,
    () => false,
  );
  if (up) {
    // npm run seed (src/scripts/args.mjs, serverTarget) finds the server here when BASE is not set.
    const record = process.env.EDGE_STORE_DEV_BASE_FILE ?? path.join(root, DEV_BASE_FILE);
    mkdirSync(path.dirname(record), { recursive: true });
    writeFileSync(record, `${base}\n`);
    console.log(`
edge-store is running on ${base}
  API:            ${base}/v1/products, ${base}/v1/orders
  API reference:  ${base}/docs
  Admin:          ${base}/admin (sign in with the key)
  Manual:         ${base}/guide/
Development key: ${key}
Paste this into a second terminal, then run the README's Quick start:
KEY='${key}' BASE='${base}'`);
    break;
  }
  await new Promise((r) => setTimeout(r, 250));
}
