import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { z } from "zod";
import {
  arrange,
  type Kind,
  LINE_FIELDS,
  lineColumn,
  ORDER_FIELDS,
  orderColumn,
  PLAIN_LINE,
  PLAIN_ORDER,
  type SpecialLinePath,
  type SpecialPath,
  type Tree,
} from "../orders/fields";
import {
  type Field,
  OPTION_KEYS,
  OWN_PRODUCT,
  OWN_VARIANT,
  type OwnProductSpecial,
  type OwnVariantSpecial,
  productColumn,
  productField,
  variantColumn,
  variantField,
} from "../products/fields";
import { moneyOut as money } from "../products/kinds";
import { utcTime } from "./build";

// Response bodies, as zod schemas: the OpenAPI document (src/openapi/document.ts) is generated from them,
// and test/openapi.test.ts parses real answers of the app with them, so the documented shapes
// cannot drift from what src/products/present.ts (and the orders presenter) return.
// Money is a JSON number of major units (199.5); identifiers are integers (docs/api.md, "Conventions").

const idInt = z.number().int().positive();

const json = z.unknown();

/** A described field's schema in the own dialect (src/products/kinds.ts), null where its column may be. */
function ownSchema(f: Field, c: SQLiteColumn) {
  const s = c.notNull ? f.kind.own.schema : f.kind.own.schema.nullable();
  const about = f.about ?? f.kind.own.about;
  return about ? s.meta({ description: about }) : s;
}

/**
 * The shape of an answer's key order (src/products/key-order.ts): described fields from their
 * description, every other key from `special` (one schema, or several keys in its place).
 */
export function orderedShape<S extends string>(
  order: readonly string[],
  described: (key: string) => z.ZodType | undefined,
  special: Record<S, z.ZodType | Record<string, z.ZodType>>,
) {
  const shape: Record<string, z.ZodType> = {};
  for (const k of order) {
    const s = described(k) ?? (special as Record<string, z.ZodType | Record<string, z.ZodType>>)[k];
    if (s === undefined) throw new Error(`no schema for the answer's key ${k}`);
    if (s instanceof z.ZodType) shape[k] = s;
    else Object.assign(shape, s);
  }
  return shape;
}

const optionFields = Object.fromEntries(OPTION_KEYS.map((k) => [k, z.string().nullable()]));

export const variantOut = z
  .object(
    orderedShape<OwnVariantSpecial>(
      OWN_VARIANT,
      (k) => {
        const f = variantField(k);
        return f && ownSchema(f, variantColumn(f));
      },
      { variant_id: idInt, options: optionFields },
    ),
  )
  .meta({ description: "A variant as GET /v1/products/{product_id} returns it." });

export const productOut = z
  .object(
    orderedShape<OwnProductSpecial>(
      OWN_PRODUCT,
      (k) => {
        const f = productField(k);
        return f && !f.computed ? ownSchema(f, productColumn(f)) : undefined;
      },
      {
        product_id: idInt,
        stock: z.number().int().meta({ description: "For a product with variants, the sum of their qty." }),
        categories: z
          .array(z.array(z.string()))
          .meta({ description: 'Category paths, head category first: [["Clothes", "Shirts"]].' }),
        slug: z.string().nullable().meta({ description: "Unique; null only for products from before slugs." }),
        url: z.string().nullable().meta({ description: "STORE_URL + / + slug; null without STORE_URL." }),
        variants: z.array(variantOut),
        created_at: utcTime,
        updated_at: utcTime,
      },
    ),
  )
  .meta({ description: "A product with its variants." });

const messages = z.array(z.string());

export const productWriteResult = z
  .object({
    success: z.number().int().min(0).meta({ description: "How many products were created or updated." }),
    errors: messages.meta({ description: "Why items failed; each names its JSON path, `[i].` first for arrays." }),
    notices: messages.meta({ description: "Ignored unknown fields and similar." }),
    products: z.array(productOut).meta({ description: "Each product that took effect, as GET returns it." }),
  })
  .meta({ description: "Answer of POST and PUT /v1/products (docs/products.md, Updating products)." });

const tax = z.array(z.object({ rate: z.number().int(), amount: money }));

export const orderCreated = z.object({
  success: z.literal(true),
  order_id: idInt,
  status: z.literal("unpaid"),
  currency: z.string(),
  subtotal: money,
  shipping: money,
  discount: money,
  total: money,
  tax,
  errors: messages,
  notices: messages,
});

export const orderFailed = z.object({ success: z.literal(false), errors: messages, notices: messages });

export const orderResults = z
  .object({
    results: z
      .record(z.string().regex(/^create_\d+$/), z.union([orderCreated, orderFailed]))
      .meta({ description: "One entry per element of the request, keyed create_1, create_2, ..." }),
    code: z.number().int().optional().meta({ description: "Only when no order was created (status 400)." }),
    error: z.string().optional().meta({ description: "Only when no order was created (status 400)." }),
  })
  .meta({ description: "Answer of POST /v1/orders (docs/orders.md, Orders)." });

const addressOut = z.object({
  company_name: z.string().optional(),
  firstname: z.string().optional(),
  lastname: z.string().optional(),
  address: z.string().optional(),
  address2: z.string().optional(),
  city: z.string().optional(),
  zipcode: z.string().optional(),
  country: z.string().optional(),
});

const maybeTime = utcTime.nullable();

/** Our dialect's schema of each kind of order field (src/orders/fields.ts). */
const KIND: Record<Kind, z.ZodType> = {
  id: idInt,
  int: z.number().int(),
  text: z.string(),
  flag: z.boolean(),
  money,
  time: utcTime,
  address: addressOut,
  object: z.record(z.string(), json),
  json,
};

/** The schema of an order's or a line's answer from its description, the special entries given. */
function described(
  fields: { path: string; column: { notNull: boolean }; kind: Kind; storefront?: false; doc?: string }[],
  order: readonly string[],
  special: Record<string, z.ZodType>,
) {
  const entries = new Map<string, z.ZodType>(Object.entries(special));
  for (const f of fields) {
    let schema = KIND[f.kind];
    if (!f.column.notNull) schema = schema.nullable();
    if (f.storefront === false) schema = schema.optional();
    entries.set(f.path, f.doc ? schema.meta({ description: f.doc }) : schema);
  }
  return treeObject(arrange(order, entries));
}

/** An object of the arranged keys, nested where the tree nests. */
export const treeObject = (tree: Tree<z.ZodType>): z.ZodObject =>
  z.object(Object.fromEntries(tree.map((n) => [n.key, n.children ? treeObject(n.children) : (n.value as z.ZodType)])));

/** The plain fields of an order line and of an order, each with its column (for both dialects). */
export const LINE_PLAIN = PLAIN_LINE.map((f) => ({ ...f, column: lineColumn(f.column) }));
export const ORDER_PLAIN = PLAIN_ORDER.map((f) => ({ ...f, column: orderColumn(f.column) }));

const orderLineOut = described(LINE_PLAIN, Object.keys(LINE_FIELDS), { total: money } satisfies Record<
  SpecialLinePath,
  z.ZodType
>);

export const orderOut = described(ORDER_PLAIN, Object.keys(ORDER_FIELDS), {
  hold_expires_at: maybeTime.meta({
    description:
      "Unpaid orders while a hold applies (UNPAID_ORDER_HOLD_MINUTES; always STOREFRONT_HOLD_MINUTES for a publishable key's): when the hold cancels the order.",
  }),
  products: z.array(orderLineOut),
  tax,
} satisfies Record<SpecialPath, z.ZodType>)
  .extend({
    key: z
      .object({ id: idInt, name: z.string() })
      .optional()
      .meta({ description: "The stored API key that created the order (docs/keys.md, Audit); absent otherwise." }),
    history: z
      .array(
        z.object({
          at: utcTime,
          change: z
            .enum(["unpaid", "paid", "done", "cancelled", "shipping", "lines"])
            .meta({ description: "The status entered; shipping: tracking or carrier set; lines: lines edited." }),
          restock: z.boolean().nullable().meta({ description: "A cancel: whether the stock was returned." }),
          reason: z.string().nullable().meta({ description: "A cancel: the reason given." }),
          key: z.object({ id: idInt.nullable(), name: z.string().nullable() }).meta({
            description: "The key that made it (id null: the environment's API_KEY; both null: the store itself).",
          }),
          via: z.enum(["key", "session", "system"]).meta({
            description: "The key itself, the admin's session of it, or the store (the unpaid hold's cancel).",
          }),
        }),
      )
      .optional()
      .meta({
        description: "Every change since creation, oldest first (docs/orders.md, History); secret keys only.",
      }),
  })
  .meta({ description: "An order with its customer, lines and totals (docs/api.md, Conventions)." });

export const errorEnvelope = z
  .object({
    code: z.number().int().meta({ description: "The HTTP status." }),
    error: z.string().meta({ description: "One-line message." }),
    errors: messages.optional().meta({ description: "Item-level details, each naming its JSON path." }),
  })
  .meta({ description: "Every error that is not a per-item outcome (docs/api.md, Conventions)." });

export const serviceInfo = z.object({ name: z.string(), version: z.string() });
export const health = z.object({
  status: z.literal("ok"),
  warnings: z.array(z.string()).optional().meta({
    description: "Configuration that works but leaves something out, such as STORE_URL unset; absent when none.",
  }),
});
