// Starts the README's serve command (`node src/scripts/dev.mjs`) as a real process on a free
// loopback port with a fresh --persist-to directory, and stops its whole process group.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

export const root = path.resolve(import.meta.dirname, "../..");

/** @returns {Promise<number>} a port that was free a moment ago on 127.0.0.1 */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));

/**
 * @typedef {{ base: string, key: string, auth: string, persist: string, output: () => string, stop: () => Promise<void> }} Server
 * @returns {Promise<Server>}
 */
export async function startServer({ timeoutMs = 120_000, args = /** @type {string[]} */ ([]) } = {}) {
  const port = await freePort();
  const persist = mkdtempSync(path.join(tmpdir(), "edge-store-e2e-"));
  // detached: its own process group (node, wrangler, workerd), so stop() can end all of it.
  const child = spawn(
    process.execPath,
    ["src/scripts/dev.mjs", "--port", String(port), "--persist-to", persist, ...args],
    {
      cwd: root,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", NO_COLOR: "1", FORCE_COLOR: "0" },
    },
  );
  let out = "";
  child.stdout.on("data", (d) => {
    out += d;
  });
  child.stderr.on("data", (d) => {
    out += d;
  });
  /** @type {number | null} */
  let exitCode = null;
  let exited = false;
  const exit = new Promise((resolve) =>
    child.on("exit", (code) => {
      exited = true;
      exitCode = code;
      resolve(undefined);
    }),
  );

  const pgid = /** @type {number} */ (child.pid);
  const groupAlive = () => {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const stop = async () => {
    for (const sig of /** @type {const} */ (["SIGTERM", "SIGKILL"])) {
      if (!groupAlive()) break;
      try {
        process.kill(-pgid, sig);
      } catch {
        // already gone
      }
      for (let i = 0; i < 50 && groupAlive(); i++) await sleep(100);
    }
    await Promise.race([exit, sleep(2000)]);
    rmSync(persist, { recursive: true, force: true });
    if (groupAlive()) throw new Error(`process group ${pgid} survived SIGKILL`);
  };

  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      if (exited) throw new Error(`the serve command exited with ${exitCode} before answering:\n${out}`);
      if (Date.now() > deadline) throw new Error(`no answer on ${base}/health within ${timeoutMs} ms:\n${out}`);
      const ok = await fetch(`${base}/health`, { signal: AbortSignal.timeout(2000) }).then(
        (r) => r.ok,
        () => false,
      );
      // The key is printed once the server answers: wait for both.
      if (ok && /Development key: \S+\n/.test(out)) break;
      await sleep(250);
    }
    const key = /Development key: (\S+)/.exec(out)?.[1];
    if (!key) throw new Error(`the serve command printed no development key:\n${out}`);
    const auth = `Basic ${Buffer.from(`${key}:${key}`).toString("base64")}`;
    return { base, key, auth, persist, output: () => out, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/**
 * One authenticated JSON request to a started server; the body parsed when it is JSON.
 * @param {Server} server
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 */
export async function callServer(server, method, path, body) {
  /** @type {Record<string, string>} */
  const headers = { authorization: server.auth };
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${server.base}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  /** @type {any} */
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text, headers: res.headers };
}
