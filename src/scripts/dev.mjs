#!/usr/bin/env node
// `npm run dev`: local D1 with migrations applied, a development key in .dev.vars (created once,
// never overwritten), then `wrangler dev` on 127.0.0.1:8787. Extra arguments go to wrangler dev
// (`npm run dev -- --port 9000`; `--persist-to <dir>` also applies the migrations there).
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

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
  const line = readFileSync(file, "utf8")
    .split("\n")
    .find((l) => /^\s*API_KEY\s*=/.test(l));
  const value = line
    ?.replace(/^\s*API_KEY\s*=\s*/, "")
    .replace(/^["']|["']$/g, "")
    .trim();
  const key = value?.split(",")[0]?.trim();
  if (!key) {
    console.error(".dev.vars has no API_KEY: add a line API_KEY=<a key of your choice>.");
    process.exit(1);
  }
  return key;
}

/**
 * The value of `--name value` or `--name=value` among the arguments, if given.
 * @param {string} name
 */
function argValue(name) {
  const i = args.findIndex((a) => a === name || a.startsWith(`${name}=`));
  if (i < 0) return undefined;
  return args[i].includes("=") ? args[i].slice(name.length + 1) : args[i + 1];
}

const key = devKey();
// With --persist-to (a fresh directory for a clean database, as the e2e test uses), the
// migrations must go to the same local state that wrangler dev will then serve.
const persistTo = argValue("--persist-to");
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

const port = argValue("--port") ?? "8787";
const auth = Buffer.from(`${key}:${key}`).toString("base64");
console.log(`
Development key: ${key}
Try it:
  curl -s http://127.0.0.1:${port}/v1/products -H 'Authorization: Basic ${auth}' \\
    -H 'Content-Type: application/json' -d '{"title": "Mug", "price": 129, "sku": "MUG-1", "stock": 10}'
`);

// Webhooks to http://127.0.0.1 receivers are how local development tests them (README, "Webhooks").
const devArgs = [
  "dev",
  "--ip",
  "127.0.0.1",
  ...(argValue("--port") === undefined ? ["--port", "8787"] : []),
  "--var",
  "ALLOW_LOCAL_WEBHOOKS:true",
  ...args,
];
const child = spawn(wrangler, devArgs, { cwd: root, stdio: "inherit" });
for (const sig of /** @type {const} */ (["SIGINT", "SIGTERM"])) process.on(sig, () => child.kill(sig));
child.on("exit", (code) => process.exit(code ?? 0));
