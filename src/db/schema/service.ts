import { sql } from "drizzle-orm";
import { check, index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

// Stored answers for Idempotency-Key retries (docs/security.md, "Guarantees"). Written in the same batch as the
// effect, so the primary key makes a concurrent second request with one key fail and roll back.
export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    key: text("key").primaryKey(),
    requestHash: text("request_hash").notNull(),
    status: integer("status").notNull(),
    body: text("body").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("idempotency_keys_created").on(t.createdAt)],
);

// The outbox (docs/webhooks.md, "Webhooks"): one row per event, written in the same D1 batch as the change
// that causes it, so an event exists exactly when its change committed. Delivery reads it from here.
export const events = sqliteTable(
  "events",
  {
    // Worker-generated (crypto.randomUUID), so the request knows it before the batch runs; it is
    // the `webhook-id` of every delivery of the event.
    id: text("id").primaryKey(),
    type: text("type").notNull(),
    orderId: integer("order_id"),
    productId: integer("product_id"),
    createdAt: integer("created_at").notNull(),
    // The API key (api_keys.id) whose request caused the event; null for the bootstrap API_KEY.
    keyId: integer("key_id"),
    // Set once the event has been handed to the delivery queue; the sweep re-sends those left null.
    dispatchedAt: integer("dispatched_at"),
    // Set by the consumer when it recorded the event's first attempts (or found no endpoint): an
    // event dispatched long ago and still null was lost in a consumer that stopped mid-delivery,
    // and the sweep sends it again.
    fannedOutAt: integer("fanned_out_at"),
  },
  (t) => [
    index("events_undispatched").on(t.dispatchedAt, t.createdAt),
    index("events_not_fanned_out").on(t.dispatchedAt).where(sql`fanned_out_at IS NULL`),
  ],
);

export const webhookEndpoints = sqliteTable("webhook_endpoints", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  url: text("url").notNull(),
  // JSON array of event types, or ["*"].
  events: text("events").notNull(),
  format: text("format").notNull(),
  // whsec_ + base64 of 32 random bytes; never in a list answer or a log line.
  secret: text("secret").notNull(),
  // Set when the receiver answered 410 Gone: nothing more is sent to it.
  disabledAt: integer("disabled_at"),
  disabledReason: text("disabled_reason"),
  createdAt: integer("created_at").notNull(),
});

// One row per delivery attempt, for GET /v1/webhooks/{id}/deliveries and for the merchant's eyes.
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    endpointId: integer("endpoint_id")
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: "cascade" }),
    eventId: text("event_id").notNull(),
    eventType: text("event_type").notNull(),
    attempt: integer("attempt").notNull(),
    // HTTP status of the receiver's answer, or null with `error` (timeout, DNS, ...).
    status: integer("status"),
    error: text("error"),
    durationMs: integer("duration_ms").notNull(),
    // "delivered", "retrying", "failed" (gave up), "disabled" (410)
    outcome: text("outcome").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("webhook_deliveries_endpoint").on(t.endpointId, t.id), index("webhook_deliveries_event").on(t.eventId)],
);

// Keys as data (docs/keys.md): only the SHA-256 of a key is stored (a key is 192 random bits, so a
// fast hash is enough); `prefix` is its first characters, to recognise it in a list.
export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    name: text("name").notNull(),
    type: text("type").notNull(),
    prefix: text("prefix").notNull(),
    hash: text("hash").notNull().unique(),
    // JSON array of scopes (src/keys/scopes.ts); for a publishable key, its extra permissions.
    scopes: text("scopes").notNull().default("[]"),
    // JSON array of exact origins a browser may call from (publishable keys).
    allowedOrigins: text("allowed_origins").notNull().default("[]"),
    expiresAt: integer("expires_at"),
    createdAt: integer("created_at").notNull(),
    // Written at most once a minute per isolate, when the isolate re-verifies the key.
    lastUsedAt: integer("last_used_at"),
    revokedAt: integer("revoked_at"),
  },
  (t) => [check("api_keys_type", sql`${t.type} IN ('secret', 'publishable')`)],
);

// Browser sessions of the admin (docs/admin.md, "Sessions"): a cookie stands for a secret key.
// Only hashes are stored: `id` is the SHA-256 of the cookie's random value, `csrf` that of the
// session's CSRF token. `key_id` is the stored key it stands for; null for the bootstrap API_KEY,
// whose entry's SHA-256 is `key_hash`, so rotating that key out ends its sessions too.
export const sessions = sqliteTable(
  "sessions",
  {
    id: text("id").primaryKey(),
    keyId: integer("key_id"),
    keyHash: text("key_hash"),
    csrf: text("csrf").notNull(),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
    revokedAt: integer("revoked_at"),
    // The last request made with it (to the minute): idle past SESSION_IDLE_MINUTES, it has ended.
    lastSeenAt: integer("last_seen_at"),
    // The browser's User-Agent at sign-in (cut to 200 characters), so the keys page can tell
    // sessions apart.
    userAgent: text("user_agent"),
  },
  (t) => [
    index("sessions_key_id").on(t.keyId),
    check("sessions_one_key", sql`(${t.keyId} IS NULL) <> (${t.keyHash} IS NULL)`),
  ],
);
