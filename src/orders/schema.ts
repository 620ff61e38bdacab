import { z } from "zod";
import { flag, id, int, money, opt, precompile, req, str } from "../platform/fields";
import { block, topFields } from "./fields";

export { type Address, email, isE164, PHONE_ERROR, PHONE_NOTICE, phone } from "./inputs";

// Wire schema of a POST /v1/orders element (docs/orders.md, "Creating orders"), in the field names
// real sales channels send (Quickbutik v1).

export const MAX_LINES = 500;
export const MAX_QTY = 100_000;

/** Line qty: 1 to 100000; the two ends get their own message so the client knows which was hit. */
export const qty = int(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, "must be a whole number of at least 1").pipe(
  z
    .number()
    .min(1, { error: "must be a whole number of at least 1" })
    .max(MAX_QTY, { error: `must be at most ${MAX_QTY}` }),
);

/** A variant_id, or null (or "NULL (no variant)", as clients send) for a product without variants. */
export const NO_VARIANT = "NULL (no variant)";
const variantSelector = z.preprocess(
  (v) => (typeof v === "string" && v.trim() === NO_VARIANT ? null : v),
  id.nullable(),
);

// The identifiers a line or an entry names what it sells by.
const selectors = { sku: opt(str(255)), product_id: opt(id), variant_id: opt(variantSelector) };
const NAMES_ONE = "must name a variant_id, sku or product_id";
const namesOne = (l: { product_id?: number; variant_id?: number | null; sku?: string }) =>
  l.product_id !== undefined || typeof l.variant_id === "number" || l.sku !== undefined;

export const line = z
  .object(
    {
      product_id: selectors.product_id,
      variant_id: selectors.variant_id,
      sku: selectors.sku,
      qty: req(qty),
      price: opt(money),
    },
    { error: "must be a product line object" },
  )
  .refine(namesOne, { error: NAMES_ONE });

export const addEntry = z
  .object({ ...selectors, qty: opt(qty) }, { error: "must be an object" })
  .refine(namesOne, { error: NAMES_ONE });
export type AddEntry = z.output<typeof addEntry>;

export const removeEntry = z
  .object(selectors, { error: "must be an object" })
  // An entry without selectors would match every line: refused rather than emptying the order.
  .refine((l) => l.product_id !== undefined || l.variant_id !== undefined || l.sku !== undefined, {
    error: "must name a sku, product_id or variant_id",
  });
export type RemoveEntry = z.output<typeof removeEntry>;

export const list = <T extends z.ZodType>(entry: T, min: number) =>
  z
    .array(entry, { error: (iss) => (iss.input === undefined ? "is required" : "must be an array") })
    .min(min, { error: "must hold at least one line" })
    .max(MAX_LINES, { error: `must have at most ${MAX_LINES} entries` });

const discountAdd = z.object({ amount: req(money) }, { error: "must be an object with amount" });

export const orderCreate = z.object(
  {
    order_id: z.unknown().refine((v) => v === "create", { error: 'only "create" is supported here' }),
    // Known so that it is not reported as unknown: the route gives its own notice (always unpaid).
    status: z.unknown().optional(),
    // The blocks' fields and metadata are described in fields.ts.
    customer: opt(block("customer", "create", "must be a customer object")),
    payment: opt(block("payment", "create", "must be a payment object")),
    shipping: opt(block("shipping", "create", "must be a shipping object")),
    products: req(list(line, 1)),
    products_add: opt(list(addEntry, 0)),
    products_remove: opt(list(removeEntry, 0)),
    discount_add: opt(discountAdd),
    discount_remove: opt(flag),
    ...topFields("create"),
  },
  { error: "must be an order object" },
);
export type OrderInput = z.output<typeof orderCreate>;

// PUT /v1/orders (docs/orders.md, "Orders"): one element of the body. Field names and wire types are the
// modelled API's: its docs send flags as the strings "true"/"false", its SDK as JSON booleans.

export const ORDER_STATUSES = ["unpaid", "paid", "done", "cancelled"] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** A flag as the modelled API's PUT sends it: true/false, "true"/"false", 1/0 or "1"/"0". */
export const wireFlag = z
  .union([z.boolean(), z.number(), z.string()], { error: "must be true or false" })
  .transform((v, ctx) => {
    const s = typeof v === "string" ? v.trim().toLowerCase() : v;
    if (s === true || s === 1 || s === "1" || s === "true") return true;
    if (s === false || s === 0 || s === "0" || s === "false") return false;
    ctx.addIssue({ code: "custom", message: "must be true or false", input: v });
    return z.NEVER;
  });

const status = z
  .string({ error: `must be one of ${ORDER_STATUSES.join(", ")}` })
  .transform((s) => s.trim().toLowerCase())
  .refine((s): s is OrderStatus => (ORDER_STATUSES as readonly string[]).includes(s), {
    error: `must be one of ${ORDER_STATUSES.join(", ")}`,
  })
  .transform((s) => s as OrderStatus);

export const orderUpdate = z.object(
  {
    order_id: req(id),
    status: opt(status),
    restock: opt(wireFlag),
    ...topFields("update"),
    shipping_info: opt(block("shipping_info", "update", (keys) => `must be an object with ${keys.join(" and ")}`)),
    email_confirmation: opt(wireFlag),
    skip_email_confirmation: opt(wireFlag),
    paymethod_activate: opt(wireFlag),
    skip_webhook: opt(wireFlag),
    language: opt(
      z
        .string({ error: "must be a two-letter language code (ISO 639-1)" })
        // ISO 639-1 as the modelled docs say; a region suffix (sv-SE, en_GB) is common in clients.
        .regex(/^\s*[A-Za-z]{2}([-_][A-Za-z]{2})?\s*$/, { error: "must be a two-letter language code (ISO 639-1)" }),
    ),
    products: opt(list(line, 1)),
    products_add: opt(list(addEntry, 0)),
    products_remove: opt(list(removeEntry, 0)),
    discount_add: opt(discountAdd),
    discount_remove: opt(wireFlag),
  },
  { error: "must be an order object" },
);
export type OrderUpdate = z.output<typeof orderUpdate>;

/** Client flags of the modelled API that ask for e-mail or payment capture, which this service does not do. */
export const CLIENT_FLAGS = [
  "email_confirmation",
  "skip_email_confirmation",
  "paymethod_activate",
  "language",
] as const;

// Compiled while this module is evaluated (startup), the only time Workers allow it.
precompile(orderCreate);
precompile(orderUpdate);
