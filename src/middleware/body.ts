import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { ApiError } from "../lib/errors";

export const MAX_BODY_BYTES = 1024 * 1024;
export const MAX_DEPTH = 32;

/**
 * Depth of the deepest array/object in JSON text, scanning only outside strings. Runs before
 * JSON.parse so a hostile body of a million '[' is refused in linear time, not by a stack overflow.
 */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 92)
        i++; // backslash: skip the escaped character
      else if (ch === 34) inString = false;
    } else if (ch === 34) inString = true;
    else if (ch === 91 || ch === 123) {
      if (++depth > max) max = depth;
    } else if (ch === 93 || ch === 125) depth--;
  }
  return max;
}

/**
 * Reads a JSON body under the rules of contract 1: media type (415), size (413), nesting (400),
 * syntax (400). The parsed value is `c.var.body`; routes then check its shape themselves because
 * array bodies are validated item by item.
 */
export const jsonBody = createMiddleware<AppEnv>(async (c, next) => {
  const type = c.req.header("content-type");
  if (type !== undefined) {
    const media = type.split(";")[0].trim().toLowerCase();
    if (media !== "application/json") {
      throw new ApiError(415, "Content-Type must be application/json");
    }
  }
  const declared = Number(c.req.header("content-length"));
  if (declared > MAX_BODY_BYTES) throw new ApiError(413, "request body is larger than 1 MiB");
  const buf = await c.req.arrayBuffer();
  if (buf.byteLength > MAX_BODY_BYTES) throw new ApiError(413, "request body is larger than 1 MiB");
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(buf);
  } catch {
    throw new ApiError(400, "request body is not valid UTF-8");
  }
  if (jsonDepth(text) > MAX_DEPTH) throw new ApiError(400, `JSON is nested deeper than ${MAX_DEPTH} levels`);
  try {
    c.set("body", JSON.parse(text));
  } catch {
    throw new ApiError(400, "request body is not valid JSON");
  }
  await next();
});
