import { sql } from "drizzle-orm";
import { check, index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { timestamps } from "./timestamps";

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
    // The customers list's totals and a customer's orders (src/customers/): a customer's orders
    // in id order, without a scan of every order.
    index("orders_customer").on(t.customerId, t.id),
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

// What happened to an order and who did it (docs/orders.md, "History"): one row per status
// change, shipping change or line edit, written in the batch of the change itself. `key_id` and
// `key_name` name the key (null id: the bootstrap API_KEY), `via` says whether it came with the
// key itself or the admin's session of it.
export const orderHistory = sqliteTable(
  "order_history",
  {
    // A plain rowid, not AUTOINCREMENT: its sqlite_sequence row would be read (the whole table)
    // and written by every change's history row. Rows go only with their order, so an id is
    // never handed out twice while its row lives, and the list's order is the id's.
    id: integer("id").primaryKey(),
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
