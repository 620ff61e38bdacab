import { app } from "./app";
import type { Bindings } from "./env";
import { scheduled } from "./scheduled";
import { deliverBatch } from "./webhooks/deliver";

export default {
  fetch: app.fetch,
  scheduled: async (controller, env, ctx) => {
    ctx.waitUntil(scheduled(env, controller.scheduledTime));
  },
  queue: (batch, env) => deliverBatch(batch, env),
} satisfies ExportedHandler<Bindings>;
