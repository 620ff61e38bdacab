import { answer, error, json, pathId, query } from "../openapi/build";
import {
  CUSTOMER_LIMIT_DEFAULT,
  CUSTOMER_LIMIT_MAX,
  CUSTOMER_ORDERS_MAX,
  customerDetail,
  customerList,
} from "./schema";

// The customer routes of the OpenAPI document, from the zod description the answers are built to.

const FORBIDDEN = { "403": error("The key lacks orders:read, or is a publishable key.") };

export const customersPaths = {
  "/v1/customers": {
    get: {
      operationId: "listCustomers",
      tags: ["customers"],
      summary: "List the store's customers",
      description:
        "Newest customer first, each with its order count, spend and latest order. A customer is made by the first " +
        "order a secret key creates with its e-mail; storefront orders link none. The Link header names the next page.",
      parameters: [
        query(
          "search",
          { type: "string", maxLength: 255 },
          "Any part of the e-mail, name, company or phone, any case.",
        ),
        query(
          "limit",
          { type: "integer", minimum: 1, maximum: CUSTOMER_LIMIT_MAX },
          `Default ${CUSTOMER_LIMIT_DEFAULT}.`,
        ),
        query("offset", { type: "integer", minimum: 0 }, "Customers to skip."),
        query("count", { type: "boolean" }, "true: X-Total-Count is the number of customers the search matches."),
      ],
      responses: {
        "200": {
          description: "A page of customers.",
          headers: {
            "X-Total-Count": { schema: { type: "integer" }, description: "With count=true." },
          },
          content: json(customerList),
        },
        "400": error("A parameter is unknown, given twice or invalid; errors name it."),
        ...FORBIDDEN,
      },
    },
  },
  "/v1/customers/{customer_id}": {
    get: {
      operationId: "getCustomer",
      tags: ["customers"],
      summary: "Read a customer and their latest orders",
      description: `The customer with its totals and its latest ${CUSTOMER_ORDERS_MAX} orders, newest first.`,
      parameters: [pathId("customer_id")],
      responses: {
        "200": answer("The customer.", customerDetail),
        "400": error("The id is not an id."),
        "404": error("No such customer."),
        ...FORBIDDEN,
      },
    },
  },
};
