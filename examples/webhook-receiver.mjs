// A webhook receiver in Node without dependencies (docs/webhooks.md): verifies the signature,
// answers at once and dedupes. WEBHOOK_SECRET is the whsec_... of the POST /v1/webhooks answer;
// it listens on 127.0.0.1, port PORT (3000 unless set), and prints one JSON line per event.
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";

const key = Buffer.from(String(process.env.WEBHOOK_SECRET).replace(/^whsec_/, ""), "base64");
const seen = new Set(); // in production: a table keyed by webhook-id

// signed: the body of a POST (standard), the raw query of a GET (quickbutik).
function verified(headers, signed) {
  const id = headers["webhook-id"];
  const ts = Number(headers["webhook-timestamp"]);
  if (!id || !Number.isInteger(ts) || Math.abs(Date.now() / 1000 - ts) > 300) return false;
  const want = createHmac("sha256", key).update(`${id}.${ts}.${signed}`).digest();
  return String(headers["webhook-signature"] ?? "")
    .split(" ")
    .some((s) => {
      const [version, sig] = s.split(",");
      const got = Buffer.from(sig ?? "", "base64");
      return version === "v1" && got.length === want.length && timingSafeEqual(got, want);
    });
}

createServer((req, res) => {
  let body = "";
  req.on("data", (chunk) => (body += chunk));
  req.on("end", () => {
    const at = req.url.indexOf("?");
    const query = at < 0 ? "" : req.url.slice(at + 1); // as it arrived, not re-encoded
    if (!verified(req.headers, req.method === "GET" ? query : body)) return res.writeHead(401).end();
    res.writeHead(204).end(); // answer at once (a first attempt waits 3 s); work afterwards
    const id = req.headers["webhook-id"];
    if (seen.has(id)) return; // at least once: a retry of an event already handled
    seen.add(id);
    const q = new URL(req.url, "http://receiver").searchParams;
    const { type, data } =
      req.method === "GET" ? { type: q.get("event_type"), data: Object.fromEntries(q) } : JSON.parse(body);
    // Then read the order or product back through the API, or act on data (its state now).
    console.log(JSON.stringify({ id, type, order_id: data.order_id ?? null, product_id: data.product_id ?? null }));
  });
}).listen(Number(process.env.PORT ?? 3000), "127.0.0.1");
