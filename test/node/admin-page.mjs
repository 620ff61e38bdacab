// What the admin tests (test/node/admin*.test.mjs) do to the admin's page in Chromium (through
// Playwright, test/node/playwright-page.mjs): open it signed in, fill fields, click by visible
// text, press keys, switch widths, take screenshots, run axe-core.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { openPage } from "./playwright-page.mjs";
import { root } from "./serve.mjs";

const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));
const AXE = path.join(root, "node_modules", "axe-core", "axe.min.js");

/** @typedef {Awaited<ReturnType<typeof import("./playwright-page.mjs").openPage>>} Page */

/** An expression for the first visible element matching `selector` whose text is or starts with `text`. */
export const byText = (/** @type {string} */ selector, /** @type {string} */ text) =>
  `[...document.querySelectorAll(${JSON.stringify(selector)})].find((e) => e.offsetParent !== null && e.textContent.trim().startsWith(${JSON.stringify(text)}))`;

/** @param {Page} page */
export function driver(page) {
  /** Waits for the element, then clicks it as a mouse would. @param {string} el */
  const click = async (el) => {
    await page.waitFor(el, 20_000);
    await page.click(el);
  };
  const d = {
    click,
    /** @param {string} selector @param {string} text */
    clickText: (selector, text) => click(byText(selector, text)),
    /** Replaces an input's value as typing would (Preact hears the input event). @param {string} el @param {string} value */
    fill: async (el, value) => {
      await page.waitFor(el, 20_000);
      await page.evaluate(`(() => { const el = ${el}; el.focus();
        const set = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(el), "value").set;
        set.call(el, ${JSON.stringify(value)}); el.dispatchEvent(new Event("input", { bubbles: true })); })()`);
    },
    /** Picks an option of a select. @param {string} el @param {string} value */
    choose: async (el, value) => {
      await page.waitFor(el, 20_000);
      await page.evaluate(`(() => { const el = ${el}; el.value = ${JSON.stringify(value)};
        el.dispatchEvent(new Event("change", { bubbles: true })); })()`);
    },
    /** A key press, as the keyboard sends it. @param {"Tab" | "Enter" | "Space"} key */
    press: async (key) => {
      await page.pw.keyboard.press(key);
      await sleep(50);
    },
    /** Goes to a page of the admin and waits for its heading. @param {string} hash @param {string} heading */
    go: async (hash, heading) => {
      // Past the hashchange and the render it starts, so the old page's rows are not taken for the new one's.
      await page.evaluate(`new Promise((done) => {
        const next = ${JSON.stringify(hash)};
        const settle = () => setTimeout(done, 0);
        if (location.hash === next) return settle();
        addEventListener("hashchange", settle, { once: true });
        location.hash = next;
      })`);
      await page.waitFor(`document.querySelector("h1")?.textContent.startsWith(${JSON.stringify(heading)})`, 20_000);
      await page.waitFor(`!document.querySelector("main [role=status]")?.textContent.startsWith("Loading")`, 20_000);
    },
    /** The page's text. @returns {Promise<string>} */
    text: () => page.evaluate("document.body.innerText"),
    /** @param {string} expr */
    waitText: (expr) => page.waitFor(`document.body.innerText.includes(${JSON.stringify(expr)})`, 20_000),
    /** Sets the viewport: 360 px is a small phone. @param {number} width */
    width: async (width) => {
      await page.pw.setViewportSize({ width, height: width < 600 ? 740 : 900 });
      await sleep(200);
    },
    /** The whole page as PNG bytes. */
    screenshot: () => page.pw.screenshot({ fullPage: true }),
    /**
     * Every axe-core violation on the page as it is now, whatever its impact (minor included): a
     * merchant using a screen reader meets the minor ones too.
     * @returns {Promise<{id: string, impact: string, nodes: string[]}[]>}
     */
    axe: async () => {
      if (!(await page.evaluate("typeof axe !== 'undefined'"))) await page.evaluate(readFileSync(AXE, "utf8"));
      return page.evaluate(`axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations
        .map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")) })))`);
    },
    /**
     * The page at each width: no sideways scroll and no axe violation, and a screenshot per width
     * into `shots` (for review and the docs' pictures, docs/admin.md) when a directory is named;
     * ends at the last width.
     * @param {string} name
     * @param {{ widths?: number[], shots?: string }} [options]
     */
    review: async (name, { widths = [360, 1280], shots = process.env.ADMIN_SCREENSHOTS } = {}) => {
      for (const width of widths) {
        await d.width(width);
        const overflow = await page.evaluate("document.documentElement.scrollWidth - innerWidth");
        assert.ok(overflow <= 0, `${name} at ${width} px is ${overflow} px wider than the screen`);
        assert.deepEqual(await d.axe(), [], `${name} at ${width} px`);
        if (shots) writeFileSync(path.join(shots, `${name}-${width}.png`), await d.screenshot());
      }
    },
  };
  return d;
}

/** Signs in on the admin's sign-in page with `key` and waits for its navigation. @param {Page} page @param {string} key */
export async function signIn(page, key) {
  const d = driver(page);
  await page.waitFor(`document.querySelector("#key")`, 30_000);
  await d.fill(`document.querySelector("#key")`, key);
  await d.click(byText("button", "Sign in"));
  await page.waitFor(`document.querySelector("header nav")`, 20_000);
}

/**
 * The admin of `server` in a fresh Chromium, signed in with `key` (the server's own unless
 * named), or on its sign-in page, ready, with `signedIn: false`. A page that fails to get there
 * is closed here, since the caller never receives it to close.
 * @param {import("./serve.mjs").Server} server
 * @param {{ key?: string, signedIn?: boolean }} [options]
 * @returns {Promise<Page>}
 */
export async function openAdmin(server, { key = server.key, signedIn = true } = {}) {
  const page = await openPage(`${server.base}/admin`);
  try {
    if (signedIn) await signIn(page, key);
    else await page.waitFor(`document.querySelector("#key")`, 30_000);
    return page;
  } catch (e) {
    await page.close();
    throw e;
  }
}

/**
 * Closes the page, then stops the server, either of them not started yet.
 * @param {Page | undefined} page @param {import("./serve.mjs").Server | undefined} server
 */
export async function closeAdmin(page, server) {
  try {
    await page?.close();
  } finally {
    await server?.stop();
  }
}
