// npm run bench:files [-- --list]: the source files, and the functions in each, that one request
// runs inside the Worker (bench/README.md, "Files a request passes"): a PUT /v1/products syncing
// a product's 3 variants, one qty changed. V8 marks each function the isolate has run; workerd's
// inspector gives those marks (best-effort coverage, a 0 or 1 per function), so the request is the
// first a fresh isolate serves: a first Worker seeds the product and stops, a second starts on the
// same D1, answers its readiness poll outside the store, and serves the measured request. The
// functions marked between the two looks are that request's; the bundle's source map names the
// file each was written in. Module setup runs before the first look: a function it also calls is
// not counted.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { SourceMap } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { connect } from "./lib/inspector.mjs";
import { apiKey, authorization } from "./lib/options.mjs";
import { request } from "./lib/requests.mjs";
import { startWorker } from "./lib/server.mjs";

/** @typedef {{ url: string, functions: { functionName: string, ranges: { startOffset: number, count: number }[] }[] }} Script */

const root = path.resolve(import.meta.dirname, "..");
const list = process.argv.includes("--list");
const sku = `FILES-${process.pid}`;
const entries = (/** @type {number} */ qty) =>
  ["S", "M", "L"].map((s) => ({ sku: `${sku}-${s}`, variant_option1_name: "Size", variant_option1_value: s, qty }));

const persistDir = mkdtempSync(path.join(os.tmpdir(), "edge-store-files-"));
try {
  const seeder = await startWorker({ persistDir, apiKey });
  const made = await request({ base: seeder.base, authorization }, "POST", "/v1/products", {
    title: "Files",
    sku,
    price: 100,
    variants: { add: entries(5) },
  });
  await seeder.stop();
  if (made.status !== 200) throw new Error(`seeding answered ${made.status}: ${made.text}`);
  const id = made.json.products[0].product_id;

  const worker = await startWorker({ persistDir, apiKey, readyPath: "/__bench/counts" });
  try {
    const cdp = await connect(worker.inspectorPort);
    /** @type {{ result: Script[] }} */
    const before = await cdp.send("Profiler.getBestEffortCoverage");
    const body = { product_id: id, variants: { sync: entries(6) } };
    const answer = await request({ base: worker.base, authorization }, "PUT", "/v1/products", body);
    if (answer.status !== 200) throw new Error(`the sync answered ${answer.status}: ${answer.text}`);
    /** @type {{ result: Script[] }} */
    const after = await cdp.send("Profiler.getBestEffortCoverage");
    cdp.close();
    report(ranBetween(before.result, after.result));
  } finally {
    await worker.stop();
  }
} finally {
  rmSync(persistDir, { recursive: true, force: true });
}

/**
 * The functions of the project's bundle marked in `after` and not in `before`, as source file ->
 * function names.
 * @param {Script[]} before @param {Script[]} after
 */
function ranBetween(before, after) {
  const ran = new Set(
    before.flatMap((s) =>
      s.functions.filter((f) => f.ranges[0]?.count).map((f) => `${s.url}@${f.ranges[0].startOffset}`),
    ),
  );
  /** @type {Map<string, Set<string>>} */
  const files = new Map();
  for (const script of after) {
    if (!script.url.startsWith("file:")) continue;
    const bundle = fileURLToPath(script.url);
    const source = readFileSync(bundle, "utf8");
    const map = new SourceMap(JSON.parse(readFileSync(`${bundle}.map`, "utf8")));
    const lineStarts = [0];
    for (let i = 0; i < source.length; i++) if (source.charCodeAt(i) === 10) lineStarts.push(i + 1);
    for (const f of script.functions) {
      const r = f.ranges[0];
      if (!r?.count || ran.has(`${script.url}@${r.startOffset}`)) continue;
      const line = lastAtOrBefore(lineStarts, r.startOffset);
      const entry = map.findEntry(line, r.startOffset - lineStarts[line]);
      if (!("originalSource" in entry)) continue;
      const original = entry.originalSource;
      const file = path.relative(
        root,
        original.startsWith("file:") ? fileURLToPath(original) : path.resolve(path.dirname(bundle), original),
      );
      if (!file.startsWith(`src${path.sep}`)) continue;
      files.set(file, (files.get(file) ?? new Set()).add(f.functionName || "(anonymous)"));
    }
  }
  return files;
}

/** The index of the last of the sorted `xs` at or before `x`. @param {number[]} xs @param {number} x */
function lastAtOrBefore(xs, x) {
  let lo = 0;
  let hi = xs.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (xs[mid] <= x) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** @param {Map<string, Set<string>>} files */
function report(files) {
  const sorted = [...files].sort(([a], [b]) => a.localeCompare(b));
  const functions = sorted.reduce((n, [, fs]) => n + fs.size, 0);
  console.log(
    `PUT /v1/products, a sync of 3 entries (one qty changed): ${sorted.length} source files, ${functions} functions`,
  );
  for (const [file, fs] of sorted) console.log(`  ${file} (${fs.size})${list ? `: ${[...fs].sort().join(", ")}` : ""}`);
}
