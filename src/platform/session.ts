import { createMiddleware } from "hono/factory";
import { getDb } from "../db/client";
import type { AppEnv } from "../env";
import { ApiError } from "./errors";

export const BOOKMARK_HEADER = "x-d1-bookmark";

// What D1 issues: four dash-separated hex groups (8-8-8-32). Anything else was not sent by us, and
// a session opened on it would fail inside D1 or silently promise nothing.
const BOOKMARK = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;

/**
 * One D1 session per /v1 request (docs/operations.md, "Read replicas"). Reads start where the client's
 * `x-d1-bookmark` says (data at least that fresh), or at any replica when it sends none; writes go
 * to the primary. The answer carries the session's latest bookmark, which the client sends back
 * to read its own writes.
 */
export const d1Session = createMiddleware<AppEnv>(async (c, next) => {
  const sent = c.req.header(BOOKMARK_HEADER)?.trim();
  if (sent !== undefined && !BOOKMARK.test(sent)) {
    throw new ApiError(400, `invalid ${BOOKMARK_HEADER} header: send back one this service answered with`);
  }
  const read = c.req.method === "GET" || c.req.method === "HEAD";
  const session = c.env.DB.withSession(read ? (sent ?? "first-unconstrained") : "first-primary");
  c.set("db", getDb(c.env.DB, session));
  await next();
  // A request answered before any query (a validation error) hands back what it was given.
  const bookmark = session.getBookmark?.() ?? sent;
  if (bookmark) c.res.headers.set(BOOKMARK_HEADER, bookmark);
});
