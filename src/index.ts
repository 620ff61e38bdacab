import { app } from "./app";
import type { Bindings } from "./env";
import { scheduled } from "./scheduled";

export default {
  fetch: app.fetch,
  scheduled: async (controller, env, ctx) => {
    ctx.waitUntil(scheduled(env, controller.scheduledTime));
  },
} satisfies ExportedHandler<Bindings>;
