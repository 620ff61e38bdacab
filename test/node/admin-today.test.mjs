// npm run test:admin: the day at a glance (docs/admin.md, "Today") in the store's time zone, at
// 19:00 in New York (UTC is already tomorrow) and at 00:30 in Stockholm (UTC is still yesterday),
// in a browser whose own zone is Tokyo's. The browser's clock is Playwright's; the orders' times
// are set in the served database with `wrangler d1 execute --local`, as nothing in the API
// back-dates an order.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { driver, openAdmin, signIn } from "./admin-page.mjs";
import { problems } from "./playwright-page.mjs";
import { callServer, root, startServer } from "./serve.mjs";

/** @type {(() => Promise<void>)[]} */
const cleanup = [];
after(async () => {
  for (const fn of cleanup.reverse()) await fn();
});

/**
 * A server in `zone` with one order per entry of `times` (qty, price, cancelled), created then
 * moved to its time; a signed-in page whose clock reads `now`.
 * @param {string} zone @param {string} now @param {{ at: string, qty: number, cancel?: boolean }[]} orders
 */
async function day(zone, now, orders) {
  const server = await startServer({ args: ["--var", `STORE_TIMEZONE:${zone}`] });
  cleanup.push(() => server.stop());
  /** @param {string} method @param {string} p @param {unknown} [body] */
  const call = async (method, p, body) => (await callServer(server, method, p, body)).json;
  await call("POST", "/v1/products", [{ title: "Day mug", sku: "DAY-MUG", price: 100, stock: 100 }]);
  const made = await call(
    "POST",
    "/v1/orders",
    orders.map((o) => ({ order_id: "create", products: [{ sku: "DAY-MUG", qty: o.qty }] })),
  );
  const ids = orders.map((_, i) => made.results[`create_${i + 1}`].order_id);
  const cancels = ids.filter((_, i) => orders[i].cancel).map((id) => ({ order_id: id, status: "cancelled" }));
  if (cancels.length) await call("PUT", "/v1/orders", cancels);
  const moves = ids.map((id, i) => `UPDATE orders SET created_at = ${Date.parse(orders[i].at)} WHERE id = ${id};`);
  execFileSync(
    process.execPath,
    [
      "node_modules/wrangler/bin/wrangler.js",
      "d1",
      "execute",
      "DB",
      "--local",
      "--persist-to",
      server.persist,
      "--command",
      moves.join(" "),
    ],
    { cwd: root, stdio: "pipe", env: { ...process.env, WRANGLER_SEND_METRICS: "false" } },
  );
  const page = await openAdmin(server, { signedIn: false });
  cleanup.push(() => page.close());
  await page.send("Emulation.setTimezoneOverride", { timezoneId: "Asia/Tokyo" });
  await page.pw.clock.setFixedTime(new Date(now));
  await page.pw.reload();
  await signIn(page, server.key);
  return { page, d: driver(page), ids };
}

/** The glance's figures as the page shows them. @param {ReturnType<typeof driver>} d */
async function figures(d) {
  await d.go("#/today", "Today");
  const text = await d.text();
  const figure = (/** @type {string} */ label) => new RegExp(`${label}\\n+([^\\n]+)`).exec(text)?.[1];
  return {
    orders: figure("Orders today"),
    revenue: figure("Revenue today"),
    units: figure("Units sold today"),
    unpaid: figure("Unpaid, waiting"),
    text,
  };
}

test("19:00 in New York: today is New York's day, though UTC's has turned", async () => {
  // 2026-12-01 19:00 in New York is 2026-12-02 00:00 UTC.
  const { page, d } = await day("America/New_York", "2026-12-02T00:00:00Z", [
    { at: "2026-12-01T14:05:00Z", qty: 1 }, // 09:05 in New York
    { at: "2026-12-01T23:50:00Z", qty: 2 }, // 18:50
    { at: "2026-12-01T23:55:00Z", qty: 5, cancel: true }, // 18:55, cancelled: not sold
    { at: "2026-12-01T04:30:00Z", qty: 4 }, // 23:30 the day before
  ]);
  const f = await figures(d);
  assert.deepEqual([f.orders, f.revenue, f.units, f.unpaid], ["2", "300.00 SEK", "3", "3"]);
  assert.match(f.text, /America\/New_York \(UTC-05:00\)/);
  assert.match(f.text, /Tuesday, December 1, 2026|1 December 2026/);
  // The orders list's Today view is the same day.
  await d.go("#/orders?view=today", "Orders");
  await d.waitText("3 orders");
  for (const width of [390, 1280]) {
    await d.width(width);
    assert.deepEqual(await d.axe(), [], `today at ${width} px`);
  }
  const dir = process.env.ADMIN_SCREENSHOTS;
  if (dir) {
    await d.width(1280);
    await d.go("#/today", "Today");
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, "admin-today.png"), await d.screenshot());
  }
  assert.deepEqual(problems(page.events), []);
});

test("00:30 in Stockholm: yesterday evening is not today, though UTC's date is the same", async () => {
  // 2026-12-02 00:30 in Stockholm is 2026-12-01 23:30 UTC.
  const { d } = await day("Europe/Stockholm", "2026-12-01T23:30:00Z", [
    { at: "2026-12-01T23:10:00Z", qty: 2 }, // 00:10 in Stockholm
    { at: "2026-12-01T22:00:00Z", qty: 7 }, // 23:00 the evening before
  ]);
  const f = await figures(d);
  assert.deepEqual([f.orders, f.revenue, f.units, f.unpaid], ["1", "200.00 SEK", "2", "2"]);
  assert.match(f.text, /Europe\/Stockholm \(UTC\+01:00\)/);
  await d.go("#/orders?view=today", "Orders");
  await d.waitText("1 order");
});
