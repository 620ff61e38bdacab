import { z } from "zod";
import { answer, error, json, pathId, query, schema, utcTime as time } from "../openapi/build";
import { modelledProductDetails } from "../openapi/modelled";
import { orderOut } from "../openapi/responses";
import { USER_AGENT } from "./attempt";
import { MAX_ATTEMPTS, RETRY_DELAYS } from "./deliver";
import { EVENT_TYPES } from "./outbox";
import { endpointCreate, FORMATS, MAX_ENDPOINTS } from "./schema";
import { TEST_EVENT } from "./test";

// The webhook routes of the OpenAPI document, with the deliveries as a callback of POST /v1/webhooks.
// The response schemas are zod, so test/webhooks.openapi.test.ts parses real answers with them.

const idInt = z.number().int().positive();
const eventType = z.enum(EVENT_TYPES);

export const endpointOut = z.object({
  id: idInt,
  url: z.string(),
  events: z.array(z.union([eventType, z.literal("*")])),
  format: z.enum(FORMATS),
  enabled: z.boolean().meta({ description: "false once the receiver answered 410 Gone." }),
  disabled_at: time.nullable(),
  disabled_reason: z.string().nullable(),
  created_at: time,
});

export const endpointCreated = endpointOut.extend({
  secret: z.string().meta({
    description: "whsec_ and the base64 of 32 random bytes: the signing key. Shown in this answer only; store it.",
  }),
  notices: z.array(z.string()),
});

export const endpointList = z.object({ webhooks: z.array(endpointOut) });

export const deliveryList = z.object({
  deliveries: z.array(
    z.object({
      event_id: z.string().meta({ description: "The event's id: the webhook-id header of every attempt." }),
      event_type: z
        .enum([...EVENT_TYPES, TEST_EVENT])
        .meta({ description: `${TEST_EVENT}: a test send (POST /v1/webhooks/{id}/test).` }),
      order_id: idInt.nullable().meta({ description: "The order the event is about (order events)." }),
      product_id: idInt.nullable().meta({ description: "The product the event is about (product events)." }),
      attempt: z.number().int().min(1).max(MAX_ATTEMPTS),
      status: z.number().int().nullable().meta({ description: "The receiver's HTTP status; null with error." }),
      error: z.string().nullable().meta({ description: "Why no status: a timeout, a network error." }),
      duration_ms: z.number().int().min(0),
      outcome: z.enum(["delivered", "retrying", "failed", "disabled"]).meta({
        description: "failed: the last attempt failed, no more will come; disabled: 410 Gone disabled the endpoint.",
      }),
      created_at: time,
    }),
  ),
});

/** The answer of a test send: the attempt as its delivery log row shows it. */
const testSent = z.object({
  event_id: z.string(),
  event_type: z.literal(TEST_EVENT),
  status: z.int().nullable().meta({ description: "The receiver's HTTP status; null when none." }),
  error: z.string().nullable(),
  duration_ms: z.int().min(0),
  outcome: z.enum(["delivered", "failed"]),
});

/** The stored API key whose request caused the event (docs/keys.md, "Audit"); absent otherwise. */
const eventKey = z.object({ id: idInt, name: z.string() }).optional();

/** The body of a `standard` delivery (Standard Webhooks 1.0): the event's object in `data` (docs/webhooks.md, "Payloads"). */
export const eventPayload = z.object({
  type: eventType,
  timestamp: time.meta({ description: "When the change committed." }),
  key: eventKey,
  data: z
    .union([
      orderOut.meta({ description: "An order event: the order as GET /v1/orders/{id} answers it, now." }),
      modelledProductDetails.extend({ product_id: idInt }).meta({
        description:
          "A product event: product_id, then the product as GET /v1/products?product_id=&include_details=true answers it, now.",
      }),
      z.object({ order_id: idInt, truncated: z.literal(true) }),
      z.object({ product_id: idInt, truncated: z.literal(true) }),
      z.object({ order_id: idInt, deleted: z.literal(true) }),
      z.object({ product_id: idInt, deleted: z.literal(true) }),
    ])
    .meta({
      description:
        "The object as it is when the delivery is made; larger than PAYLOAD_MAX_BYTES (1 MiB of UTF-8): its id and truncated, " +
        "read it from the API; gone (a deleted product): its id and deleted.",
    }),
});

/** A delivery of one event to one endpoint, as a delivery made now sends it (docs/webhooks.md, "Reading a delivery"). */
export const eventDeliveryOut = z.object({
  event_id: z.string().meta({ description: "The webhook-id of its deliveries." }),
  event_type: eventType,
  order_id: idInt.nullable(),
  product_id: idInt.nullable(),
  format: z.enum(FORMATS),
  method: z.enum(["POST", "GET"]),
  url: z.string().meta({ description: "The URL requested: the quickbutik format's carries the event in its query." }),
  payload: eventPayload.nullable().meta({
    description: "The standard format's body, its object as it is now; null for the quickbutik format (no body).",
  }),
});

const idParam = pathId();
const eventIdParam = pathId("event_id", { type: "string", maxLength: 64 });

const signatureHeaders = [
  ["webhook-id", "The event's id, the same on every retry: dedupe on it."],
  ["webhook-timestamp", "Unix seconds of this attempt."],
  [
    "webhook-signature",
    'v1,<base64 HMAC-SHA256 over "{webhook-id}.{webhook-timestamp}.{body}" keyed with the base64-decoded ' +
      'secret after whsec_>; for the quickbutik format, over "{webhook-id}.{webhook-timestamp}.{query}": the ' +
      "query string as sent, without its ?, in place of the body.",
  ],
  ["user-agent", USER_AGENT],
].map(([name, description]) => ({ name, in: "header", required: true, description, schema: { type: "string" } }));

const receiverAnswers = {
  "2XX": { description: "Delivered." },
  "410": { description: "Gone: the endpoint is disabled and gets nothing more." },
  default: {
    description:
      `Any other answer, a redirect (never followed) or no answer within 10 s: retried after ` +
      `${RETRY_DELAYS.join(", ")} seconds (${MAX_ATTEMPTS} attempts in about 3 days), then failed.`,
  },
};

const delivery = {
  "{$request.body#/url}": {
    post: {
      summary: "A delivery in the standard format (Standard Webhooks 1.0)",
      description:
        "At least once, in no particular order: dedupe on webhook-id. data is the event's object as the API reads " +
        "it when the delivery is made (a later state than the event's, if it changed since).",
      parameters: signatureHeaders,
      requestBody: {
        required: true,
        content: json(eventPayload, {
          type: "product.update",
          timestamp: "2026-01-02T03:04:05.000Z",
          key: { id: 3, name: "stock tool" },
          data: { product_id: 17, truncated: true },
        }),
      },
      responses: receiverAnswers,
    },
    get: {
      summary: "A delivery in the quickbutik format",
      description:
        "As the modelled API delivers: GET with event_type and order_id (order events) or product_id (product " +
        "events) added to the registered URL's query, no body, and the same signature headers, the signature over " +
        "the query string as sent (without its ?) in place of the body.",
      parameters: [
        { name: "event_type", in: "query", required: true, schema: { type: "string", enum: [...EVENT_TYPES] } },
        { name: "order_id", in: "query", schema: { type: "integer" }, description: "For order.* events." },
        { name: "product_id", in: "query", schema: { type: "integer" }, description: "For product.* events." },
        ...signatureHeaders,
      ],
      responses: receiverAnswers,
    },
  },
};

export const webhooksPaths = {
  "/v1/webhooks": {
    post: {
      operationId: "createWebhook",
      tags: ["webhooks"],
      summary: "Register a webhook endpoint",
      description:
        "Events: order.created (an unpaid order was created), order.new (an order became paid), order.done, " +
        "order.cancelled, product.add, product.update, product.delete. " +
        `At most ${MAX_ENDPOINTS} endpoints. The answer holds the signing secret, shown ` +
        "only here. Deliveries (the callback below): format standard POSTs " +
        '{"type": "order.new", "timestamp": "<ISO 8601>", "key": {...}, "data": {<the order as GET /v1/orders/{id} ' +
        "answers it>}} (the product as GET /v1/products?product_id=&include_details=true answers it, for product " +
        "events); format quickbutik GETs the URL with ?event_type=order.new&order_id=1001 added. Both " +
        "carry webhook-id (the event id), webhook-timestamp and webhook-signature (Standard Webhooks 1.0, " +
        "HMAC-SHA256 keyed with the secret). At least once, no ordering: dedupe on webhook-id.",
      requestBody: {
        required: true,
        content: json(schema(endpointCreate, "input"), {
          url: "https://example.com/hooks/store",
          events: ["order.new"],
          format: "standard",
        }),
      },
      responses: {
        "201": answer("Registered.", endpointCreated),
        "400": error("Invalid body; errors name the field (url, events, format)."),
        "409": error(`Already ${MAX_ENDPOINTS} endpoints.`),
        "413": error("Body larger than 1 MiB."),
        "415": error("Content-Type is not application/json."),
      },
      callbacks: { delivery },
    },
    get: {
      operationId: "listWebhooks",
      tags: ["webhooks"],
      summary: "List webhook endpoints (without secrets)",
      responses: { "200": answer("Every endpoint.", endpointList) },
    },
  },
  "/v1/webhooks/{id}": {
    delete: {
      operationId: "deleteWebhook",
      tags: ["webhooks"],
      summary: "Delete a webhook endpoint",
      description: "Nothing more is sent to it, pending retries included; its delivery log goes with it.",
      parameters: [idParam],
      responses: {
        "204": { description: "Deleted." },
        "400": error("The id is not an id."),
        "404": error("No such endpoint."),
      },
    },
  },
  "/v1/webhooks/{id}/deliveries": {
    get: {
      operationId: "listWebhookDeliveries",
      tags: ["webhooks"],
      summary: "Recent delivery attempts to an endpoint, newest first",
      parameters: [idParam, query("limit", { type: "integer", minimum: 1, maximum: 100, default: 50 })],
      responses: {
        "200": answer("Attempts, newest first.", deliveryList),
        "400": error("Invalid id or limit."),
        "404": error("No such endpoint."),
      },
    },
  },
  "/v1/webhooks/{id}/test": {
    post: {
      operationId: "testWebhook",
      tags: ["webhooks"],
      summary: "Send a signed webhook.test to an endpoint now and answer how it went",
      description:
        "One attempt during the request (at most 10 s), in the endpoint's format, signed with its secret, " +
        "with the event type webhook.test and no resource; logged among its deliveries, never retried.",
      "x-idempotency": false,
      parameters: [idParam],
      responses: {
        "200": answer("The attempt, as its delivery log row shows it.", testSent),
        "400": error("Invalid id."),
        "404": error("No such endpoint."),
      },
    },
  },
  "/v1/webhooks/{id}/events/{event_id}": {
    get: {
      operationId: "getWebhookEventDelivery",
      tags: ["webhooks"],
      summary: "What a delivery of one event to one endpoint carries: method, URL and body",
      description:
        "The body a delivery made now sends (the one Resend sends): data is read at each delivery, so it shows " +
        "the object as it is now, which a later change may have moved past the one an earlier attempt carried. " +
        "Only for an event the endpoint was subscribed to when it happened; an order's event also needs the " +
        "scope orders:read, a product's products:read.",
      parameters: [idParam, eventIdParam],
      responses: {
        "200": answer("The delivery.", eventDeliveryOut),
        "400": error("Invalid id."),
        "403": error(
          "The key lacks scope webhooks, or orders:read for an order's event (products:read for a product's).",
        ),
        "404": error(
          "No such endpoint or event, or an event the endpoint did not take (not of its types, or before it was " +
            "registered; a test delivery is no event): the same words for each.",
        ),
      },
    },
  },
  "/v1/webhooks/{id}/events/{event_id}/resend": {
    post: {
      operationId: "resendWebhookEvent",
      tags: ["webhooks"],
      summary: "Send one event to one endpoint again (a new delivery, retried as usual)",
      description:
        "Queues a delivery of the event (its webhook-id unchanged, so a receiver that deduplicates ignores it " +
        "if it had it) to this endpoint, attempt 1 and the usual retries; it shows in the deliveries when made. " +
        "data is the object as it is then. Only for an event the endpoint was subscribed to when it happened.",
      "x-idempotency": false,
      parameters: [idParam, eventIdParam],
      responses: {
        "202": answer("Queued.", z.object({ queued: z.literal(true), event_id: z.string(), endpoint_id: z.int() })),
        "400": error("Invalid id."),
        "404": error(
          "No such endpoint or event, or an event the endpoint did not take (not of its types, or before it was " +
            "registered; a test delivery cannot be resent): the same words for each, and nothing is queued.",
        ),
      },
    },
  },
};
