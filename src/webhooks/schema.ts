import { z } from "zod";
import { int, opt, str } from "../platform/fields";
import { EVENT_TYPES } from "./outbox";

// Wire schemas of the endpoint API (docs/webhooks.md, "Webhooks"). The URL's own rules depend on a var
// (ALLOW_LOCAL_WEBHOOKS), so the route checks them after this shape check (src/webhooks/url.ts).

export const MAX_ENDPOINTS = 20;
export const FORMATS = ["standard", "quickbutik"] as const;
export type Format = (typeof FORMATS)[number];

const eventName = z
  .string({ error: "must be an event type" })
  .refine((s) => s === "*" || EVENT_TYPES.includes(s as never), {
    error: (iss) => `unknown event type ${JSON.stringify(iss.input)}; one of ${EVENT_TYPES.join(", ")} or "*"`,
  });

export const endpointCreate = z.object({
  url: str(2048),
  events: z
    .array(eventName, { error: 'must be an array of event types, or ["*"]' })
    .min(1, { error: 'must name at least one event type, or ["*"] for all' })
    .max(EVENT_TYPES.length, { error: `must name at most ${EVENT_TYPES.length} event types` })
    .refine((a) => new Set(a).size === a.length, { error: "must not repeat an event type" })
    .refine((a) => !a.includes("*") || a.length === 1, { error: '"*" means every event type and stands alone' }),
  format: opt(z.enum(FORMATS, { error: `must be one of ${FORMATS.join(", ")}` })),
});
export type EndpointInput = z.output<typeof endpointCreate>;

export const deliveriesQuery = z.object({ limit: opt(int(1, 100)) });
