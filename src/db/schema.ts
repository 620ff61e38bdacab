import { sql } from "drizzle-orm";
import { check, index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

// Money columns hold integer minor units (hundredths); JSON columns hold canonical JSON text.
// Invariants that concurrent requests could break are constraints here, so that a D1 batch that
// would break them fails whole (D1 has no interactive transactions): stock floors are CHECKs,
// SKU uniqueness is the `skus` primary key (kept by triggers, see drizzle/0001), idempotency keys
// are a primary key.

const timestamps = {
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at").notNull(),
};

export const products = sqliteTable(
  "products",
  {
    // AUTOINCREMENT: an id is never reused, so order-line snapshots and cursors stay unambiguous.
    id: integer("id").primaryKey({ autoIncrement: true }),
    // Worker-generated token that ties rows created in one batch to this product (docs/security.md, "Guarantees").
    token: text("token").unique(),
    sku: text("sku"),
    title: text("title").notNull(),
    price: integer("price").notNull().default(0),
    beforePrice: integer("before_price"),
    purchasePrice: integer("purchase_price"),
    taxRate: integer("tax_rate").notNull().default(25),
    stock: integer("stock").notNull().default(0),
    qtyLocation: text("qty_location"),
    disableMinusqty: integer("disable_minusqty").notNull().default(0),
    visible: integer("visible").notNull().default(1),
    description: text("description"),
    gtin: text("gtin"),
    supplierName: text("supplier_name"),
    supplierSku: text("supplier_sku"),
    datafield1: text("datafield_1"),
    datafield2: text("datafield_2"),
    datafield3: text("datafield_3"),
    seoDescription: text("seo_description"),
    seoTitle: text("seo_title"),
    weight: real("weight"),
    images: text("images").notNull().default("[]"),
    metadata: text("metadata"),
    brand: text("brand"),
    // Option names shared by all variants (docs/products.md, "Updating products"), as a JSON array of 0 to 5 strings.
    optionNames: text("option_names").notNull().default("[]"),
    ...timestamps,
    // The API key (api_keys.id) that last wrote the product; null for the bootstrap API_KEY.
    keyId: integer("key_id"),
    // The product's URL path under STORE_URL (docs/products.md, "Categories, URLs and images"): unique;
    // a write that leaves it to the database stores "<base>~<token>" and a trigger resolves it
    // (drizzle/0006_categories.sql). NULL for products created before slugs existed.
    slug: text("slug"),
    // The category paths, head category first: a JSON array of arrays of names ([["Clothes", "Shirts"]]).
    categories: text("categories").notNull().default("[]"),
  },
  (t) => [
    uniqueIndex("products_slug").on(t.slug),
    check("products_price", sql`${t.price} >= 0`),
    check("products_tax_rate", sql`${t.taxRate} BETWEEN 0 AND 100`),
    check("products_flags", sql`${t.disableMinusqty} IN (0, 1) AND ${t.visible} IN (0, 1)`),
    // Never oversell: with disable_minusqty on, stock cannot go below zero (docs/orders.md, "Orders").
    check("products_stock_floor", sql`${t.disableMinusqty} = 0 OR ${t.stock} >= 0`),
  ],
);

export const variants = sqliteTable(
  "variants",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    productId: integer("product_id")
      .notNull()
      .references(() => products.id, { onDelete: "cascade" }),
    sku: text("sku"),
    // Absent options are '' rather than NULL so the unique combination index sees them as equal.
    option1: text("option1_value").notNull().default(""),
    option2: text("option2_value").notNull().default(""),
    option3: text("option3_value").notNull().default(""),
    option4: text("option4_value").notNull().default(""),
    option5: text("option5_value").notNull().default(""),
    price: integer("price").notNull().default(0),
    beforePrice: integer("before_price"),
    purchasePrice: integer("purchase_price"),
    qty: integer("qty").notNull().default(0),
    qtyLocation: text("qty_location"),
    gtin: text("gtin"),
    supplierSku: text("supplier_sku"),
    weight: real("weight"),
    visible: integer("visible").notNull().default(1),
    images: text("images").notNull().default("[]"),
    // Copy of the product's disable_minusqty, kept in the same batch as the product's, because a
    // CHECK cannot look at another table and the stock floor must be a constraint.
    noMinus: integer("no_minus").notNull().default(0),
    position: integer("position").notNull().default(0),
    ...timestamps,
  },
  (t) => [
    uniqueIndex("variants_options").on(t.productId, t.option1, t.option2, t.option3, t.option4, t.option5),
    index("variants_product").on(t.productId, t.position),
    check("variants_price", sql`${t.price} >= 0`),
    check("variants_visible", sql`${t.visible} IN (0, 1) AND ${t.noMinus} IN (0, 1)`),
    check("variants_stock_floor", sql`${t.noMinus} = 0 OR ${t.qty} >= 0`),
  ],
);

// Every category a product is in, at any level of any of its paths (a path ["Clothes", "Shirts"]
// gives "Clothes" and "Clothes>Shirts"): the index of GET /v1/products?category=. Kept from
// products.categories by triggers (drizzle/0006_categories.sql), so no write path maintains it.
export const productCategories = sqliteTable(
  "product_categories",
  {
    productId: integer("product_id")
      .notNull()
      .references(() => products.id, { onDelete: "cascade" }),
    // The names from the head category to this one, joined with ">" (names cannot contain it).
    path: text("path").notNull(),
    name: text("name").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.productId, t.path] }),
    index("product_categories_name").on(t.name, t.productId),
    index("product_categories_path").on(t.path, t.productId),
  ],
);

// Every SKU of the store, product or variant: the primary key makes SKUs unique across both
// tables, inside the database, whatever the order of concurrent writes (docs/products.md, "Updating products").
export const skus = sqliteTable("skus", {
  sku: text("sku").primaryKey(),
  productId: integer("product_id").notNull(),
  variantId: integer("variant_id"),
});

export const customers = sqliteTable("customers", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  email: text("email").notNull(),
  // lower(email): customers are found by e-mail case-insensitively (docs/orders.md, "Orders").
  emailKey: text("email_key").notNull().unique(),
  type: text("type"),
  phone: text("phone"),
  billingDetails: text("billing_details"),
  shippingDetails: text("shipping_details"),
  hasLogin: integer("has_login").notNull().default(0),
  newsletter: integer("newsletter").notNull().default(0),
  ...timestamps,
});

export const orders = sqliteTable(
  "orders",
  {
    // AUTOINCREMENT, seeded at 1000 by the first migration so the first order is 1001.
    id: integer("id").primaryKey({ autoIncrement: true }),
    token: text("token").notNull().unique(),
    status: text("status").notNull().default("unpaid"),
    // The API key (api_keys.id) that created the order; null for the bootstrap API_KEY.
    keyId: integer("key_id"),
    customerId: integer("customer_id").references(() => customers.id),
    email: text("email"),
    phone: text("phone"),
    customerType: text("customer_type"),
    note: text("note"),
    loginCreate: integer("login_create").notNull().default(0),
    newsletterSubscribe: integer("newsletter_subscribe").notNull().default(0),
    billingDetails: text("billing_details"),
    shippingDetails: text("shipping_details"),
    paymentMethod: text("payment_method"),
    transactionId: text("transaction_id"),
    paymentLog: text("payment_log"),
    currency: text("currency").notNull(),
    shippingId: integer("shipping_id"),
    shippingName: text("shipping_name"),
    shippingPrice: integer("shipping_price").notNull().default(0),
    subtotal: integer("subtotal").notNull(),
    discount: integer("discount").notNull().default(0),
    total: integer("total").notNull(),
    // [{"rate": 25, "amount": 3980}] in minor units.
    tax: text("tax").notNull().default("[]"),
    metadata: text("metadata"),
    // Lifecycle (PUT /v1/orders): when the order first became paid, done and cancelled, and when
    // its status last changed; epoch milliseconds like created_at.
    datePaid: integer("date_paid"),
    dateDone: integer("date_done"),
    dateCancelled: integer("date_cancelled"),
    statusDate: integer("status_date"),
    cancelReason: text("cancel_reason"),
    trackingNumber: text("tracking_number"),
    shippingCompany: text("shipping_company"),
    // A CHECK on status would need a table rebuild (SQLite cannot add one), and rebuilding orders
    // would cascade-delete its lines on D1, where foreign keys cannot be switched off: the four
    // statuses are kept by the code that writes them (src/orders/).
    // Bumped by every change, so a write batch planned from a read can fail (stale_reads) when
    // another request changed the order in between: no lost line edits, no stock returned twice.
    version: integer("version").notNull().default(0),
    // 1: created with a publishable key (docs/keys.md, "Storefront orders"): its unpaid hold is
    // STOREFRONT_HOLD_MINUTES, its token reads it only with that key, and it links no customer.
    storefront: integer("storefront").notNull().default(0),
    ...timestamps,
  },
  (t) => [
    index("orders_status").on(t.status, t.id),
    // The unpaid hold's scan (src/orders/hold.ts): storefront and other orders have holds of their own.
    index("orders_hold").on(t.storefront, t.status, t.createdAt),
    index("orders_status_created").on(t.status, t.createdAt),
    index("orders_date_paid").on(t.datePaid),
    index("orders_status_date").on(t.statusDate),
    check(
      "orders_money",
      sql`${t.subtotal} >= 0 AND ${t.discount} >= 0 AND ${t.total} >= 0 AND ${t.shippingPrice} >= 0`,
    ),
  ],
);

// The store's shipping methods (docs/orders.md, "Shipping methods"): what a storefront's order
// names by id, priced here, never by the browser.
export const shippingMethods = sqliteTable(
  "shipping_methods",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    name: text("name").notNull(),
    price: integer("price").notNull(),
    // Orders whose lines come to at least this much ship free; null: never free.
    freeOver: integer("free_over"),
    // JSON array of two-letter country codes the method ships to; [] ships anywhere.
    countries: text("countries").notNull().default("[]"),
    visible: integer("visible").notNull().default(1),
    ...timestamps,
  },
  (t) => [
    check("shipping_methods_money", sql`${t.price} >= 0 AND (${t.freeOver} IS NULL OR ${t.freeOver} >= 0)`),
    check("shipping_methods_visible", sql`${t.visible} IN (0, 1)`),
  ],
);

// Lines keep a snapshot of what was sold, so later catalog changes never alter a past order;
// product_id and variant_id are references for reporting only (no foreign key: catalog rows may go).
export const orderLines = sqliteTable(
  "order_lines",
  {
    orderId: integer("order_id")
      .notNull()
      .references(() => orders.id, { onDelete: "cascade" }),
    position: integer("position").notNull(),
    productId: integer("product_id").notNull(),
    variantId: integer("variant_id"),
    sku: text("sku"),
    title: text("title").notNull(),
    // [{"name": "Colour", "value": "Red"}]
    options: text("options").notNull().default("[]"),
    qty: integer("qty").notNull(),
    unitPrice: integer("unit_price").notNull(),
    taxRate: integer("tax_rate").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.orderId, t.position] }),
    check("order_lines_qty", sql`${t.qty} BETWEEN 1 AND 100000`),
    check("order_lines_price", sql`${t.unitPrice} >= 0`),
  ],
);

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

// Never holds a row. A write batch inserts the products that changed since the request read them,
// and the always-false CHECK then fails the whole batch, which is planned again from a fresh read:
// a zero-row UPDATE is no error, so a constraint is how a batch says its read went stale.
export const staleReads = sqliteTable("stale_reads", { productId: integer("product_id").notNull() }, () => [
  check("stale_read", sql`0`),
]);

// Scratch of a variant sync planned in SQL (src/products/update/variants-sql.ts): which variant each
// entry of the list matches and the option values it will have, so the batch's later statements
// need neither the list again nor a match that their own changes would move. Filled and emptied
// inside one batch (one transaction): no other request ever sees a row.
export const variantSync = sqliteTable("variant_sync", {
  entry: integer("entry").primaryKey(),
  productId: integer("product_id").notNull(),
  variantId: integer("variant_id"),
  option1: text("option1_value").notNull(),
  option2: text("option2_value").notNull(),
  option3: text("option3_value").notNull(),
  option4: text("option4_value").notNull(),
  option5: text("option5_value").notNull(),
  // Whether the JavaScript plan would refuse the entry (missing or extra option values).
  bad: integer("bad").notNull(),
  data: text("data").notNull(),
});

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

// One row whose version moves with every change to products or variants (triggers in
// drizzle/0005_keys.sql, so every write path's own batch moves it): the key of the storefront
// catalog cache (docs/keys.md, "Edge cache").
export const catalogVersion = sqliteTable(
  "catalog_version",
  {
    id: integer("id").primaryKey(),
    version: integer("version").notNull().default(0),
  },
  (t) => [check("catalog_version_one_row", sql`${t.id} = 1`)],
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

// Each product's version (docs/stock.md): the ETag of
// GET /v1/products/{id} and what If-Match on PUT compares. Triggers move it with every change of
// the product or of its variants, whoever writes it (a PUT, an order's stock move, a cancel's
// restock), and never for another product's change (drizzle/0010_stock_version.sql). A table of
// its own, so that a change of 2,048 variants rewrites a small row, not the product's.
export const productVersions = sqliteTable("product_versions", {
  productId: integer("product_id")
    .primaryKey()
    .references(() => products.id, { onDelete: "cascade" }),
  version: integer("version").notNull().default(1),
});

// What happened to an order and who did it (docs/orders.md, "History"): one row per status
// change, shipping change or line edit, written in the batch of the change itself. `key_id` and
// `key_name` name the key (null id: the bootstrap API_KEY), `via` says whether it came with the
// key itself or the admin's session of it.
export const orderHistory = sqliteTable(
  "order_history",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    orderId: integer("order_id")
      .notNull()
      .references(() => orders.id, { onDelete: "cascade" }),
    at: integer("at").notNull(),
    // "paid", "done", "unpaid", "cancelled", "shipping", "lines"
    change: text("change").notNull(),
    // For a cancel: whether the stock was returned, and the reason given.
    restock: integer("restock"),
    reason: text("reason"),
    keyId: integer("key_id"),
    keyName: text("key_name"),
    via: text("via").notNull(),
  },
  (t) => [index("order_history_order").on(t.orderId, t.id)],
);
