import { readdirSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { copyAssets } from "../src/scripts/assets.mjs";

const root = path.join(import.meta.dirname, "..");
// wrangler.toml's [secrets] makes wrangler look for API_KEY in .dev.vars or the environment and
// warn when it finds none; the tests set their own keys below.
process.env.API_KEY ??= "test-key";
// wrangler reads the config for the plugin and says at "log" level which secrets file it used
// ("Using secrets defined in .dev.vars"); the tests pin their own keys below, so only its warnings
// and errors are worth a line.
process.env.WRANGLER_LOG ??= "warn";
// wrangler.toml's [assets] directory must exist before the plugin reads the config.
copyAssets();

// Every test file loads the Worker into a fresh module graph, one module at a time over the
// pool's connection to Node: zod, drizzle-orm and hono are some 250 files, about 1.5 s per test
// file on a 2-core machine. Pre-bundled, each package (and subpath) is one module. The list is the
// packages src/ and test/ import, read here so that a new import is bundled without a config edit.
function importedPackages(): string[] {
  const found = new Set<string>();
  for (const dir of ["src", "test"]) {
    for (const file of readdirSync(path.join(root, dir), { recursive: true, encoding: "utf8" })) {
      if (!file.endsWith(".ts")) continue;
      const text = readFileSync(path.join(root, dir, file), "utf8");
      for (const [, name] of text.matchAll(/^import [^;]*? from "([^".][^"]*)";/gms)) {
        if (!/^(cloudflare:|node:|vitest|@cloudflare\/)/.test(name)) found.add(name);
      }
    }
  }
  return [...found].sort();
}

export default defineConfig(async () => ({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: path.join(root, "wrangler.toml") },
      miniflare: {
        // The real migrations, applied to each test file's own local D1 by test/setup.ts.
        // Databases without this version's migrations, for test/health.test.ts.
        d1Databases: ["EMPTY_DB", "STALE_DB"],
        // vitest's module runner asks for node:inspector in each test file (is a debugger
        // attached?); without this flag workerd has no such module and the pool prints two lines
        // of "not available at this Worker's compatibility date" per file. It adds only that
        // module, which src/ never imports, not nodejs_compat.
        compatibilityFlags: ["enable_nodejs_inspector_module"],
        // The tests drive the queue consumer themselves (webhooks.deliver.*.test.ts). The simulated
        // consumer would otherwise deliver a file's queued events a second after they were sent,
        // and one still running when its file ends fails the run (EnvironmentTeardownError). A
        // full batch of 100 is still delivered at once: test/helpers.ts sends nowhere.
        queueConsumers: {
          "edge-store-events": { maxBatchTimeout: 60, maxBatchSize: 100 },
          "edge-store-retries": { maxBatchTimeout: 60, maxBatchSize: 100 },
        },
        bindings: {
          TEST_MIGRATIONS: await readD1Migrations(path.join(root, "drizzle")),
          API_KEY: "test-key, second-key",
          // Pinned so a developer's .dev.vars (which wrangler reads for local runs) never changes a
          // test's answer; wrangler.toml's [secrets] already keeps .dev.vars to API_KEY alone.
          DEFAULT_CURRENCY: "SEK",
        },
      },
    }),
  ],
  test: {
    root,
    deps: { optimizer: { ssr: { enabled: true, include: importedPackages() } } },
    // A test file spends most of its time waiting on workerd and on module loading, so two files
    // at once nearly halve the run even on 2 cores (vitest's default there is one).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    include: ["test/**/*.test.ts"],
    setupFiles: ["test/setup.ts"],
    // The differential and property tests make hundreds of requests each; on a slower 2-core
    // machine some took 8 s, past vitest's default of 5.
    testTimeout: 30_000,
    // A passing test's console (the Worker's request lines and the error lines of the faults the
    // tests inject, src/keys/auth.ts) would drown the summary; a failing test's is shown.
    silent: "passed-only" as const,
  },
}));
