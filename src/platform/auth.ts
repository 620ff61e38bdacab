import { basicAuth } from "hono/basic-auth";
import { createMiddleware } from "hono/factory";
import { timingSafeEqual } from "hono/utils/buffer";
import type { AppEnv } from "../env";
import { ApiError, envelope } from "./errors";

/** The configured keys: API_KEY may hold several, comma-separated, for rotation (contract 2). */
export function apiKeys(secret: string | undefined): string[] {
  return (secret ?? "")
    .split(",")
    .map((k) => k.trim())
    .filter(Boolean);
}

/**
 * Basic auth with the API key as both user name and password (contract 2). Built per request
 * because the keys live in `c.env`; fails closed when none is configured.
 */
export const auth = createMiddleware<AppEnv>(async (c, next) => {
  const keys = apiKeys(c.env.API_KEY);
  if (keys.length === 0) throw new ApiError(500, "no API key is configured");
  const mw = basicAuth({
    realm: "store",
    invalidUserMessage: envelope(401, "missing or invalid credentials"),
    verifyUser: async (user, password) => {
      // Compare against every key, without stopping early, so timing says nothing about which.
      let ok = false;
      for (const key of keys) {
        const [u, p] = await Promise.all([timingSafeEqual(key, user), timingSafeEqual(key, password)]);
        ok = (u && p) || ok;
      }
      return ok;
    },
  });
  return mw(c, next);
});
