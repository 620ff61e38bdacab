import { z } from "zod";
import { answer, error, json, schema } from "../openapi/build";
import { orderCreated, orderFailed } from "../openapi/responses";
import { ORDER_STATUSES, orderUpdate } from "./schema";

// PUT /v1/orders in the OpenAPI document (src/openapi/document.ts adds this operation to the
// /v1/orders path item). The answer's schema is zod, so tests parse real answers with it.

const orderUpdated = orderCreated.extend({ status: z.enum(ORDER_STATUSES) });

export const orderUpdateResults = z
  .strictObject({
    results: z.record(z.string().regex(/^update_\d+$/), z.union([orderUpdated, orderFailed.strict()])),
    code: z.number().int().optional().meta({ description: "Only when no element succeeded." }),
    error: z.string().optional().meta({ description: "Only when no element succeeded." }),
  })
  .meta({ description: "Answer of PUT /v1/orders: one entry per element, keyed update_1, update_2, ..." });

export function orderUpdateOperation() {
  const element = schema(orderUpdate, "input");
  const results = schema(orderUpdateResults, "output");
  return {
    operationId: "updateOrders",
    tags: ["orders"],
    summary: "Change orders: status, shipping info, lines",
    description:
      "One order object, or an array of 1 to 100 (the modelled docs' double-wrapped [[{...}]] is accepted too). " +
      "Each element changes the order named by order_id atomically on its own: status (unpaid, paid, done, " +
      "cancelled; cancelled is final and returns every line's stock once unless restock is false), shipping_info, " +
      "and on unpaid orders its lines (products, products_add, products_remove) and discount. " +
      "email_confirmation, skip_email_confirmation, paymethod_activate and language are accepted with a notice: " +
      "this service sends no e-mail and captures no payment. skip_webhook suppresses the change's events.",
    requestBody: {
      required: true,
      content: json({ oneOf: [element, { type: "array", items: element, minItems: 1, maxItems: 100 }] }, [
        { order_id: 1001, status: "done", shipping_info: { trackingnumber: "230491712300", company: "DHL" } },
      ]),
    },
    responses: {
      "200": answer("At least one element succeeded.", results),
      "400": answer("No element succeeded; the first failure was invalid input.", results),
      "404": answer("No element succeeded; the first failure named an unknown order.", results),
      "409": answer("No element succeeded; the first failure was refused by the order's status.", results),
      "413": error("Body larger than 1 MiB, or more than 100 elements."),
      "415": error("Content-Type is not application/json."),
      "422": error("The Idempotency-Key was used with a different body."),
    },
  };
}
