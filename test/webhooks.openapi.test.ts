import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { deliveryList, endpointCreated, endpointList, eventPayload } from "../src/webhooks/openapi";
import { EVENT_TYPES } from "../src/webhooks/outbox";
import { FORMATS } from "../src/webhooks/schema";
import { call, get, post } from "./helpers";

/** Parses with the documented schema and fails on fields the schema does not document. */
function conforms(schema: z.ZodType, value: unknown) {
  const r = schema.safeParse(value);
  expect(r.success ? [] : r.error.issues).toEqual([]);
  expect(r.data).toEqual(value);
}

describe("OpenAPI: webhooks", () => {
  it("documents the answers the routes really give", async () => {
    const created = await post("/v1/webhooks", { url: "https://doc.example.com/", events: ["order.new"] });
    conforms(endpointCreated, created.json);
    await env.DB.prepare(
      `INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, attempt, status, error, duration_ms, outcome, created_at)
       VALUES (?1, 'ev', 'order.new', 1, NULL, 'timeout: no answer within 10 s', 10000, 'retrying', 1),
              (?1, 'test_1', 'webhook.test', 1, 204, NULL, 12, 'delivered', 2)`,
    )
      .bind(created.json.id)
      .run();
    conforms(endpointList, (await get("/v1/webhooks")).json);
    conforms(deliveryList, (await get(`/v1/webhooks/${created.json.id}/deliveries`)).json);
    expect((await call("DELETE", `/v1/webhooks/${created.json.id}`)).status).toBe(204);
  });

  it("documents the request body, the event types and both delivery formats", async () => {
    const doc = (await get("/openapi.json")).json;
    const op = doc.paths["/v1/webhooks"].post;
    const body = op.requestBody.content["application/json"].schema;
    expect(body.required).toEqual(["url", "events"]);
    expect(body.properties.events.items.enum).toEqual([...EVENT_TYPES, "*"]);
    expect(body.properties.format.enum).toEqual([...FORMATS]);
    const cb = op.callbacks.delivery["{$request.body#/url}"];
    const payload = cb.post.requestBody.content["application/json"];
    conforms(eventPayload, payload.example);
    // The order, the product, and each of them truncated or deleted.
    expect(payload.schema.properties.data.anyOf).toHaveLength(6);
    const headers = cb.post.parameters.map((p: any) => p.name);
    expect(headers).toEqual(["webhook-id", "webhook-timestamp", "webhook-signature", "user-agent"]);
    expect(cb.get.parameters.map((p: any) => p.name)).toEqual(["event_type", "order_id", "product_id", ...headers]);
    expect(JSON.stringify(doc.paths["/v1/webhooks"].get)).not.toContain('"secret"');
  });
});
