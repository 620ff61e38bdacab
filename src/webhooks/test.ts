import { eq } from "drizzle-orm";
import { webhookDeliveries, webhookEndpoints } from "../db/schema";
import type { DB } from "../platform/d1";
import { attempt, delivered } from "./attempt";
import { signingKey } from "./sign";
import { urlProblem } from "./url";

// A test send (docs/webhooks.md, "Webhooks"): one signed `webhook.test` attempt to an endpoint,
// made during the request so the merchant sees the receiver's answer at once, and logged among
// its deliveries. No event row: nothing happened in the store, and it is never retried.

export const TEST_EVENT = "webhook.test";

/** Sends the test; answers the attempt as the delivery log shows it, or null when there is no such endpoint. */
export async function testEndpoint(db: DB, id: number, allowLocal: boolean, now: number) {
  const w = webhookEndpoints;
  const e = await db
    .select({ id: w.id, url: w.url, format: w.format, secret: w.secret })
    .from(w)
    .where(eq(w.id, id))
    .get();
  if (!e) return null;
  const eventId = `test_${crypto.randomUUID()}`;
  // The URL rules hold at every delivery, the test included.
  const problem = urlProblem(e.url, allowLocal);
  const r = problem
    ? { status: null, error: `url: ${problem}`, durationMs: 0 }
    : await attempt(
        { ...e, endpointId: e.id, eventId, type: TEST_EVENT, orderId: null, productId: null, eventAt: now },
        await signingKey(e.secret),
      );
  const outcome = delivered(r) ? "delivered" : "failed";
  const { status, error, durationMs } = r;
  await db
    .insert(webhookDeliveries)
    .values({ endpointId: e.id, eventId, eventType: TEST_EVENT, attempt: 1, ...r, outcome, createdAt: now })
    .run();
  return { event_id: eventId, event_type: TEST_EVENT, status, error, duration_ms: durationMs, outcome };
}
