import type { Context } from "hono";
import type { AppEnv } from "../env";

/** The one bucket of every request whose address cannot be trusted. */
export const UNATTRIBUTED = "unattributed";

/**
 * The client's address for per-client limits (docs/operations.md, "Rate limits"). `CF-Connecting-IP` is the
 * address only where Cloudflare's edge set it: the request has `request.cf` (workerd gives it only
 * to requests that came through Cloudflare, or through the local simulator) and the Worker is not
 * running under local development (LOCAL_DEV="true", which `npm run dev` sets: the simulator passes
 * a client's own `CF-Connecting-IP` through). Anywhere else a client could name a new address per
 * request and escape its limit, and a Worker cannot see the socket's peer, so every such request
 * shares one fixed bucket.
 */
export function clientAddress(c: Context<AppEnv>): string {
  if (c.req.raw.cf === undefined || c.env.LOCAL_DEV === "true") return UNATTRIBUTED;
  return c.req.header("cf-connecting-ip")?.trim() || UNATTRIBUTED;
}
