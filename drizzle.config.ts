import { defineConfig } from "drizzle-kit";

// Migrations are generated here and applied by `wrangler d1 migrations apply` (contract 7),
// so drizzle-kit needs no database credentials.
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/db/schema.ts",
  out: "./drizzle",
});
