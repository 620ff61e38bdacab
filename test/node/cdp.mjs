// A minimal Chrome DevTools Protocol client over the `ws` package: headless Chromium (Debian's
// `chromium`) with --remote-debugging-port, one page, evaluate/click/type. Enough to drive a
// page the way a person would, without puppeteer.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import WebSocket from "ws";

const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));

/**
 * @param {string} url
 * @param {{ chromium?: string, width?: number, height?: number }} [opts]
 */
export async function openPage(
  url,
  { chromium = process.env.CHROMIUM ?? "chromium", width = 1280, height = 1000 } = {},
) {
  const profile = mkdtempSync(path.join(tmpdir(), "edge-store-cdp-"));
  const child = spawn(
    chromium,
    [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--disable-dev-shm-usage",
      "--remote-debugging-port=0",
      `--user-data-dir=${profile}`,
      `--window-size=${width},${height}`,
      "about:blank",
    ],
    // Its own process group, so close() ends the renderer and helper processes too.
    { stdio: ["ignore", "ignore", "pipe"], detached: true },
  );
  let stderr = "";
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  let port = 0;
  for (let i = 0; i < 200 && !port; i++) {
    try {
      port = Number(readFileSync(path.join(profile, "DevToolsActivePort"), "utf8").split("\n")[0]);
    } catch {
      await sleep(100);
    }
  }
  if (!port) throw new Error(`chromium did not open its DevTools port:\n${stderr}`);
  const targets = await fetch(`http://127.0.0.1:${port}/json/list`).then((r) => r.json());
  const page = targets.find((/** @type {{type: string}} */ t) => t.type === "page");
  const ws = new WebSocket(page.webSocketDebuggerUrl, { perMessageDeflate: false });
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  let id = 0;
  /** @type {Map<number, {resolve: (v: any) => void, reject: (e: Error) => void}>} */
  const pending = new Map();
  /** @type {{method: string, params: any}[]} */
  const events = [];
  ws.on("message", (data) => {
    const msg = JSON.parse(String(data));
    if (msg.id && pending.has(msg.id)) {
      const p = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.error) p?.reject(new Error(`${msg.error.message}`));
      else p?.resolve(msg.result);
    } else if (msg.method) events.push(msg);
  });
  /** @param {string} method @param {object} [params] @returns {Promise<any>} */
  const send = (method, params = {}) =>
    new Promise((resolve, reject) => {
      const n = ++id;
      pending.set(n, { resolve, reject });
      ws.send(JSON.stringify({ id: n, method, params }));
    });
  /** @param {string} expression @returns {Promise<any>} */
  const evaluate = async (expression) => {
    const r = await send("Runtime.evaluate", { expression, awaitPromise: true, returnByValue: true });
    if (r.exceptionDetails) throw new Error(`${expression}: ${JSON.stringify(r.exceptionDetails).slice(0, 500)}`);
    return r.result.value;
  };
  /**
   * Waits until `expression` is truthy in the page.
   * @param {string} expression @param {number} [timeoutMs]
   */
  const waitFor = async (expression, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = await evaluate(`!!(${expression})`).catch(() => undefined);
      if (v) return v;
      if (Date.now() > deadline) throw new Error(`timed out waiting for: ${expression}`);
      await sleep(200);
    }
  };
  /** Clicks the middle of the element `selectorExpr` (an expression giving an Element), as a mouse would. */
  const click = async (/** @type {string} */ elementExpr) => {
    await evaluate(`(${elementExpr}).scrollIntoView({ block: "center", behavior: "instant" })`);
    await sleep(150);
    const box = await evaluate(`(() => { const r = (${elementExpr}).getBoundingClientRect();
      return { x: r.x + r.width / 2, y: r.y + r.height / 2 }; })()`);
    for (const type of ["mouseMoved", "mousePressed", "mouseReleased"]) {
      await send("Input.dispatchMouseEvent", { type, x: box.x, y: box.y, button: "left", clickCount: 1 });
    }
  };
  /** Types text into the focused element as keyboard input. */
  const type = (/** @type {string} */ text) => send("Input.insertText", { text });

  await send("Runtime.enable");
  await send("Log.enable");
  await send("Page.enable");
  await send("Network.enable");
  await send("Page.navigate", { url });
  const close = async () => {
    ws.close();
    const exited = new Promise((r) => (child.exitCode === null ? child.once("exit", r) : r(undefined)));
    try {
      process.kill(-(/** @type {number} */ (child.pid)), "SIGKILL");
    } catch {
      // already gone
    }
    await exited;
    // Helpers may still be flushing into the profile for a moment.
    rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  };
  return { send, evaluate, waitFor, click, type, events, close };
}
