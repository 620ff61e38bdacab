// The admin's browser for test/node/admin.test.mjs: Debian's Chromium driven by Playwright
// (playwright-core: no browser download; CHROMIUM or /usr/bin/chromium). Playwright's clicks and
// keys are real input events on the element it waited to be visible, enabled and still; a CDP
// session beside it records the page's network events, which the test reads to check what the
// admin sent (only /v1, one PUT for a variants table, ...).
import { chromium } from "playwright-core";

/**
 * The page's CSP violations and uncaught script errors so far, each as a line of its event.
 * @param {{method: string, params: any}[]} events
 */
export const problems = (events) =>
  events
    .filter(
      (e) =>
        (e.method === "Log.entryAdded" && /Content Security Policy|Refused to/i.test(e.params.entry.text)) ||
        e.method === "Runtime.exceptionThrown",
    )
    .map((e) => JSON.stringify(e.params).slice(0, 300));

/**
 * Opens `url` in a fresh headless Chromium with its own profile.
 * @param {string} url
 */
export async function openPage(url, { executablePath = process.env.CHROMIUM ?? "/usr/bin/chromium" } = {}) {
  const browser = await chromium.launch({ executablePath, args: ["--no-sandbox", "--disable-dev-shm-usage"] });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const pw = await context.newPage();
  const cdp = await context.newCDPSession(pw);
  /** @type {{method: string, params: any}[]} */
  const events = [];
  for (const method of [
    "Network.requestWillBeSent",
    "Network.responseReceived",
    "Log.entryAdded",
    "Runtime.exceptionThrown",
  ]) {
    cdp.on(/** @type {any} */ (method), (params) => events.push({ method, params }));
  }
  await cdp.send("Network.enable");
  await cdp.send("Log.enable");
  await cdp.send("Runtime.enable");
  await pw.goto(url);
  /** @param {string} method @param {object} [params] @returns {Promise<any>} */
  const send = (method, params = {}) => cdp.send(/** @type {any} */ (method), /** @type {any} */ (params));
  return {
    /** The Playwright page itself, for what has a Playwright form (keys, viewport, screenshots). */
    pw,
    send,
    events,
    /** An expression's value in the page (promises awaited). @param {string} expression */
    evaluate: (expression) => pw.evaluate(expression),
    /**
     * Waits until `expression` is truthy. Polled with evaluate: waitForFunction evaluates its string
     * with eval inside the page, which the admin's Content-Security-Policy (rightly) refuses.
     * @param {string} expression @param {number} [timeoutMs]
     */
    waitFor: async (expression, timeoutMs = 30_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const v = await pw.evaluate(`!!(${expression})`).catch(() => false);
        if (v) return v;
        if (Date.now() > deadline) throw new Error(`timed out waiting for: ${expression}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    /** Clicks the element an expression gives, as Playwright clicks: scrolled to, waited for, a real mouse click. @param {string} elementExpr */
    click: async (elementExpr) => {
      const handle = (await pw.evaluateHandle(elementExpr)).asElement();
      if (!handle) throw new Error(`not an element: ${elementExpr}`);
      await handle.click();
    },
    /** Types into the focused element as keyboard input. @param {string} text */
    type: (text) => pw.keyboard.insertText(text),
    close: () => browser.close(),
  };
}
