// npm run test:admin: the admin's sessions in headless Chromium (docs/admin.md, "Sessions"):
// one sign-in serves every tab, a sign-in elsewhere in the browser does not break a tab, a session
// that ends mid-edit keeps the edit and asks for the key in place, the keys page lists and ends
// sessions, sign-out here or everywhere; each page at 360 and 1280 px without axe findings.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, test } from "node:test";
import { byText, closeAdmin, driver, openAdmin } from "./admin-page.mjs";
import { problems } from "./playwright-page.mjs";
import { callServer, startServer } from "./serve.mjs";

/** @type {import("./serve.mjs").Server} */
let server;
/** @type {import("./admin-page.mjs").Page} */
let page;
/** @type {ReturnType<typeof driver>} */
let d;
let mug = 0;
let order = 0;

/** @param {string} method @param {string} p @param {unknown} [body] */
const call = async (method, p, body) => (await callServer(server, method, p, body)).json;

/** A session made outside the browser (another device): its cookie header. @param {string} [agent] */
async function otherSession(agent = "Mozilla/5.0 (Windows NT 10.0) Firefox/133.0") {
  const res = await fetch(`${server.base}/v1/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json", "user-agent": agent },
    body: JSON.stringify({ key: server.key }),
  });
  assert.equal(res.status, 201);
  return /** @type {string} */ (res.headers.get("set-cookie")).split(";")[0];
}
const statusWith = async (/** @type {string} */ cookie) =>
  (await fetch(`${server.base}/v1/orders`, { headers: { cookie } })).status;

/** The id the API lists the browser's session by: the SHA-256 of its cookie. */
async function browserSessionId() {
  const { cookies } = await page.send("Network.getCookies", { urls: [server.base] });
  const c = cookies.find((/** @type {any} */ c) => c.name === "__Host-session");
  return createHash("sha256").update(c.value).digest("hex");
}

async function signInHere(/** @type {string} */ scope = "") {
  await d.fill(`document.querySelector("${scope} #key")`, server.key);
  await d.click(byText(`${scope} button`, "Sign in"));
}

before(async () => {
  server = await startServer();
  const made = await call("POST", "/v1/products", [{ title: "Session mug", sku: "SES-MUG", price: 100, stock: 10 }]);
  mug = made.products[0].product_id;
  const created = await call("POST", "/v1/orders", [{ order_id: "create", products: [{ sku: "SES-MUG", qty: 1 }] }]);
  order = created.results.create_1.order_id;
  page = await openAdmin(server, { signedIn: false });
  d = driver(page);
  await signInHere();
  await page.waitFor(`document.querySelector("nav a[href='#/orders']")`, 20_000);
});

after(() => closeAdmin(page, server));

test("a second tab opens an order without the key; a sign-in there does not break the first tab", async () => {
  const tab = await page.pw.context().newPage();
  try {
    await tab.goto(`${server.base}/admin/#/orders/${order}`);
    // Polled: waitForFunction evaluates a string, which the admin's CSP refuses.
    const deadline = Date.now() + 20_000;
    while (!(await tab.evaluate(`!!document.querySelector("h1")?.textContent.startsWith("Order #${order}")`))) {
      assert.ok(Date.now() < deadline, "the order opened in the second tab");
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(await tab.evaluate(`document.querySelector("#key")`), null, "no sign-in form");
    // A sign-in in that tab: a new session replaces the browser's one (and its CSRF token).
    const signedIn = await tab.evaluate(`fetch("/v1/sessions", { method: "POST",
      headers: { "content-type": "application/json", "x-requested-with": "XMLHttpRequest" },
      body: JSON.stringify({ key: ${JSON.stringify(server.key)} }) }).then((r) => r.status)`);
    assert.equal(signedIn, 201);
  } finally {
    await tab.close();
  }
  // The first tab still holds the old token; its write goes through all the same.
  await d.go(`#/products/${mug}`, "Session mug");
  await d.fill(`document.querySelector("#title")`, "Session mug 2");
  await d.clickText("button", "Save");
  await d.waitText("Saved.");
  assert.equal((await call("GET", `/v1/products/${mug}`)).title, "Session mug 2");
});

test("a session that ends mid-edit keeps the edit and asks for the key in place", async () => {
  await d.go(`#/products/${mug}`, "Session mug 2");
  await d.fill(`document.querySelector("#title")`, "Typed before the end");
  // The session ends elsewhere (the keys page of another browser, or the idle timeout).
  assert.equal((await callServer(server, "DELETE", `/v1/sessions/${await browserSessionId()}`)).status, 204);
  await d.clickText("button", "Save");
  await page.waitFor(`document.querySelector("dialog.again[open]")`, 20_000);
  assert.equal(await page.evaluate(`document.querySelector("#title").value`), "Typed before the end");
  assert.deepEqual(await d.axe(), []);
  await signInHere("dialog.again");
  await page.waitFor(`!document.querySelector("dialog.again[open]")`, 20_000);
  assert.equal(await page.evaluate(`document.querySelector("#title").value`), "Typed before the end");
  await d.clickText("button", "Save");
  await d.waitText("Saved.");
  assert.equal((await call("GET", `/v1/products/${mug}`)).title, "Typed before the end");
});

test("the keys page lists every live session; End ends one", async () => {
  const phone = await otherSession("Mozilla/5.0 (Linux; Android 14) Chrome/131.0 Mobile");
  await d.go("#/keys", "Keys");
  await d.waitText("Signed-in sessions");
  await d.waitText("Chrome 131 on Android");
  assert.match(await d.text(), /\(this browser\)/);
  await d.review("keys-sessions");
  const row = `[...document.querySelectorAll("table.sessions tbody tr")].find((r) => r.textContent.includes("Android"))`;
  await d.click(`${row}.querySelector("button")`);
  await d.waitText("Ended the session of API_KEY in Chrome 131 on Android");
  assert.equal(await statusWith(phone), 401);
  await page.waitFor(`!${row}`, 20_000);
});

test("sign-out everywhere ends every session of the key; the sign-in page says so", async () => {
  const laptop = await otherSession();
  assert.equal(await statusWith(laptop), 200);
  await d.clickText("summary", "Sign out");
  await d.review("signout-menu");
  await d.clickText("button", "Everywhere");
  await page.waitFor(`document.querySelector("#key")`, 20_000);
  assert.match(await d.text(), /Signed out everywhere/);
  assert.equal(await statusWith(laptop), 401);
});

test("sign-out in this browser ends only its session", async () => {
  const laptop = await otherSession();
  await signInHere();
  await page.waitFor(`document.querySelector("nav a[href='#/orders']")`, 20_000);
  await d.clickText("summary", "Sign out");
  await d.clickText("button", "This browser");
  await page.waitFor(`document.querySelector("#key")`, 20_000);
  assert.match(await d.text(), /Signed out\./);
  assert.equal(await statusWith(laptop), 200);
});

test("no CSP violation or script error", () => {
  assert.deepEqual(problems(page.events), []);
});
