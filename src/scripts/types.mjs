#!/usr/bin/env node
// `npm run types` regenerates worker-configuration.d.ts from wrangler.toml; `npm run types:check`
// (CI) fails when the committed file is out of date. Both run `wrangler types` in a scratch copy
// of the project without .dev.vars: wrangler would otherwise add a developer's local secrets to
// Env, and the result would depend on whose machine ran it. Secrets are declared in src/env.ts.
import { spawnSync } from "node:child_process";
import { copyFileSync, cpSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "../..");
const check = process.argv.includes("--check");
const OUT = "worker-configuration.d.ts";

const scratch = mkdtempSync(path.join(tmpdir(), "edge-store-types-"));
try {
  for (const f of ["wrangler.toml", "package.json", "tsconfig.json", OUT])
    copyFileSync(path.join(root, f), path.join(scratch, f));
  cpSync(path.join(root, "src"), path.join(scratch, "src"), { recursive: true });
  symlinkSync(path.join(root, "node_modules"), path.join(scratch, "node_modules"), "dir");
  const r = spawnSync(
    path.join(root, "node_modules", ".bin", "wrangler"),
    ["types", "--strict-vars=false", ...(check ? ["--check"] : [])],
    { cwd: scratch, stdio: "inherit", env: { ...process.env, WRANGLER_SEND_METRICS: "false" } },
  );
  if (r.status !== 0) {
    if (check) console.error(`${OUT} is out of date: run npm run types and commit the result.`);
    process.exitCode = r.status ?? 1;
  } else if (!check) {
    copyFileSync(path.join(scratch, OUT), path.join(root, OUT));
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
