#!/usr/bin/env node
// `npm run types` regenerates worker-configuration.d.ts from wrangler.toml; `npm run types:check`
// (CI) fails when the committed file is out of date. Both are plain `wrangler types`, the command
// wrangler itself advises: wrangler.toml declares the secrets (`[secrets] required`), so the
// result never depends on a developer's .dev.vars and either way of producing it gives this file.
import { spawnSync } from "node:child_process";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "../..");
const check = process.argv.includes("--check");

const r = spawnSync(path.join(root, "node_modules", ".bin", "wrangler"), ["types", ...(check ? ["--check"] : [])], {
  cwd: root,
  stdio: "inherit",
  env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
});
if (r.status !== 0) {
  if (check) console.error("worker-configuration.d.ts is out of date: run npm run types and commit the result.");
  process.exitCode = r.status ?? 1;
}
