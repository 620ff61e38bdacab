/** Hex SHA-256 of a text: how keys and sessions are stored (only their hashes are). */
export async function sha256(text: string): Promise<string> {
  return hex(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))));
}

/** `bytes` random bytes as hex digits. */
export const randomHex = (bytes: number) => hex(crypto.getRandomValues(new Uint8Array(bytes)));

function hex(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) out += b.toString(16).padStart(2, "0");
  return out;
}

/**
 * A strong ETag of a short text (a version and what the answer depends on): FNV-1a twice with
 * different seeds, 64 bits. Opaque, not a security property; hashing the answer itself would cost
 * CPU per byte of pages of megabytes.
 */
export function etagOf(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < text.length; i++) {
    a = Math.imul(a ^ text.charCodeAt(i), 0x01000193);
    b = Math.imul(b ^ text.charCodeAt(i), 0x5bd1e995);
  }
  return `"${(a >>> 0).toString(16).padStart(8, "0")}${(b >>> 0).toString(16).padStart(8, "0")}"`;
}
