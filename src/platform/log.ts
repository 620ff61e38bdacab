import { createMiddleware } from "hono/factory";
import { matchedRoutes } from "hono/route";
import type { AppEnv, LogCounts } from "../env";

/**
 * One JSON line per request (Workers Logs indexes its fields): request id, method, route pattern,
 * status, duration and the counts a handler recorded with c.set("logCounts", ...). Deliberately no
 * header value, query, body or credential: only what is listed here is ever written.
 */
export const requestLog = createMiddleware<AppEnv>(async (c, next) => {
  const start = Date.now();
  try {
    await next();
  } finally {
    // The pattern of the handler that matched (middleware are method ALL), not the raw path, so
    // ids in paths do not end up in logs and lines group by route.
    const handler = matchedRoutes(c).findLast((r) => r.method !== "ALL");
    const line: Record<string, unknown> = {
      level: "info",
      msg: "request",
      requestId: c.var.requestId,
      method: c.req.method,
      route: handler?.path ?? null,
      status: c.res.status,
      durationMs: Date.now() - start,
    };
    const counts: LogCounts | undefined = c.var.logCounts;
    if (counts) line.counts = counts;
    console.log(JSON.stringify(line));
  }
});
