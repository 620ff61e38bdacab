// The database's tables, by what they hold: the catalogue (products, variants, SKUs and their
// bookkeeping), orders (with customers, lines, history and shipping methods), and the service's own
// (keys, sessions, webhooks, idempotency). drizzle-kit generates the migrations from these files.
//
// Money columns hold integer minor units (hundredths); JSON columns hold canonical JSON text.
// Invariants that concurrent requests could break are constraints here, so that a D1 batch that
// would break them fails whole (D1 has no interactive transactions): stock floors are CHECKs,
// SKU uniqueness is the `skus` primary key (kept by triggers, see drizzle/0001), idempotency keys
// are a primary key.

export * from "./catalog";
export * from "./orders";
export * from "./service";
