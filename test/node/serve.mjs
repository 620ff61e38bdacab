// Starts the README's serve command (`node src/scripts/dev.mjs`) as a real process on a free
// loopback port with a fresh --persist-to directory, and stops its whole process group.
import { execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

export const root = path.resolve(import.meta.dirname, "../..");

/** @returns {Promise<number>} a port that was free a moment ago on 127.0.0.1 */
export function freePort() {
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

/** @type {Promise<string> | undefined} */
let template;
/**
 * A local D1 state with every migration applied, shared by the servers that start from it: applying
 * the migrations takes wrangler 8 s (idle; far more on a busy CI machine), a copy of the state
 * milliseconds, and the serve command then finds nothing due. Named by what decides its content
 * (the migrations, wrangler.toml, the locked wrangler and miniflare), so parallel test files and
 * later runs take the same one, and an edit to any of them makes a new one; built aside and
 * renamed into place, so it is there whole or not at all.
 * @returns {Promise<string>}
 */
function migratedTemplate() {
  template ??= (async () => {
    const hash = createHash("sha256");
    const migrations = path.join(root, "drizzle");
    for (const f of readdirSync(migrations)
      .filter((f) => f.endsWith(".sql"))
      .sort())
      hash.update(`${f}\0`).update(readFileSync(path.join(migrations, f)));
    hash.update(readFileSync(path.join(root, "wrangler.toml")));
    hash.update(readFileSync(path.join(root, "package-lock.json")));
    const dir = path.join(tmpdir(), `edge-store-d1-${hash.digest("hex").slice(0, 16)}`);
    if (existsSync(dir)) return dir;
    const building = mkdtempSync(`${dir}-building-`);
    try {
      await new Promise((resolve, reject) =>
        execFile(
          path.join(root, "node_modules", ".bin", "wrangler"),
          ["d1", "migrations", "apply", "store", "--local", "--persist-to", building],
          { cwd: root, env: { ...process.env, CI: "true", NO_COLOR: "1", WRANGLER_SEND_METRICS: "false" } },
          (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stdout}${stderr}`)) : resolve(undefined)),
        ),
      );
      renameSync(building, dir);
    } catch (e) {
      rmSync(building, { recursive: true, force: true });
      // Another test file built it meanwhile: theirs is as good.
      if (!existsSync(dir)) throw e;
    }
    return dir;
  })();
  return template;
}

/**
 * `migrated: false` starts from an empty directory, as a newcomer's first `npm run dev` does, so
 * that the serve command applies every migration itself; otherwise the directory starts as a copy
 * of the migrated template.
 * @typedef {{ base: string, key: string, auth: string, persist: string, output: () => string, stop: () => Promise<void> }} Server
 * @returns {Promise<Server>}
 */
export async function startServer({ timeoutMs = 120_000, args = /** @type {string[]} */ ([]), migrated = true } = {}) {
  const from = migrated ? await migratedTemplate() : undefined;
  const port = await freePort();
  const persist = mkdtempSync(path.join(tmpdir(), "edge-store-e2e-"));
  if (from) cpSync(from, persist, { recursive: true });
  // detached: its own process group (node, wrangler, workerd), so stop() can end all of it.
  const child = spawn(
    process.execPath,
    ["src/scripts/dev.mjs", "--port", String(port), "--persist-to", persist, ...args],
    {
      cwd: root,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        WRANGLER_SEND_METRICS: "false",
        NO_COLOR: "1",
        FORCE_COLOR: "0",
        // A test's server is not the developer's: npm run seed keeps finding theirs.
        EDGE_STORE_DEV_BASE_FILE: path.join(persist, "dev-base"),
      },
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
    // A template short of a migration would still serve, on another schema than the tests expect.
    if (from && !out.includes("Local D1: migrations up to date"))
      throw new Error(`the serve command applied migrations to the template's copy:\n${out}`);
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
