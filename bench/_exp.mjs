import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import autocannon from "autocannon";
import { request, seed } from "./lib/cases.mjs";
import { startWorker } from "./lib/server.mjs";

const dir = mkdtempSync(path.join(os.tmpdir(), "perfx-"));
const s = await startWorker({ persistDir: dir, apiKey: "k" });
const authorization = `Basic ${Buffer.from("k:k").toString("base64")}`;
const t = { base: s.base, authorization };
try {
  await seed(t);
  const r = await autocannon({
    url: s.base,
    connections: 8,
    duration: 3,
    requests: [
      {
        method: "PUT",
        path: "/v1/products",
        headers: { authorization, "content-type": "application/json" },
        body: JSON.stringify({ sku: "STK-1", stock: 5 }),
      },
    ],
  });
  console.log(r.requests.total, r.non2xx, r.errors, r.timeouts, JSON.stringify(r.statusCodeStats));
  for (let i = 0; i < 3; i++) {
    const x = await request(t, "PUT", "/v1/products", { sku: "STK-1", stock: 5 + i });
    console.log(x.status, x.text.slice(0, 300));
  }
} finally {
  await s.stop();
  rmSync(dir, { recursive: true, force: true });
}
