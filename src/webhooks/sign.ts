// Standard Webhooks 1.0 signatures (docs/webhooks.md, "Formats"): HMAC-SHA256 over
// "{webhook-id}.{webhook-timestamp}.{body}" keyed with the bytes the secret encodes, sent as
// `webhook-signature: v1,<base64>` (a quickbutik GET signs its query instead). WebCrypto only.

const PREFIX = "whsec_";
const UTF8 = new TextEncoder();

// Secrets and MACs are 32 bytes: small enough to spread into one call.
const toBase64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
const fromBase64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

/** A new endpoint secret: whsec_ and the base64 of 32 random bytes. */
export function newSecret(): string {
  return PREFIX + toBase64(crypto.getRandomValues(new Uint8Array(32)));
}

/** The HMAC key a secret encodes; import it once per endpoint and reuse it for every signature. */
export function signingKey(secret: string): Promise<CryptoKey> {
  const raw = fromBase64(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret);
  return crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
}

/** The `webhook-signature` header value of one attempt over `content`, its body (or query), text or bytes. */
export async function signature(
  key: CryptoKey,
  id: string,
  timestamp: number,
  content: string | Uint8Array,
): Promise<string> {
  const bytes = typeof content === "string" ? UTF8.encode(content) : content;
  const head = UTF8.encode(`${id}.${timestamp}.`);
  const signed = new Uint8Array(head.length + bytes.length);
  signed.set(head);
  signed.set(bytes, head.length);
  const mac = await crypto.subtle.sign("HMAC", key, signed);
  return `v1,${toBase64(new Uint8Array(mac))}`;
}
