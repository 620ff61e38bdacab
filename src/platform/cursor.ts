import { ApiError } from "./errors";

// Cursors are opaque to clients (base64url of the last id seen) so the paging key can change
// without breaking them.
export const encodeCursor = (id: number) => btoa(`id:${id}`).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");

export function decodeCursor(cursor: string): number {
  let text = "";
  try {
    text = atob(cursor.replace(/-/g, "+").replace(/_/g, "/"));
  } catch {
    // fall through to the error below
  }
  const m = /^id:(\d{1,15})$/.exec(text);
  if (!m) throw new ApiError(400, "invalid query", ["cursor: is not a cursor this service gave out"]);
  return Number(m[1]);
}
