import { z } from "zod";
import { boolText, parseQuery, strictQuery, text, whole } from "../platform/query";

// GET /v1/customers' parameters and the one description of a customer as answered (docs/customers.md),
// which the presenter builds, the OpenAPI document shows and the tests parse real answers with.

export const CUSTOMER_LIMIT_DEFAULT = 25;
export const CUSTOMER_LIMIT_MAX = 100;
/** The latest orders GET /v1/customers/{id} lists; orders_count says how many there are in all. */
export const CUSTOMER_ORDERS_MAX = 50;
const MAX_OFFSET = 100_000_000;

const listQuery = z.object({
  search: text(255).optional(),
  limit: whole(1, CUSTOMER_LIMIT_MAX).optional(),
  offset: whole(0, MAX_OFFSET).optional(),
  count: boolText.optional(),
});
export type CustomerQuery = z.output<typeof listQuery>;

export const parseCustomerQuery = (url: string) =>
  parseQuery(listQuery, strictQuery(url, Object.keys(listQuery.shape)));

const address = z
  .record(z.string(), z.unknown())
  .nullable()
  .meta({ description: "As the customer's latest order that gave it wrote it (firstname, lastname, address, ...)." });

export const customerOut = z.object({
  customer_id: z.number().int().positive(),
  email: z.string().meta({ description: "As the latest order spelt it; customers are one per e-mail, any case." }),
  name: z
    .string()
    .meta({ description: 'First and last name of the billing address (else the shipping one); "" when none.' }),
  phone: z.string().nullable(),
  type: z.string().nullable(),
  login_create: z.boolean().meta({ description: "An order asked for a customer login." }),
  newsletter_subscribe: z.boolean(),
  billing_details: address,
  shipping_details: address,
  orders_count: z.number().int().meta({ description: "Every order linked to the customer, whatever its status." }),
  total_spent: z.number().meta({
    description:
      "The totals of the customer's orders that are not cancelled, in the store's currency (`currency`); orders in another currency are counted in orders_count only.",
  }),
  currency: z.string().meta({ description: "The store's currency (DEFAULT_CURRENCY), of total_spent." }),
  last_order_id: z.number().int().nullable(),
  last_order_at: z.string().nullable().meta({ description: "When the customer's latest order was created." }),
  created_at: z.string(),
  updated_at: z.string(),
});
export type CustomerOut = z.output<typeof customerOut>;

export const customerOrder = z.object({
  order_id: z.number().int(),
  status: z.enum(["unpaid", "paid", "done", "cancelled"]),
  date_paid: z.string().nullable(),
  total: z.number(),
  currency: z.string(),
  created_at: z.string(),
});

export const customerList = z.object({ customers: z.array(customerOut) });
export const customerDetail = customerOut.extend({
  orders: z.array(customerOrder).meta({ description: `The latest ${CUSTOMER_ORDERS_MAX} orders, newest first.` }),
});
