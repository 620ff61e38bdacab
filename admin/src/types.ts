// The shapes the admin reads from the /v1 API (docs/orders.md, products.md, keys.md,
// webhooks.md), taken from the types openapi-typescript generates from the served OpenAPI
// document (examples/typed-client/openapi.d.ts, `npm run client:types`; CI checks it is current),
// so an answer that changes shape is a type error here too.
import type { components, operations } from "../../examples/typed-client/openapi";

type Schemas = components["schemas"];
/** The JSON body of operation `O`'s 200 answer. */
type Answer<O extends keyof operations> = operations[O]["responses"] extends {
  200: { content: { "application/json": infer T } };
}
  ? T
  : never;

export type Session = Answer<"getSession">;
export type SessionKey = Session["key"];
export type ListedSession = Answer<"listSessions">["sessions"][number];

/**
 * An order as GET /v1/orders/{id} answers it. The document gives a line's options as any JSON
 * (the stored snapshot); they are the variant's option names and values (docs/orders.md).
 */
export type Order = Omit<Schemas["Order"], "products"> & {
  products: (Omit<Schemas["Order"]["products"][number], "options"> & { options: { name: string; value: string }[] })[];
};
export type Address = NonNullable<Order["customer"]["billing_details"]>;

/** A row of GET /v1/orders with include_details (the modelled shape: money and ids as text). */
export type OrderRow = Schemas["ModelledOrderDetails"];

/** A row of GET /v1/products with include_details. */
export type ProductRow = Schemas["ModelledProductDetails"];

/** A product as GET /v1/products/{id} answers it. */
export type Product = Schemas["Product"];
export type Variant = Schemas["Variant"];

export type Key = Answer<"listKeys">["keys"][number];
export type Webhook = Answer<"listWebhooks">["webhooks"][number];
export type Delivery = Answer<"listWebhookDeliveries">["deliveries"][number];

export type Customer = Answer<"listCustomers">["customers"][number];
export type CustomerDetail = Answer<"getCustomer">;
