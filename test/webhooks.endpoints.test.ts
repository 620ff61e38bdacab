import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import { MAX_ENDPOINTS } from "../src/webhooks/schema";
import { call, get, post } from "./helpers";

const LOCAL = { env: { ALLOW_LOCAL_WEBHOOKS: "true" } };
const create = (body: unknown, init = {}) => post("/v1/webhooks", body, init);
const del = (id: number) => call("DELETE", `/v1/webhooks/${id}`);

let logSpy: MockInstance<typeof console.log>;
let errSpy: MockInstance<typeof console.error>;
beforeEach(() => {
  logSpy = vi.spyOn(console, "log").mockImplementation(() => {});
  errSpy = vi.spyOn(console, "error").mockImplementation(() => {});
});
afterEach(() => {
  logSpy.mockRestore();
  errSpy.mockRestore();
});
const logged = () => [...logSpy.mock.calls, ...errSpy.mock.calls].map((a) => a.map(String).join(" ")).join("\n");

async function clear() {
  await env.DB.prepare("DELETE FROM webhook_endpoints").run();
}

describe("POST /v1/webhooks", () => {
  beforeEach(clear);

  it("creates an endpoint and shows its secret in this answer only", async () => {
    const r = await create({ url: "https://hooks.example.com/in?token=abc", events: ["order.new", "order.done"] });
    expect(r.status).toBe(201);
    expect(r.json).toEqual({
      id: expect.any(Number),
      url: "https://hooks.example.com/in?token=abc",
      events: ["order.new", "order.done"],
      format: "standard",
      enabled: true,
      disabled_at: null,
      disabled_reason: null,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      notices: [],
    });
    // 32 random bytes behind the prefix, and a new secret for every endpoint.
    expect(atob(r.json.secret.slice(6))).toHaveLength(32);
    const other = await create({ url: "https://hooks.example.com/2", events: ["*"], format: "quickbutik" });
    expect(other.json.secret).not.toBe(r.json.secret);
    expect(other.json.format).toBe("quickbutik");
  });

  it("lists endpoints without secrets, and logs no secret", async () => {
    const a = await create({ url: "https://a.example.com/", events: ["*"] });
    const b = await create({ url: "https://b.example.com/", events: ["product.add"], format: "quickbutik" });
    const list = await get("/v1/webhooks");
    expect(list.status).toBe(200);
    expect(list.json.webhooks.map((w: any) => w.id)).toEqual([a.json.id, b.json.id]);
    for (const w of list.json.webhooks) expect(Object.keys(w)).not.toContain("secret");
    expect(list.text).not.toContain("whsec_");
    expect(list.text).not.toContain(a.json.secret.slice(6));
    const deliveries = await get(`/v1/webhooks/${a.json.id}/deliveries`);
    expect(deliveries.text).not.toContain("whsec_");
    const out = logged();
    expect(out).toContain('"route":"/v1/webhooks"');
    expect(out).not.toContain(a.json.secret.slice(6));
    expect(out).not.toContain(b.json.secret.slice(6));
  });

  it("refuses a 21st endpoint with 409 and keeps 20", async () => {
    const made = await Promise.all(
      Array.from({ length: MAX_ENDPOINTS + 3 }, (_, i) => create({ url: `https://h${i}.example.com/`, events: ["*"] })),
    );
    expect(made.filter((r) => r.status === 201)).toHaveLength(MAX_ENDPOINTS);
    const refused = made.filter((r) => r.status === 409);
    expect(refused).toHaveLength(3);
    expect(refused[0].json.error).toMatch(/at most 20/);
    expect((await get("/v1/webhooks")).json.webhooks).toHaveLength(MAX_ENDPOINTS);
    // Deleting one makes room again.
    expect((await del(made.find((r) => r.status === 201)!.json.id)).status).toBe(204);
    expect((await create({ url: "https://again.example.com/", events: ["*"] })).status).toBe(201);
  });

  it.each([
    ["no url", { events: ["*"] }, "url: is required"],
    ["url not a string", { url: 5, events: ["*"] }, "url: must be a string"],
    ["url not absolute", { url: "/hooks", events: ["*"] }, "url: must be an absolute URL"],
    ["http", { url: "http://hooks.example.com/", events: ["*"] }, "url: must use https"],
    ["ftp", { url: "ftp://hooks.example.com/", events: ["*"] }, "url: must use https"],
    ["user info", { url: "https://u:p@hooks.example.com/", events: ["*"] }, "url: must not contain user info"],
    ["fragment", { url: "https://hooks.example.com/#x", events: ["*"] }, "url: must not contain a fragment"],
    ["too long", { url: `https://hooks.example.com/${"a".repeat(2048)}`, events: ["*"] }, "url: must be at most 2048"],
    ["no events", { url: "https://h.example.com/" }, "events: "],
    ["events not an array", { url: "https://h.example.com/", events: "*" }, "events: must be an array"],
    ["empty events", { url: "https://h.example.com/", events: [] }, "events: must name at least one"],
    [
      "unknown event",
      { url: "https://h.example.com/", events: ["order.new", "order.paid"] },
      "events[1]: unknown event type",
    ],
    ["event not a string", { url: "https://h.example.com/", events: [7] }, "events[0]: "],
    [
      "repeated event",
      { url: "https://h.example.com/", events: ["order.new", "order.new"] },
      "events: must not repeat",
    ],
    ["* with others", { url: "https://h.example.com/", events: ["*", "order.new"] }, 'events: "*" means every'],
    ["bad format", { url: "https://h.example.com/", events: ["*"], format: "xml" }, "format: must be one of standard"],
  ])("400 naming the field: %s", async (_name, body, message) => {
    const r = await create(body);
    expect(r.status).toBe(400);
    expect(r.json.code).toBe(400);
    expect(r.json.errors.join("\n")).toContain(message);
    expect((await get("/v1/webhooks")).json.webhooks).toEqual([]);
  });

  it.each([
    ["an array", [{ url: "https://h.example.com/", events: ["*"] }]],
    ["null", null],
  ])("400 for a body that is %s", async (_name, body) => {
    const r = await create(body);
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/webhook object/);
  });

  it("reports unknown fields as notices", async () => {
    const r = await create({ url: "https://h.example.com/", events: ["*"], secret: "mine" });
    expect(r.status).toBe(201);
    expect(r.json.notices).toEqual(["ignored unknown field secret"]);
    expect(r.json.secret).not.toBe("mine");
  });

  it("needs credentials", async () => {
    const r = await call("POST", "/v1/webhooks", {
      body: { url: "https://h.example.com/", events: ["*"] },
      headers: { authorization: "" },
    });
    expect(r.status).toBe(401);
    expect((await get("/v1/webhooks", { headers: { authorization: "" } })).status).toBe(401);
  });
});

describe("URL rules", () => {
  beforeEach(clear);

  const refused = [
    "https://localhost/",
    "https://LOCALHOST./x",
    "https://api.localhost/",
    "https://127.0.0.1/",
    "https://127.1.2.3:8443/",
    "https://0x7f.1/", // 127.0.0.1 in another notation
    "https://2130706433/", // 127.0.0.1 as one number
    "https://0.0.0.0/",
    "https://0.1.2.3/",
    "https://10.0.0.1/",
    "https://10.255.255.255/",
    "https://100.64.0.1/",
    "https://169.254.169.254/latest/meta-data/",
    "https://172.16.0.1/",
    "https://172.31.255.254/",
    "https://192.168.1.1/",
    "https://192.0.0.8/",
    "https://198.18.0.1/",
    "https://224.0.0.1/",
    "https://255.255.255.255/",
    "https://[::1]/",
    "https://[::]/",
    "https://[0:0:0:0:0:0:0:1]/",
    "https://[::ffff:127.0.0.1]/",
    "https://[::ffff:8.8.8.8]/", // IPv4-mapped: the IPv4 itself is the way to name it
    "https://[::ffff:a9fe:a9fe]/",
    "https://[::ffff:0:127.0.0.1]/", // IPv4-translated (SIIT)
    "https://[::ffff:0:808:808]/", // IPv4-translated: the IPv4 itself is the way to name it
    "https://[2606:4700::5efe:a00:1]/", // ISATAP of 10.0.0.1 under a public prefix
    "https://[2606:4700::200:5efe:7f00:1]/", // ISATAP (universal bit) of 127.0.0.1
    "https://[::127.0.0.1]/",
    "https://[fe80::1]/",
    "https://[febf::1]/",
    "https://[fc00::1]/",
    "https://[fd12:3456:789a::1]/",
    "https://[ff02::1]/",
    "https://[64:ff9b::a00:1]/",
    "https://[2002:a00:1::]/", // 6to4 of 10.0.0.1
    "https://[2001:db8::1]/",
  ];
  it.each(refused)("refuses %s, and allows it with ALLOW_LOCAL_WEBHOOKS=true", async (url) => {
    const r = await create({ url, events: ["*"] });
    expect(r.status).toBe(400);
    expect(r.json.errors[0]).toMatch(/^url: must not point to (localhost|a loopback, private or reserved address)$/);
    const local = await create({ url, events: ["*"] }, LOCAL);
    expect(local.status).toBe(201);
    // Stored as the parser serialises it: the URL that is fetched is the one the rules judged.
    expect(local.json.url).toBe(new URL(url).href);
    await del(local.json.id);
  });

  it.each([
    "https://hooks.example.com/in",
    "https://8.8.8.8/",
    "https://172.32.0.1/",
    "https://172.15.255.255/",
    "https://192.169.0.1/",
    "https://100.128.0.1/",
    "https://169.255.0.1/",
    "https://[2606:4700:4700::1111]/",
    "https://[2002:808:808::]/", // 6to4 of a public address
    "https://[2606:4700::5efe:808:808]/", // ISATAP of a public address
    "https://fc00.example.com/", // a name, not a literal
    "https://10.0.0.1.nip.example.com/", // a name: not resolved here
  ])("allows %s", async (url) => {
    const r = await create({ url, events: ["*"] });
    expect(r.status, r.text).toBe(201);
    await del(r.json.id);
  });

  it.each([
    [" https://example.com/ ", "https://example.com/"],
    ["\thttps://Hooks.Example.COM/In?a=1\n", "https://hooks.example.com/In?a=1"],
    ["https:example.com", "https://example.com/"],
    ["https:///example.com//x", "https://example.com//x"],
    ["https://example.com:443/", "https://example.com/"],
    ["https://example.com:8443", "https://example.com:8443/"],
  ])("normalises %j to %s before the rules and stores that", async (url, stored) => {
    const r = await create({ url, events: ["*"] });
    expect(r.status, r.text).toBe(201);
    expect(r.json.url).toBe(stored);
    const listed = (await get("/v1/webhooks")).json.webhooks.find((w: { id: number }) => w.id === r.json.id);
    expect(listed.url).toBe(stored);
    await del(r.json.id);
  });

  it.each([
    ["https://example.com:0/", "url: must not use port 0"],
    ["https://example.com:00/", "url: must not use port 0"],
    ["  ", "url: must be an absolute URL"],
    ["https://", "url: must be an absolute URL"],
    ["example.com/hook", "url: must be an absolute URL"],
  ])("refuses %j", async (url, error) => {
    const r = await create({ url, events: ["*"] });
    expect(r.status, r.text).toBe(400);
    expect(r.json.errors).toEqual([error]);
    // Port 0 is refused locally too.
    if (error.includes("port 0")) expect((await create({ url, events: ["*"] }, LOCAL)).json.errors).toEqual([error]);
  });

  it("allows http to 127.0.0.1 only with ALLOW_LOCAL_WEBHOOKS=true", async () => {
    const url = "http://127.0.0.1:9999/hook";
    expect((await create({ url, events: ["*"] })).json.errors).toEqual(["url: must use https"]);
    expect((await create({ url, events: ["*"] }, { env: { ALLOW_LOCAL_WEBHOOKS: "false" } })).status).toBe(400);
    expect((await create({ url, events: ["*"] }, LOCAL)).status).toBe(201);
    // Still no user info or other schemes, even locally.
    const ui = await create({ url: "http://u:p@127.0.0.1/", events: ["*"] }, LOCAL);
    expect(ui.json.errors).toEqual(["url: must not contain user info (user:password@)"]);
    const ftp = await create({ url: "ftp://127.0.0.1/", events: ["*"] }, LOCAL);
    expect(ftp.json.errors).toEqual(["url: must use https or http"]);
  });
});

describe("DELETE /v1/webhooks/{id} and GET /v1/webhooks/{id}/deliveries", () => {
  beforeEach(clear);

  it("deletes an endpoint, then 404", async () => {
    const a = await create({ url: "https://a.example.com/", events: ["*"] });
    expect((await del(a.json.id)).status).toBe(204);
    expect((await get("/v1/webhooks")).json.webhooks).toEqual([]);
    const again = await del(a.json.id);
    expect(again.status).toBe(404);
    expect(again.json).toEqual({ code: 404, error: `webhook ${a.json.id} not found` });
    expect((await get(`/v1/webhooks/${a.json.id}/deliveries`)).status).toBe(404);
  });

  it.each([["abc"], ["0"], ["-1"], ["1.5"]])("400 for id %s", async (id) => {
    expect((await call("DELETE", `/v1/webhooks/${id}`)).status).toBe(400);
    expect((await get(`/v1/webhooks/${id}/deliveries`)).status).toBe(400);
  });

  it("lists an endpoint's attempts newest first, bounded by limit", async () => {
    const a = await create({ url: "https://a.example.com/", events: ["*"] });
    const b = await create({ url: "https://b.example.com/", events: ["*"] });
    const insert = env.DB.prepare(
      `INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, attempt, status, error, duration_ms, outcome, created_at)
       VALUES (?, ?, 'order.new', ?, ?, ?, 12, ?, ?)`,
    );
    await env.DB.batch([
      insert.bind(a.json.id, "ev-1", 1, 500, null, "retrying", 1_700_000_000_000),
      insert.bind(a.json.id, "ev-1", 2, null, "timeout: no answer within 10 s", "retrying", 1_700_000_005_000),
      insert.bind(a.json.id, "ev-1", 3, 200, null, "delivered", 1_700_000_065_000),
      insert.bind(b.json.id, "ev-1", 1, 200, null, "delivered", 1_700_000_000_000),
    ]);
    const r = await get(`/v1/webhooks/${a.json.id}/deliveries`);
    expect(r.status).toBe(200);
    expect(r.json.deliveries).toEqual([
      {
        event_id: "ev-1",
        event_type: "order.new",
        // No event row here: nothing to name.
        order_id: null,
        product_id: null,
        attempt: 3,
        status: 200,
        error: null,
        duration_ms: 12,
        outcome: "delivered",
        created_at: new Date(1_700_000_065_000).toISOString(),
      },
      expect.objectContaining({ attempt: 2, status: null, error: "timeout: no answer within 10 s" }),
      expect.objectContaining({ attempt: 1, status: 500, outcome: "retrying" }),
    ]);
    const one = await get(`/v1/webhooks/${a.json.id}/deliveries?limit=1`);
    expect(one.json.deliveries.map((d: any) => d.attempt)).toEqual([3]);
    expect((await get(`/v1/webhooks/${a.json.id}/deliveries?limit=0`)).status).toBe(400);
    expect((await get(`/v1/webhooks/${a.json.id}/deliveries?limit=101`)).status).toBe(400);
    // The log goes with its endpoint.
    await del(a.json.id);
    const left = await env.DB.prepare("SELECT count(*) AS n FROM webhook_deliveries").first<{ n: number }>();
    expect(left?.n).toBe(1);
  });
});
