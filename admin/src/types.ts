// The shapes the admin reads from the /v1 API (docs/orders.md, products.md, keys.md,
// webhooks.md), as far as the admin uses them.

export type SessionKey = { id: number | null; name: string; scopes: string[] };
export type ListedSession = {
  id: string;
  key: { id: number | null; name: string };
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  user_agent: string | null;
  current: boolean;
};
export type Session = {
  currency: string;
  csrf_token: string;
  expires_at: string;
  idle_expires_at: string;
  key: SessionKey;
};

export type Address = {
  firstname?: string;
  lastname?: string;
  company?: string;
  address?: string;
  address2?: string;
  zipcode?: string;
  city?: string;
  country?: string;
};

export type OrderLine = {
  product_id: number;
  variant_id: number | null;
  sku: string | null;
  title: string;
  options: { name: string; value: string }[];
  qty: number;
  price: number;
  total: number;
};

/** An order as GET /v1/orders/{id} answers it. */
export type Order = {
  order_id: number;
  status: string;
  date_paid: string | null;
  date_done: string | null;
  date_cancelled: string | null;
  status_date: string | null;
  cancel_reason: string | null;
  hold_expires_at: string | null;
  currency: string;
  customer: {
    email: string | null;
    phone: string | null;
    note: string | null;
    billing_details: Address | null;
    shipping_details: Address | null;
  };
  payment: { method: string | null; transaction_id: string | null };
  shipping: { name: string | null; price: number };
  shipping_info: { trackingnumber: string | null; company: string | null };
  products: OrderLine[];
  subtotal: number;
  discount: number;
  total: number;
  tax: { rate: number; amount: number }[];
  created_at: string;
  updated_at: string;
  key?: { id: number; name: string };
  history: {
    at: string;
    change: string;
    restock: boolean | null;
    reason: string | null;
    key: { id: number | null; name: string | null };
    via: "key" | "session" | "system";
  }[];
};

/** A row of GET /v1/orders with include_details (the modelled shape: money and ids as text). */
export type OrderRow = {
  order_id: string;
  date_created: string;
  date_paid: string;
  total_amount: string;
  items_amount: string;
  shipping_amount: string;
  tax_amount: string;
  status: string;
  currency: string;
  shipping_name: string;
  tracking_number: string;
  shipping_company: string;
  paymethod: { method: string };
  products: { sku: string; title: string; variant: string; qty: number; price: string }[];
  customer: {
    full_name: string;
    email: string;
    phone: string;
    shipping_details: {
      full_name: string;
      company_name: string;
      address: string;
      address2: string;
      zipcode: string;
      city: string;
      country: string;
    };
  };
};

export type ProductRow = {
  id: string;
  title: string;
  sku: string;
  price: string;
  stock: string;
  visible: string;
  hasVariants: string;
  /** With include_details. */
  variants?: { id: string; sku: string; qty: string; values?: { name: string; val: string }[] }[];
};

export type Variant = {
  variant_id: number;
  sku: string | null;
  qty: number;
  price: number;
  [option: `variant_option${number}_value`]: string | null | undefined;
};

/** A product as GET /v1/products/{id} answers it. */
export type Product = {
  product_id: number;
  title: string;
  sku: string | null;
  price: number;
  stock: number;
  visible: number;
  variants: Variant[];
  updated_at: string;
};

export type Key = {
  id: number;
  name: string;
  prefix: string;
  type: "secret" | "publishable";
  scopes: string[];
  allowed_origins: string[];
  last_used_at: string | null;
  expires_at: string | null;
  revoked: boolean;
  revoked_at: string | null;
};

export type Webhook = {
  id: number;
  url: string;
  events: string[];
  format: string;
  enabled: boolean;
  disabled_reason: string | null;
};

export type Delivery = {
  id: number;
  event_id: string;
  event_type: string;
  order_id: number | null;
  product_id: number | null;
  attempt: number;
  status: number | null;
  error: string | null;
  duration_ms: number | null;
  outcome: string;
  created_at: string;
};
