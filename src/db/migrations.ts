// The newest migration in drizzle/ (its file name, as wrangler and applyD1Migrations record it in
// d1_migrations). GET /health compares the database against it; test/health.test.ts fails when a
// migration is added without updating this line.
export const LATEST_MIGRATION = "0015_orders_customer.sql";
