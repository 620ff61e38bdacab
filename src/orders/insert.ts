// The customer and order INSERTs of a create, shared by the JavaScript-planned batch (create.ts)
// and the SQL-planned one of a cold isolate (cold.ts): the same columns from the same row objects
// (plan.ts orderFields), only where the totals come from differs.

/** ?1 the customers' rows as one JSON array, ?2 now. */
export const UPSERT_CUSTOMERS = `
  INSERT INTO customers (email, email_key, type, phone, billing_details, shipping_details,
    has_login, newsletter, created_at, updated_at)
  SELECT c.value->>'email', c.value->>'email_key', c.value->>'type', c.value->>'phone',
    c.value->'billing_details', c.value->'shipping_details', c.value->>'has_login',
    c.value->>'newsletter', ?2, ?2
  FROM json_each(?1) AS c WHERE true
  ON CONFLICT (email_key) DO UPDATE SET
    email = excluded.email,
    type = coalesce(excluded.type, customers.type),
    phone = coalesce(excluded.phone, customers.phone),
    billing_details = coalesce(excluded.billing_details, customers.billing_details),
    shipping_details = coalesce(excluded.shipping_details, customers.shipping_details),
    has_login = max(customers.has_login, excluded.has_login),
    newsletter = max(customers.newsletter, excluded.newsletter),
    updated_at = excluded.updated_at`;

/**
 * INSERT of orders from `from`, which names each order's row object `o` (a json_each row), with
 * the totals given as SQL expressions; `status` (default 'unpaid') an expression that may be NULL
 * to fail the batch (the column is NOT NULL). ORDER BY the array position so order ids follow the
 * order of the request.
 */
export const insertOrders = (t: {
  subtotal: string;
  discount: string;
  total: string;
  tax: string;
  from: string;
  now: string;
  status?: string;
}) => `
  INSERT INTO orders (token, status, customer_id, email, phone, customer_type, note, login_create,
    newsletter_subscribe, billing_details, shipping_details, payment_method, transaction_id,
    payment_log, currency, shipping_id, shipping_name, shipping_price, subtotal, discount, total,
    tax, metadata, created_at, updated_at, key_id, storefront)
  SELECT o.value->>'token', ${t.status ?? "'unpaid'"},
    (SELECT id FROM customers WHERE email_key = o.value->>'email_key'),
    o.value->>'email', o.value->>'phone', o.value->>'customer_type', o.value->>'note',
    o.value->>'login_create', o.value->>'newsletter_subscribe', o.value->'billing_details',
    o.value->'shipping_details', o.value->>'payment_method', o.value->>'transaction_id',
    o.value->>'payment_log', o.value->>'currency', o.value->>'shipping_id',
    o.value->>'shipping_name', o.value->>'shipping_price', ${t.subtotal}, ${t.discount}, ${t.total},
    ${t.tax}, o.value->'metadata', ${t.now}, ${t.now}, o.value->>'key_id', o.value->>'storefront'
  FROM ${t.from} ORDER BY o.key`;
