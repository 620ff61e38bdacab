import { app } from "./app";
import type { Bindings } from "./env";
import { purgeIdempotencyKeys } from "./scheduled";

export default {
  fetch: app.fetch,
  scheduled: async (_controller, env, ctx) => {
    ctx.waitUntil(purgeIdempotencyKeys(env));
  },
} satisfies ExportedHandler<Bindings>;
