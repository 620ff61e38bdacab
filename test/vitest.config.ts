import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

const root = path.join(import.meta.dirname, "..");

export default defineConfig(async () => ({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: path.join(root, "wrangler.toml") },
      miniflare: {
        // The real migrations, applied to each test file's own local D1 by test/setup.ts.
        bindings: {
          TEST_MIGRATIONS: await readD1Migrations(path.join(root, "drizzle")),
          API_KEY: "test-key, second-key",
        },
      },
    }),
  ],
  test: {
    root,
    include: ["test/**/*.test.ts"],
    setupFiles: ["test/setup.ts"],
    // The one-line-per-request log (src/platform/log.ts) would drown the test output.
    onConsoleLog: (log: string) => !log.startsWith('{"level":"info","msg":"request"'),
  },
}));
