// Where a webhook may point (docs/webhooks.md, "Webhooks"): https only, no user info, and no host
// that is `localhost` or an IP literal of a special-purpose range, so an endpoint cannot make the
// Worker a client of internal services. Hostnames are not resolved (a Worker cannot resolve DNS;
// its outbound fetch does not reach private networks either way). ALLOW_LOCAL_WEBHOOKS=true lifts
// the host and scheme rules for local development.

export const MAX_URL_LENGTH = 2048;

/**
 * The URL as it will be stored and called: trimmed, parsed and re-serialised by the WHATWG parser
 * (`" https://Example.com "` and `https:example.com` become `https://example.com/`), so the rules
 * below judge exactly the URL that is fetched later. Refused: the reason.
 */
export function normaliseUrl(raw: string, allowLocal: boolean): { url: string } | { problem: string } {
  const text = raw.trim();
  if (text.length > MAX_URL_LENGTH) return { problem: `must be at most ${MAX_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problem: "must be an absolute URL" };
  }
  const problem = refused(url, allowLocal);
  if (problem) return { problem };
  if (url.href.length > MAX_URL_LENGTH) return { problem: `must be at most ${MAX_URL_LENGTH} characters` };
  return { url: url.href };
}

/** Why `raw` may not be a webhook URL, or undefined when it may. */
export function urlProblem(raw: string, allowLocal: boolean): string | undefined {
  const r = normaliseUrl(raw, allowLocal);
  return "problem" in r ? r.problem : undefined;
}

function refused(url: URL, allowLocal: boolean): string | undefined {
  if (url.protocol !== "https:" && !(allowLocal && url.protocol === "http:")) {
    return allowLocal ? "must use https or http" : "must use https";
  }
  if (url.username || url.password) return "must not contain user info (user:password@)";
  if (url.hash) return "must not contain a fragment (#...)";
  // Port 0 reaches nothing on the public internet; some stacks read it as "any port".
  if (url.port === "0") return "must not use port 0";
  if (allowLocal) return undefined;
  // The WHATWG parser has already normalised the host: IPv4 in any notation (0x7f.1, 2130706433)
  // becomes dotted decimal, IPv6 becomes its compressed form in brackets, names are lower case.
  const host = url.hostname.replace(/\.$/, "");
  if (host === "localhost" || host.endsWith(".localhost")) return "must not point to localhost";
  const v4 = parseIPv4(host);
  if (v4 !== undefined && refusedIPv4(v4)) return "must not point to a loopback, private or reserved address";
  if (host.startsWith("[")) {
    const v6 = parseIPv6(host.slice(1, -1));
    if (!v6 || refusedIPv6(v6)) return "must not point to a loopback, private or reserved address";
  }
  return undefined;
}

/** A dotted-decimal IPv4 address as a 32-bit unsigned number. */
function parseIPv4(host: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (!m) return undefined;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return undefined;
  return ((parts[0] << 24) | (parts[1] << 16) | (parts[2] << 8) | parts[3]) >>> 0;
}

/** Every range that is not the public internet, as [network, mask]. */
const REFUSED_V4 = [
  "0.0.0.0/8", // "this network"
  "10.0.0.0/8", // private
  "100.64.0.0/10", // shared address space (carrier-grade NAT)
  "127.0.0.0/8", // loopback
  "169.254.0.0/16", // link-local (cloud metadata services live here)
  "172.16.0.0/12", // private
  "192.0.0.0/24", // IETF protocol assignments
  "192.0.2.0/24", // documentation
  "192.88.99.0/24", // 6to4 relay anycast
  "192.168.0.0/16", // private
  "198.18.0.0/15", // benchmarking
  "198.51.100.0/24", // documentation
  "203.0.113.0/24", // documentation
  "224.0.0.0/4", // multicast
  "240.0.0.0/4", // reserved, and 255.255.255.255 broadcast
].map((cidr) => {
  const [net, len] = cidr.split("/");
  return [parseIPv4(net) as number, (~0 << (32 - Number(len))) >>> 0];
});

const refusedIPv4 = (addr: number) => REFUSED_V4.some(([net, mask]) => (addr & mask) >>> 0 === net);

/** An IPv6 address (no brackets) as eight 16-bit groups; a trailing dotted IPv4 is allowed. */
function parseIPv6(text: string): number[] | undefined {
  let s = text.toLowerCase();
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (tail) {
    const a = parseIPv4(tail[1]);
    if (a === undefined) return undefined;
    s = `${s.slice(0, -tail[1].length)}${(a >>> 16).toString(16)}:${(a & 0xffff).toString(16)}`;
  }
  const halves = s.split("::");
  if (halves.length > 2) return undefined;
  const groups = (h: string) => (h === "" ? [] : h.split(":"));
  const head = groups(halves[0]);
  const rest = halves.length === 2 ? groups(halves[1]) : [];
  const fill = 8 - head.length - rest.length;
  if (halves.length === 2 ? fill < 1 : fill !== 0) return undefined;
  const all = [...head, ...Array(fill).fill("0"), ...rest];
  if (all.some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return undefined;
  return all.map((g) => Number.parseInt(g, 16));
}

/** The IPv4 address in groups 6 and 7. */
const embedded = (g: number[]) => ((g[6] << 16) | g[7]) >>> 0;

function refusedIPv6(g: number[]): boolean {
  const zeros = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeros(6)) return true; // ::, ::1 and the deprecated IPv4-compatible ::a.b.c.d
  if (zeros(5) && g[5] === 0xffff) return true; // IPv4-mapped ::ffff:a.b.c.d: write the IPv4 itself
  if (zeros(4) && g[4] === 0xffff && g[5] === 0) return true; // IPv4-translated ::ffff:0:a.b.c.d (SIIT)
  if (g[0] === 0x64 && g[1] === 0xff9b) return true; // NAT64 64:ff9b::/96 and 64:ff9b:1::/48
  if (g[0] === 0x0100 && g[1] === 0 && g[2] === 0 && g[3] === 0) return true; // discard-only 100::/64
  if ((g[0] & 0xffc0) === 0xfe80) return true; // link-local fe80::/10
  if ((g[0] & 0xffc0) === 0xfec0) return true; // site-local fec0::/10 (deprecated)
  if ((g[0] & 0xfe00) === 0xfc00) return true; // unique-local fc00::/7
  if ((g[0] & 0xff00) === 0xff00) return true; // multicast ff00::/8
  if (g[0] === 0x2001 && g[1] === 0x0db8) return true; // documentation 2001:db8::/32
  // 6to4 2002::/16 carries an IPv4 address in groups 1 and 2: refused when that one would be.
  if (g[0] === 0x2002) return refusedIPv4(((g[1] << 16) | g[2]) >>> 0);
  // Teredo 2001::/32 carries the client's IPv4 inverted in the last two groups.
  if (g[0] === 0x2001 && g[1] === 0) return refusedIPv4(~embedded(g) >>> 0);
  // ISATAP interface identifiers (::0:5efe:a.b.c.d, ::200:5efe:a.b.c.d) under any prefix carry an
  // IPv4 address in the last two groups.
  if ((g[4] === 0 || g[4] === 0x200) && g[5] === 0x5efe) return refusedIPv4(embedded(g));
  return false;
}
