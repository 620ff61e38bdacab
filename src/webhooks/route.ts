import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../env";
import { authorizeCarried } from "../keys/auth";
import { jsonBody } from "../platform/body";
import { ApiError } from "../platform/errors";
import { id, parseItem } from "../platform/fields";
import { zv } from "../platform/zv";
import { createEndpoint, deleteEndpoint, eventDelivery, listDeliveries, listEndpoints, resendEvent } from "./endpoints";
import { deliveriesQuery, endpointCreate, MAX_ENDPOINTS } from "./schema";
import { testEndpoint } from "./test";
import { normaliseUrl } from "./url";

const idParam = zv("param", z.object({ id }));
const eventParam = zv("param", z.object({ id, event_id: z.string().min(1).max(64) }));

export const webhooksRoute = new Hono<AppEnv>()
  .post("/", jsonBody, async (c) => {
    const body = c.var.body;
    if (body === null || typeof body !== "object" || Array.isArray(body)) {
      throw new ApiError(400, "body must be a webhook object");
    }
    const p = parseItem(endpointCreate, body);
    if (!p.ok) throw new ApiError(400, "invalid body", p.errors);
    const url = normaliseUrl(p.data.url, c.env.ALLOW_LOCAL_WEBHOOKS === "true");
    if ("problem" in url) throw new ApiError(400, "invalid body", [`url: ${url.problem}`]);
    const created = await createEndpoint(c.var.db, { ...p.data, url: url.url }, Date.now());
    if (!created) throw new ApiError(409, `at most ${MAX_ENDPOINTS} webhook endpoints; delete one first`);
    return c.json({ ...created, notices: p.notices }, 201);
  })
  .get("/", async (c) => c.json({ webhooks: await listEndpoints(c.var.db) }))
  .delete("/:id", idParam, async (c) => {
    const { id } = c.req.valid("param");
    if (!(await deleteEndpoint(c.var.db, id))) throw new ApiError(404, `webhook ${id} not found`);
    return c.body(null, 204);
  })
  .post("/:id/test", idParam, async (c) => {
    const { id } = c.req.valid("param");
    const sent = await testEndpoint(c.var.db, id, c.env.ALLOW_LOCAL_WEBHOOKS === "true", Date.now());
    if (!sent) throw new ApiError(404, `webhook ${id} not found`);
    return c.json(sent);
  })
  .get("/:id/deliveries", idParam, zv("query", deliveriesQuery), async (c) => {
    const { id } = c.req.valid("param");
    const deliveries = await listDeliveries(c.var.db, id, c.req.valid("query").limit ?? 50);
    if (!deliveries) throw new ApiError(404, `webhook ${id} not found`);
    return c.json({ deliveries });
  })
  .get("/:id/events/:event_id", eventParam, async (c) => {
    const { id, event_id } = c.req.valid("param");
    const found = await eventDelivery(c.var.db, c.env, id, event_id);
    if (found === undefined) throw new ApiError(404, `no event ${event_id} for webhook ${id}`);
    // After the 404: an event the endpoint never took is unknown, whatever the key holds.
    authorizeCarried(c, found.about);
    return c.body(found.text(), 200, { "content-type": "application/json" });
  })
  .post("/:id/events/:event_id/resend", eventParam, async (c) => {
    const { id, event_id } = c.req.valid("param");
    if (!(await resendEvent(c.var.db, c.env.RETRIES, id, event_id))) {
      throw new ApiError(404, `no event ${event_id} for webhook ${id}`);
    }
    return c.json({ queued: true, event_id, endpoint_id: id }, 202);
  });
