import { getTableColumns } from "drizzle-orm";
import { z } from "zod";
import { type customers, orderLines, orders } from "../db/schema";
import { currency, flag, int, metadata, money, opt, str } from "../platform/fields";
import { address, email, phone } from "./inputs";

// An order's, an order line's and a customer's fields, described once (CONTRIBUTING.md, "Adding
// an order field"). Each entry is one place of our answer (GET /v1/orders/{id}, the webhooks'
// `data`), named by its path there ("customer.email"), which is also its path in a request body.
// Derived from these lists: the blocks' request validators, the INSERTs, the presenter (read.ts),
// what a storefront is not shown, the fields a PUT sets (status.ts), the modelled dialect's SQL and
// size estimate (modelled-json.ts), and both dialects' OpenAPI schemas (src/openapi/). Entries
// marked SPECIAL are answered by code of their own; the SQL is built once, when the modules load.

/** How a value is answered in our dialect (and typed in OpenAPI). */
export type Kind =
  | "id" // a positive whole number
  | "int" // a whole number
  | "text"
  | "flag" // 0/1 stored, a JSON boolean answered
  | "money" // minor units stored, major units answered
  | "time" // epoch milliseconds stored, ISO 8601 answered
  | "address" // JSON text of an address object
  | "object" // JSON text of an object
  | "json"; // JSON text of any value

/** How the modelled dialect answers a value (docs/modelled-reads.md, "Modelled reads"). */
export type Encoding =
  | "digits" // a number as a string
  | "text" // "" for none
  | "amount" // money as text with two decimals
  | "date" // "YYYY-MM-DD HH:MM:SS" UTC, "" for none
  | "number"; // a JSON number (or null)

/** One place of a field in the modelled dialect: its path there, its encoding, whether lists without details have it. */
export type ModelledSlot = { at: string; enc: Encoding; list?: true; doc?: string };

type Field<Column extends string> = {
  /** The Drizzle table's key of the column. */
  column: Column;
  kind: Kind;
  /** The create body's validator of the field (at the same path); absent: a create cannot set it. */
  create?: z.ZodType;
  /** What a create stores when the body leaves the field out (else NULL; JSON kinds stay absent). */
  initial?: unknown;
  /** The PUT body's validator of the field; absent: a PUT cannot set it. */
  update?: z.ZodType;
  /** Only a cancel stores the PUT's value (status.ts). */
  onCancel?: true;
  /** Where the modelled dialect answers it; absent: not at all. */
  modelled?: readonly ModelledSlot[];
  /** false: a publishable key's read leaves it out (docs/keys.md, "Storefront orders"). */
  storefront?: false;
  /** Times the field's text counts in the modelled answer's size estimate (default: its modelled slots). */
  estimate?: number;
  /** Its description in the OpenAPI document. */
  doc?: string;
};

/** An entry answered by code of its own (ORDER_SPECIALS in read.ts, orderOut in src/openapi/responses.ts). */
export const SPECIAL = { special: true } as const;
type Special = typeof SPECIAL;

export type OrderColumn = keyof typeof orders.$inferSelect;
export type LineColumn = keyof typeof orderLines.$inferSelect;
export type CustomerColumn = keyof typeof customers.$inferSelect;
type OrderField = Field<OrderColumn>;
type LineField = Field<LineColumn>;

const t = (at: string, enc: Encoding = "text"): ModelledSlot => ({ at, enc });
const shippingId = int(0, Number.MAX_SAFE_INTEGER, "must be a whole number of at least 0");

/** An order, in the order of our answer. */
export const ORDER_FIELDS = {
  order_id: { column: "id", kind: "id", modelled: [{ at: "order_id", enc: "digits", list: true }] },
  status: { column: "status", kind: "text" },
  date_paid: {
    column: "datePaid",
    kind: "time",
    modelled: [t("date_paid", "date")],
    doc: "When the order first became paid.",
  },
  date_done: { column: "dateDone", kind: "time", doc: "When the order first became done." },
  date_cancelled: { column: "dateCancelled", kind: "time", doc: "When the order was cancelled." },
  status_date: {
    column: "statusDate",
    kind: "time",
    doc: "When the status last changed (null: never since creation).",
  },
  cancel_reason: {
    column: "cancelReason",
    kind: "text",
    // Ours: why a cancel happened, kept on the order and in its history (only a cancel stores it).
    update: opt(str(255)),
    onCancel: true,
    doc: 'The cancel_reason of the cancel; "unpaid hold expired" when the hold cancelled it.',
  },
  hold_expires_at: SPECIAL,
  currency: { column: "currency", kind: "text", modelled: [t("currency")] },
  "customer.customer_id": {
    column: "customerId",
    kind: "id",
    storefront: false,
    doc: "The stored customer the order is linked to; absent when a publishable key reads the order.",
  },
  "customer.type": {
    column: "customerType",
    kind: "text",
    create: opt(str(32)),
    modelled: [t("customer.customer_type")],
  },
  "customer.email": { column: "email", kind: "text", create: opt(email), modelled: [t("customer.email")] },
  "customer.phone": { column: "phone", kind: "text", create: opt(phone), modelled: [t("customer.phone")] },
  "customer.login_create": { column: "loginCreate", kind: "flag", create: opt(flag), initial: 0 },
  "customer.newsletter_subscribe": { column: "newsletterSubscribe", kind: "flag", create: opt(flag), initial: 0 },
  // The modelled dialect answers the addresses by code of its own (modelled-json.ts): the billing
  // address twice (flattened into customer, and as billing_details).
  "customer.billing_details": { column: "billingDetails", kind: "address", create: opt(address), estimate: 2 },
  "customer.shipping_details": { column: "shippingDetails", kind: "address", create: opt(address), estimate: 1 },
  "customer.note": {
    column: "note",
    kind: "text",
    create: opt(str(10_000)),
    modelled: [t("notes"), t("customer.notes")],
  },
  "payment.method": { column: "paymentMethod", kind: "text", create: opt(str(255)), modelled: [t("paymethod.method")] },
  "payment.transaction_id": {
    column: "transactionId",
    kind: "text",
    create: opt(str(255)),
    modelled: [t("paymethod.transaction_id")],
  },
  // A create without it stores the store's DEFAULT_CURRENCY (plan.ts orderRow).
  "payment.currency": { column: "currency", kind: "text", create: opt(currency) },
  "payment.log": { column: "paymentLog", kind: "text", create: opt(str(10_000)) },
  // A storefront's order takes these from the shipping method it names (storefront.ts).
  "shipping.id": { column: "shippingId", kind: "int", create: opt(shippingId), modelled: [t("shipping_id", "digits")] },
  "shipping.name": { column: "shippingName", kind: "text", create: opt(str(255)), modelled: [t("shipping_name")] },
  "shipping.price": {
    column: "shippingPrice",
    kind: "money",
    create: opt(money),
    initial: 0,
    modelled: [t("shipping_amount", "amount")],
  },
  "shipping_info.trackingnumber": {
    column: "trackingNumber",
    kind: "text",
    update: opt(str(255)),
    modelled: [t("tracking_number")],
  },
  "shipping_info.company": {
    column: "shippingCompany",
    kind: "text",
    update: opt(str(255)),
    modelled: [t("shipping_company")],
  },
  products: SPECIAL,
  subtotal: { column: "subtotal", kind: "money", modelled: [t("items_amount", "amount")] },
  discount: { column: "discount", kind: "money", modelled: [t("discount_amount", "amount")] },
  total: {
    column: "total",
    kind: "money",
    modelled: [{ at: "total_amount", enc: "amount", list: true }, t("total_pay_amount", "amount")],
  },
  tax: SPECIAL,
  metadata: { column: "metadata", kind: "object", create: opt(metadata) },
  created_at: { column: "createdAt", kind: "time", modelled: [{ at: "date_created", enc: "date", list: true }] },
  updated_at: { column: "updatedAt", kind: "time" },
} as const satisfies Record<string, OrderField | Special>;

/** An order line (order_lines), in the order of our answer. Lines are snapshots of the catalog
 * (catalog.ts): a create sets them from the products it sells, never from the body. */
export const LINE_FIELDS = {
  product_id: { column: "productId", kind: "id", modelled: [t("product_id", "number")] },
  variant_id: { column: "variantId", kind: "id", modelled: [t("variant_id", "number")] },
  sku: { column: "sku", kind: "text", modelled: [t("sku")] },
  title: { column: "title", kind: "text", modelled: [t("title")] },
  options: {
    column: "options",
    kind: "json",
    estimate: 1,
    doc: "Option values of the variant when the order was placed.",
  },
  qty: { column: "qty", kind: "int", modelled: [t("qty", "number")] },
  price: { column: "unitPrice", kind: "money", modelled: [{ at: "price", enc: "amount", doc: "Unit price." }] },
  tax_rate: { column: "taxRate", kind: "int" },
  total: SPECIAL,
} as const satisfies Record<string, LineField | Special>;

/**
 * The modelled dialect's order of keys (docs/modelled-reads.md), the SPECIAL ones of modelled-json.ts
 * included: a slot left out is answered at the end of its object, a nested object where its first key is.
 */
export const MODELLED_ORDER_LAYOUT = [
  "order_id",
  "date_created",
  "total_amount",
  "status",
  "status_name",
  "products",
  "date_paid",
  "status_date",
  "currency",
  "items_amount",
  "shipping_amount",
  "discount_amount",
  "tax_amount",
  "total_pay_amount",
  "shipping_id",
  "shipping_name",
  "tracking_number",
  "shipping_company",
  "notes",
  "is_taxfree",
  "is_taxontop",
  "paymethod.method",
  "paymethod.transaction_id",
  "customer.email",
  "customer.phone",
  "customer.customer_type",
  "customer.company_name",
  "customer.full_name",
  "customer.address",
  "customer.address2",
  "customer.city",
  "customer.zipcode",
  "customer.country",
  "customer.notes",
  "customer.shipping_details",
  "customer.billing_details",
] as const;
export const MODELLED_LINE_LAYOUT = [
  "id",
  "product_id",
  "variant_id",
  "title",
  "sku",
  "variant",
  "price",
  "qty",
] as const;

/**
 * A customer (customers), upserted by e-mail from a secret key's order (docs/orders.md, "Orders"):
 * each column from the key of the order's customer block, and how a later order changes it:
 * "replace", "keep" (a later value replaces, a missing one keeps), "max" (a flag once on stays on).
 */
export const CUSTOMER_FIELDS = {
  email: { column: "email", from: "email", merge: "replace" },
  type: { column: "type", from: "type", merge: "keep" },
  phone: { column: "phone", from: "phone", merge: "keep" },
  billing_details: { column: "billingDetails", from: "billing_details", merge: "keep", json: true },
  shipping_details: { column: "shippingDetails", from: "shipping_details", merge: "keep", json: true },
  has_login: { column: "hasLogin", from: "login_create", merge: "max", initial: 0 },
  newsletter: { column: "newsletter", from: "newsletter_subscribe", merge: "max", initial: 0 },
} as const satisfies Record<
  string,
  { column: CustomerColumn; from: CustomerBlockKey; merge: "replace" | "keep" | "max"; initial?: number; json?: true }
>;

// Derived lists.

type Described = typeof ORDER_FIELDS;
export type OrderPath = keyof Described;
export type PlainPath = { [K in OrderPath]: Described[K] extends Special ? never : K }[OrderPath];
export type SpecialPath = Exclude<OrderPath, PlainPath>;
type Lines = typeof LINE_FIELDS;
export type LinePath = keyof Lines;
export type PlainLinePath = { [K in LinePath]: Lines[K] extends Special ? never : K }[LinePath];
export type SpecialLinePath = Exclude<LinePath, PlainLinePath>;

const isPlain = (f: OrderField | LineField | Special): f is OrderField | LineField => !("special" in f);
export const PLAIN_ORDER = (Object.entries(ORDER_FIELDS) as [OrderPath, OrderField | Special][]).flatMap(([path, f]) =>
  isPlain(f) ? [{ path, ...f } as OrderField & { path: PlainPath }] : [],
);
export const PLAIN_LINE = (Object.entries(LINE_FIELDS) as [LinePath, LineField | Special][]).flatMap(([path, f]) =>
  isPlain(f) ? [{ path, ...(f as LineField) } as LineField & { path: PlainLinePath }] : [],
);

/** The Drizzle column (its SQL name, whether NOT NULL) of an order or line field. */
const sqlName = (table: typeof orders | typeof orderLines, key: string) =>
  (getTableColumns(table) as Record<string, { name: string; notNull: boolean }>)[key];
export const orderColumn = (key: OrderColumn) => sqlName(orders, key);
export const lineColumn = (key: LineColumn) => sqlName(orderLines, key);

/** The fields a create body sets (one per column), in the order above. */
export const CREATABLE = PLAIN_ORDER.filter((f) => f.create);

/** The fields a PUT sets whenever it gives them (the shipping_info block), in the order above. */
export const SETTABLE = PLAIN_ORDER.filter((f) => f.update && !f.onCancel);

/** Paths of a create's customer block (request keys), for CUSTOMER_FIELDS. */
type CustomerBlockKey = {
  [K in OrderPath]: K extends `customer.${infer N}` ? (Described[K] extends { create: z.ZodType } ? N : never) : never;
}[OrderPath];

type Validated<V extends "create" | "update", K extends OrderPath> =
  Described[K] extends Record<V, infer Z> ? Z : never;
/** The validators of a body block (`group`: customer, payment, ...) of a create or a PUT. */
export type BlockShape<G extends string, V extends "create" | "update"> = {
  [K in OrderPath as K extends `${G}.${infer N}`
    ? Described[K] extends Record<V, z.ZodType>
      ? N
      : never
    : never]: Validated<V, K>;
};
/** The top-level fields a create or a PUT body sets itself. */
export type TopShape<V extends "create" | "update"> = {
  [K in OrderPath as K extends `${string}.${string}`
    ? never
    : Described[K] extends Record<V, z.ZodType>
      ? K
      : never]: Validated<V, K>;
};

/** The validators of a create's or a PUT's fields in body block `group` (null: the top level), by key. */
function shapeOf(v: "create" | "update", group: string | null) {
  const shape: Record<string, z.ZodType> = {};
  for (const f of PLAIN_ORDER) {
    const dot = f.path.indexOf(".");
    const validator = f[v];
    if (validator && (dot < 0 ? null : f.path.slice(0, dot)) === group) shape[f.path.slice(dot + 1)] = validator;
  }
  return shape;
}

/** The zod object of a body block; `error` is its message (given its keys) when it is not an object. */
export function block<G extends string, V extends "create" | "update">(
  group: G,
  v: V,
  error: string | ((keys: string[]) => string),
) {
  const shape = shapeOf(v, group);
  const message = typeof error === "string" ? error : error(Object.keys(shape));
  return z.object(shape as BlockShape<G, V>, { error: message });
}

export const topFields = <V extends "create" | "update">(v: V) => shapeOf(v, null) as TopShape<V>;

export const valueAt = (body: unknown, path: string): unknown => {
  let v = body;
  for (const k of path.split("."))
    v = v === null || typeof v !== "object" ? undefined : (v as Record<string, unknown>)[k];
  return v;
};

/** Whether a kind is stored as JSON text (written with `->`, so a missing value stays SQL NULL). */
export const isJson = (k: Kind) => k === "address" || k === "object" || k === "json";

/** A modelled answer's keys as a tree, in the order of a layout (MODELLED_ORDER_LAYOUT). */
export type Tree<T> = { key: string; value?: T; children?: Tree<T> }[];

/**
 * `entries` (by modelled path) in the order of `layout`, those it does not name after the rest,
 * nested at their dots: a nested object stands where its first key does.
 */
export function arrange<T>(layout: readonly string[], entries: Map<string, T>): Tree<T> {
  const paths = [...layout.filter((p) => entries.has(p)), ...[...entries.keys()].filter((p) => !layout.includes(p))];
  const root: Tree<T> = [];
  for (const path of paths) {
    const keys = path.split(".");
    let level = root;
    for (const k of keys.slice(0, -1)) {
      let node = level.find((n) => n.key === k);
      if (!node) {
        node = { key: k, children: [] };
        level.push(node);
      }
      level = node.children as Tree<T>;
    }
    level.push({ key: keys[keys.length - 1], value: entries.get(path) });
  }
  return root;
}

/** The modelled slots of the plain fields of `fields`, with their column, kind and slot. */
export function modelledSlots<F extends { modelled?: readonly ModelledSlot[] }>(fields: F[], details: boolean) {
  return fields.flatMap((f) => (f.modelled ?? []).filter((s) => details || s.list).map((slot) => ({ field: f, slot })));
}

/** Whether a kind is text (or JSON text), whose length the modelled answer's size estimate counts. */
export const isText = (k: Kind) => k === "text" || isJson(k);
