import { z } from "zod";
import { int, opt, str } from "../platform/fields";
import { EVENT_TYPES } from "./outbox";
import { MAX_URL_LENGTH } from "./url";

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

// The .meta descriptions are the OpenAPI document's (src/webhooks/openapi.ts): what the refinements check.
export const endpointCreate = z.object({
  url: str(MAX_URL_LENGTH).meta({
    description:
      "https only, no user info, no fragment; not localhost nor an IP literal in a loopback, private, " +
      "link-local, unique-local or other reserved range. With ALLOW_LOCAL_WEBHOOKS=true (npm run dev) http " +
      "and those hosts are allowed.",
  }),
  events: z
    .array(eventName, { error: 'must be an array of event types, or ["*"]' })
    .min(1, { error: 'must name at least one event type, or ["*"] for all' })
    .max(EVENT_TYPES.length, { error: `must name at most ${EVENT_TYPES.length} event types` })
    .refine((a) => new Set(a).size === a.length, { error: "must not repeat an event type" })
    .refine((a) => !a.includes("*") || a.length === 1, { error: '"*" means every event type and stands alone' })
    .meta({
      uniqueItems: true,
      items: { type: "string", enum: [...EVENT_TYPES, "*"] },
      description: '["*"] (alone) for every event type.',
    }),
  format: opt(z.enum(FORMATS, { error: `must be one of ${FORMATS.join(", ")}` }).meta({ default: "standard" })),
});
export type EndpointInput = z.output<typeof endpointCreate>;

export const deliveriesQuery = z.object({ limit: opt(int(1, 100)) });
