import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { basic, createProduct, get, KEY, post, put, uid } from "./helpers";

// An Idempotency-Key belongs to the credential that sent it (docs/api.md, "Idempotency-Key"): the
// same key from two credentials is two keys, and a replay answers only the credential that made
// the first request. An admin session is the key it was signed in with.

const EDGE = { colo: "ARN" };
let address = 0;

async function secretKey(scopes: string[]) {
  const r = await post("/v1/keys", { name: `integration ${uid("sk")}`, type: "secret", scopes });
  expect(r.status, r.text).toBe(201);
  return r.json as { id: number; key: string };
}

async function publishableKey() {
  const r = await post("/v1/keys", { name: `storefront ${uid("pk")}`, type: "publishable" });
  expect(r.status, r.text).toBe(201);
  return r.json as { id: number; key: string };
}

/** Headers of a request made with `key` (a stored secret key or an API_KEY entry) and `idem`. */
const bySecret = (key: string, idem: string) => ({ headers: { authorization: basic(key), "idempotency-key": idem } });
/** A storefront's request with `idem`, each from its own address (the per-address order limit). */
const byStorefront = (key: string, idem: string) => ({
  headers: {
    authorization: "",
    "x-publishable-key": key,
    "idempotency-key": idem,
    "cf-connecting-ip": `198.51.100.${++address}`,
  },
  cf: EDGE,
});

async function signIn(key: string) {
  const r = await post("/v1/sessions", { key }, { headers: { authorization: "" } });
  expect(r.status, r.text).toBe(201);
  const cookie = /^(__Host-session=[0-9a-f]{64});/.exec(r.headers.get("set-cookie") ?? "")?.[1] ?? "";
  return (idem: string) => ({
    headers: { authorization: "", cookie, "x-csrf-token": r.json.csrf_token as string, "idempotency-key": idem },
  });
}

const orderLines = async (sku: string) =>
  (await env.DB.prepare("SELECT count(*) AS n FROM order_lines WHERE sku = ?").bind(sku).first<{ n: number }>())?.n;

const createOrder = (sku: string, qty = 1) => [{ order_id: "create", products: [{ sku, qty }] }];
const replayed = (r: { headers: Headers }) => r.headers.get("idempotent-replayed");

describe("a key a storefront used does not block an integration or a stock tool", () => {
  it("the integration's order and the stock tool's PUT with the storefront's key take effect", async () => {
    const sku = uid("IDEM");
    await createProduct({ sku, stock: 20 });
    const storefront = await publishableKey();
    const integration = await secretKey(["orders:write"]);
    const stockTool = await secretKey(["products:write"]);
    const idem = uid("shared");

    const shop = await post("/v1/orders", createOrder(sku), byStorefront(storefront.key, idem));
    expect(shop.status, shop.text).toBe(200);

    // Another body with the same key: a fresh request of this credential, not 422.
    const order = await post("/v1/orders", createOrder(sku, 2), bySecret(integration.key, idem));
    expect(order.status, order.text).toBe(200);
    expect(replayed(order)).toBeNull();
    expect(order.json.results.create_1.order_id).not.toBe(shop.json.results.create_1.order_id);

    const stock = await put("/v1/products", [{ sku, stock: 50 }], bySecret(stockTool.key, idem));
    expect(stock.status, stock.text).toBe(200);
    expect(replayed(stock)).toBeNull();
    expect(await orderLines(sku)).toBe(2);
    const row = await env.DB.prepare("SELECT stock FROM products WHERE sku = ?").bind(sku).first();
    expect(row).toEqual({ stock: 50 });

    // Each credential still has its own record: the integration's retry replays its own order.
    const retry = await post("/v1/orders", createOrder(sku, 2), bySecret(integration.key, idem));
    expect(replayed(retry)).toBe("true");
    expect(retry.json).toEqual(order.json);
  });
});

describe("a storefront replaying an integration's Idempotency-Key and body", () => {
  it("gets an order of its own, never the integration's stored answer", async () => {
    const sku = uid("IDEM");
    await createProduct({ sku, stock: 20 });
    const integration = await secretKey(["orders:write", "orders:read"]);
    const storefront = await publishableKey();
    const idem = uid("captured");
    const body = createOrder(sku);

    const theirs = await post("/v1/orders", body, bySecret(integration.key, idem));
    expect(theirs.status, theirs.text).toBe(200);
    const mine = await post("/v1/orders", body, byStorefront(storefront.key, idem));
    expect(mine.status, mine.text).toBe(200);
    expect(replayed(mine)).toBeNull();
    const own = mine.json.results.create_1;
    expect(own.order_id).not.toBe(theirs.json.results.create_1.order_id);
    expect(own.token).toMatch(/^[0-9a-f-]{36}$/);
    expect(mine.text).not.toContain(String(theirs.json.results.create_1.order_id));
    expect(await orderLines(sku)).toBe(2);

    // Its own retry replays its own order; the integration's retry still gets the integration's.
    const again = await post("/v1/orders", body, byStorefront(storefront.key, idem));
    expect(replayed(again)).toBe("true");
    expect(again.json).toEqual(mine.json);
    const theirsAgain = await post("/v1/orders", body, bySecret(integration.key, idem));
    expect(theirsAgain.json).toEqual(theirs.json);
    expect(await orderLines(sku)).toBe(2);
  });
});

describe("two credentials, one Idempotency-Key", () => {
  it.each([
    [
      "two stored secret keys",
      async () => [(await secretKey(["orders:write"])).key, (await secretKey(["orders:write"])).key],
    ],
    ["two entries of API_KEY", async () => [KEY, "second-key"]],
    ["a stored secret key and API_KEY", async () => [(await secretKey(["orders:write"])).key, KEY]],
  ])("%s: each gets its own outcome, and each replay only its own", async (_, keys) => {
    const [a, b] = await keys();
    const sku = uid("IDEM");
    await createProduct({ sku, stock: 20 });
    const idem = uid("same");
    const body = createOrder(sku);

    const first = await post("/v1/orders", body, bySecret(a, idem));
    const second = await post("/v1/orders", body, bySecret(b, idem));
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(replayed(second)).toBeNull();
    expect(second.json.results.create_1.order_id).not.toBe(first.json.results.create_1.order_id);
    expect((await post("/v1/orders", body, bySecret(a, idem))).json).toEqual(first.json);
    expect((await post("/v1/orders", body, bySecret(b, idem))).json).toEqual(second.json);
    expect(await orderLines(sku)).toBe(2);
  });

  it("concurrent requests of two credentials with one key: exactly one effect each, the losers replay their own", async () => {
    const sku = uid("IDEM");
    await createProduct({ sku, stock: 100 });
    const [a, b] = [(await secretKey(["orders:write"])).key, (await secretKey(["orders:write"])).key];
    const idem = uid("race");
    const body = createOrder(sku);
    const answers = await Promise.all(
      Array.from({ length: 16 }, (_, i) => post("/v1/orders", body, bySecret(i % 2 ? b : a, idem))),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(16).fill(200));
    const idsOf = (k: number) =>
      new Set(answers.filter((_, i) => i % 2 === k).map((r) => r.json.results.create_1.order_id));
    expect(idsOf(0).size).toBe(1);
    expect(idsOf(1).size).toBe(1);
    expect([...idsOf(0)][0]).not.toBe([...idsOf(1)][0]);
    expect(answers.filter((r) => replayed(r) === "true")).toHaveLength(14);
    expect(await orderLines(sku)).toBe(2);
  });
});

describe("an admin session is the key it was signed in with", () => {
  it("a session of API_KEY replays that entry's answer, and another entry's session does not", async () => {
    const sku = uid("IDEM");
    await createProduct({ sku, stock: 20 });
    const idem = uid("tab");
    const body = createOrder(sku);
    const byKey = await post("/v1/orders", body, bySecret(KEY, idem));
    expect(byKey.status).toBe(200);

    const session = await signIn(KEY);
    const bySession = await post("/v1/orders", body, session(idem));
    expect(bySession.status, bySession.text).toBe(200);
    expect(replayed(bySession)).toBe("true");
    expect(bySession.json).toEqual(byKey.json);

    const other = await signIn("second-key");
    const byOther = await post("/v1/orders", body, other(idem));
    expect(replayed(byOther)).toBeNull();
    expect(byOther.json.results.create_1.order_id).not.toBe(byKey.json.results.create_1.order_id);
    expect(await orderLines(sku)).toBe(2);
  });

  it("a stored key's session shares that key's records, not another key's", async () => {
    const sku = uid("IDEM");
    await createProduct({ sku, stock: 20 });
    const k = await secretKey(["orders:write", "orders:read"]);
    const session = await signIn(k.key);
    const idem = uid("tab");
    const body = createOrder(sku);
    // Two tabs of the admin: the second one's retry is a replay of the first's.
    const tab1 = await post("/v1/orders", body, session(idem));
    const tab2 = await post("/v1/orders", body, session(idem));
    expect(tab1.status, tab1.text).toBe(200);
    expect(replayed(tab2)).toBe("true");
    const byKey = await post("/v1/orders", body, bySecret(k.key, idem));
    expect(replayed(byKey)).toBe("true");
    expect(byKey.json).toEqual(tab1.json);
    const byBootstrap = await post("/v1/orders", body, bySecret(KEY, idem));
    expect(replayed(byBootstrap)).toBeNull();
    expect(await orderLines(sku)).toBe(2);
  });
});

describe("the key the client sent is what the 1 to 255 printable characters rule reads", () => {
  it.each([
    ["255 characters", "k".repeat(255), 200],
    ["256 characters", "k".repeat(256), 400],
    ["a colon inside, like the namespace's own", "key-0:abc", 200],
  ])("%s", async (_, idem, status) => {
    const r = await post("/v1/products", { title: "K", price: 1, sku: uid() }, bySecret(KEY, idem));
    expect(r.status, r.text).toBe(status);
    if (status === 400) expect(r.json.errors).toEqual(["Idempotency-Key: must be 1 to 255 printable characters"]);
  });

  it("a key that looks like another credential's namespaced record is still only this credential's", async () => {
    const sku = uid("IDEM");
    await createProduct({ sku, stock: 20 });
    const k = await secretKey(["orders:write"]);
    const idem = uid("plain");
    const body = createOrder(sku);
    const first = await post("/v1/orders", body, bySecret(KEY, idem));
    // API_KEY's record is stored as `key-0:<idem>`; the stored key sending exactly that is new.
    const forged = await post("/v1/orders", body, bySecret(k.key, `key-0:${idem}`));
    expect(replayed(forged)).toBeNull();
    expect(forged.json.results.create_1.order_id).not.toBe(first.json.results.create_1.order_id);
    expect((await get(`/v1/orders/${first.json.results.create_1.order_id}`)).status).toBe(200);
  });
});
