import { defineConfig } from "drizzle-kit";

// Migrations are generated here and applied by `wrangler d1 migrations apply` (docs/operations.md),
// so drizzle-kit needs no database credentials.
export default defineConfig({
  dialect: "sqlite",
  schema: ["./src/db/schema/catalog.ts", "./src/db/schema/orders.ts", "./src/db/schema/service.ts"],
  out: "./drizzle",
});
