// The event types of the outbox (docs/webhooks.md, "Events"), in a module of their own that
// imports nothing, so the admin's bundle can list them without the Worker's types.

export const EVENT_TYPES = [
  "order.created",
  "order.new",
  "order.done",
  "order.cancelled",
  "product.add",
  "product.update",
  "product.delete",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
