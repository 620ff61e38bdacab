// Starts the bench worker (bench/wrangler.toml: the store app plus the baselines) in local
// workerd through `wrangler dev`, on a fresh D1 state dir with the store's migrations applied.
import { execFileSync, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "../..");
const wrangler = path.join(root, "node_modules/wrangler/bin/wrangler.js");
const config = path.join(root, "bench/wrangler.toml");

/** No banner (it checks npm for updates), no telemetry, no fetch of Request.cf: loopback only. */
export const quietEnv = {
  ...process.env,
  WRANGLER_HIDE_BANNER: "true",
  WRANGLER_SEND_METRICS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  CI: "1",
  NO_COLOR: "1",
};

/** @param {string[]} args @param {string} [cfg] the worker's wrangler.toml (the bench worker's by default) */
export function wranglerSync(args, cfg = config) {
  return execFileSync(process.execPath, [wrangler, ...args, "-c", cfg], {
    cwd: root,
    env: quietEnv,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** A free loopback port: bind port 0, read it, close. */
export function freePort() {
  return /** @type {Promise<number>} */ (
    new Promise((resolve, reject) => {
      const s = createServer();
      s.once("error", reject);
      s.listen(0, "127.0.0.1", () => {
        const addr = s.address();
        const port = typeof addr === "object" && addr ? addr.port : 0;
        s.close(() => resolve(port));
      });
    })
  );
}

/**
 * @param {{ persistDir: string, apiKey: string, config?: string, readyPath?: string }} opts `config`: another worker's
 * wrangler.toml (the bare Worker's, bench/bare/wrangler.toml), the bench worker's by default;
 * `readyPath`: what is polled until the Worker answers (/health, which runs the store's middleware)
 * @returns {Promise<{ base: string, pid: number, inspectorPort: number, workerdPids: () => number[], logTail: () => string, alive: () => boolean, stop: () => Promise<void> }>}
 */
export async function startWorker({ persistDir, apiKey, config: cfg = config, readyPath = "/health" }) {
  wranglerSync(["d1", "migrations", "apply", "store", "--local", "--persist-to", persistDir], cfg);
  const port = await freePort();
  const inspectorPort = await freePort();
  const child = spawn(
    process.execPath,
    [
      wrangler,
      "dev",
      "-c",
      cfg,
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--persist-to",
      persistDir,
      "--var",
      `API_KEY:${apiKey}`,
      "--show-interactive-dev-session=false",
      "--live-reload=false",
      "--inspector-port",
      String(inspectorPort),
      "--log-level",
      "warn",
    ],
    { cwd: root, env: quietEnv, stdio: ["ignore", "pipe", "pipe"], detached: true },
  );
  // However the bench ends (an error, Ctrl-C, a timeout), the wrangler group it started goes too.
  const onExit = () => stopGroup(child.pid);
  process.once("exit", onExit);
  let log = "";
  // Kept (its last 100 KB) to explain a failure; wrangler's own output is not the bench's.
  const keep = (/** @type {Buffer} */ d) => {
    log = (log + d).slice(-100_000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited (${child.exitCode}):\n${log}`);
    try {
      const r = await fetch(`${base}${readyPath}`);
      if (r.ok) break;
    } catch {}
    if (Date.now() > deadline) {
      stopGroup(child.pid);
      throw new Error(`wrangler dev did not answer on ${base} within 60 s:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  const pid = /** @type {number} */ (child.pid);
  return {
    base,
    pid,
    inspectorPort,
    logTail: () => log.slice(-3000),
    alive: () => child.exitCode === null,
    workerdPids: () => descendants(pid).filter((p) => processName(p) === "workerd"),
    stop: async () => {
      process.off("exit", onExit);
      stopGroup(pid);
      const exited = new Promise((r) => (child.exitCode !== null ? r(undefined) : child.once("exit", r)));
      // SIGTERM normally ends wrangler and its workerd within a second; if not, SIGKILL the group.
      const timer = setTimeout(() => stopGroup(pid, "SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * Ends the process group this bench started (wrangler and its workerd), by id.
 * @param {number | undefined} pid @param {NodeJS.Signals} [signal]
 */
function stopGroup(pid, signal = "SIGTERM") {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {}
}

/** @param {number} pid */
function processName(pid) {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "";
  }
}

/** @param {number} pid @returns {number[]} */
function descendants(pid) {
  /** @type {number[]} */
  const out = [];
  /** @type {Map<number, number[]>} */
  const kids = new Map();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      kids.set(ppid, [...(kids.get(ppid) ?? []), Number(name)]);
    } catch {}
  }
  const todo = [pid];
  while (todo.length) {
    const p = /** @type {number} */ (todo.pop());
    for (const k of kids.get(p) ?? []) {
      out.push(k);
      todo.push(k);
    }
  }
  return out;
}

/** User + system CPU seconds used so far by these processes (from /proc, in clock ticks). @param {number[]} pids */
export function cpuSeconds(pids) {
  let ticks = 0;
  for (const p of pids) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(f[11]) + Number(f[12]); // utime, stime (fields 14 and 15 of stat)
    } catch {}
  }
  return ticks / clockTicks;
}

let clockTicks = 100;
try {
  clockTicks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
} catch {}
