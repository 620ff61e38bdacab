import { ApiError } from "./errors";

// Cursors are opaque to clients (base64url of the paging key) so the key can change without
// breaking them.
const b64url = (text: string) => btoa(text).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");

function unb64url(cursor: string): string {
  try {
    return atob(cursor.replace(/-/g, "+").replace(/_/g, "/"));
  } catch {
    return "";
  }
}

const notOurs = () => new ApiError(400, "invalid query", ["cursor: is not a cursor this service gave out"]);

/** A cursor that is the last id seen. */
export const encodeCursor = (id: number) => b64url(`id:${id}`);

export function decodeCursor(cursor: string): number {
  const m = /^id:(\d{1,15})$/.exec(unb64url(cursor));
  if (!m) throw notOurs();
  return Number(m[1]);
}

/** A cursor for a list sorted by an integer key with the id as tie-break: the last (key, id) seen. */
export const encodeKeyCursor = (key: number, id: number) => b64url(`k:${key}:${id}`);

export function decodeKeyCursor(cursor: string): { key: number; id: number } {
  const m = /^k:(-?\d{1,16}):(\d{1,15})$/.exec(unb64url(cursor));
  if (!m || !Number.isSafeInteger(Number(m[1]))) throw notOurs();
  return { key: Number(m[1]), id: Number(m[2]) };
}
