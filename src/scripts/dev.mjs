#!/usr/bin/env node
// `npm run dev`: local D1 with migrations applied, a development key in .dev.vars (created once,
// never overwritten), the API reference's static assets, then `wrangler dev` on 127.0.0.1:8787.
// Every extra argument goes to wrangler dev unchanged (`npm run dev -- --port 9000`, `-- --ip
// 0.0.0.0`; `--persist-to <dir>` also applies the migrations there).
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { argValue, parseDevVars, wranglerDevArgs } from "./args.mjs";
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
const migrate = spawnSync(wrangler, migrateArgs, {
  cwd: root,
  stdio: ["ignore", "inherit", "inherit"],
  env: { ...process.env, CI: "true" }, // non-interactive: apply without the confirmation prompt
});
if (migrate.status !== 0) process.exit(migrate.status ?? 1);

const port = argValue(args, "--port") ?? "8787";
console.log(`
Development key: ${key}
Try it (README, "Quick start"):
  KEY='${key}' BASE='http://127.0.0.1:${port}'
  curl -s -u "$KEY:$KEY" "$BASE/v1/products?limit=5"
API reference: http://127.0.0.1:${port}/docs
`);

const child = spawn(wrangler, wranglerDevArgs(args, vars), { cwd: root, stdio: "inherit" });
for (const sig of /** @type {const} */ (["SIGINT", "SIGTERM"])) process.on(sig, () => child.kill(sig));
child.on("exit", (code) => process.exit(code ?? 0));
