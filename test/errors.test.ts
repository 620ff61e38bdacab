import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { app } from "../src/app";
import { jsonDepth, MAX_DRAIN_BYTES } from "../src/platform/body";
import { basic, call, get, KEY, post, uid } from "./helpers";

const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

describe("error model (docs/api.md, Conventions)", () => {
  it.each([
    ["malformed JSON", { raw: '{"title": ' }, 400, "request body is not valid JSON"],
    [
      "a text/plain body",
      { raw: "{}", headers: { "content-type": "text/plain" } },
      415,
      "Content-Type must be application/json",
    ],
    [
      "a form body",
      { raw: "a=1", headers: { "content-type": "application/x-www-form-urlencoded" } },
      415,
      "Content-Type must be application/json",
    ],
    [
      "a body over 1 MiB",
      { raw: JSON.stringify({ title: "x".repeat(1024 * 1024) }) },
      413,
      "request body is larger than 1 MiB",
    ],
    ["JSON nested 33 levels", { raw: nested(33) }, 400, "JSON is nested deeper than 32 levels"],
    ["a million opening brackets", { raw: "[".repeat(1_000_000) }, 400, "JSON is nested deeper than 32 levels"],
    ["a JSON string body", { raw: '"hello"' }, 400, "body must be a product object or an array of them"],
    ["an empty array", { raw: "[]" }, 400, "body must hold at least one product"],
    [
      "101 products",
      { raw: JSON.stringify(Array.from({ length: 101 }, () => ({ title: "t", price: 1 }))) },
      413,
      "at most 100 products per request",
    ],
  ])("answers %s with the envelope", async (_, init, status, error) => {
    const r = await call("POST", "/v1/products", init);
    expect(r.status).toBe(status);
    expect(r.headers.get("content-type")).toMatch(/^application\/json/);
    expect(r.json).toMatchObject({ code: status, error });
  });

  it("answers a body that is not UTF-8 with the envelope, and reads the next body as before", async () => {
    const send = (body: Uint8Array) =>
      app.request(
        "/v1/products",
        { method: "POST", headers: { authorization: basic(KEY), "content-type": "application/json" }, body },
        env,
      );
    const json = new TextEncoder().encode(JSON.stringify({ title: "Å", price: 1 }));
    // A lone continuation byte, then a lead byte cut short at the end: the decoder must not carry
    // the cut sequence over to the next request (one decoder serves the isolate).
    for (const bad of [Uint8Array.of(...json.slice(0, 10), 0x80, ...json.slice(10)), Uint8Array.of(...json, 0xc3)]) {
      const r = await send(bad);
      expect(r.status).toBe(400);
      expect(await r.json()).toMatchObject({ code: 400, error: "request body is not valid UTF-8" });
    }
    const ok = await send(json);
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { products: { title: string }[] }).products[0].title).toBe("Å");
  });

  it("reads a missing Content-Type as JSON and accepts charset parameters", async () => {
    const sku = uid();
    const bare = await call("POST", "/v1/products", { raw: JSON.stringify({ title: "A", price: 1, sku }) });
    expect(bare.status).toBe(200);
    const charset = await call("POST", "/v1/products", {
      raw: JSON.stringify({ title: "B", price: 1 }),
      headers: { "content-type": "application/json; charset=utf-8" },
    });
    expect(charset.status).toBe(200);
  });

  it("accepts JSON nested exactly 32 levels deep (it then fails validation, not parsing)", async () => {
    const r = await call("POST", "/v1/products", {
      raw: JSON.stringify({ title: "t", price: 1, metadata: JSON.parse(`{"a":${nested(30)}}`) }),
    });
    expect(r.status).toBe(200);
  });

  it("counts depth outside strings only", () => {
    expect(jsonDepth('{"a": "[[[[{{{{"}')).toBe(1);
    expect(jsonDepth('["\\"[", [1]]')).toBe(2);
  });

  it("counts depth as a character-by-character scan does, on any text", () => {
    // The scan jsonDepth replaced (it skips strings natively now): the reference for its result.
    const reference = (text: string) => {
      let depth = 0;
      let max = 0;
      let inString = false;
      for (let i = 0; i < text.length; i++) {
        const ch = text.charCodeAt(i);
        if (inString) {
          if (ch === 92) i++;
          else if (ch === 34) inString = false;
        } else if (ch === 34) inString = true;
        else if (ch === 91 || ch === 123) {
          if (++depth > max) max = depth;
        } else if (ch === 93 || ch === 125) depth--;
      }
      return max;
    };
    const piece = fc.constantFrom("[", "]", "{", "}", '"', "\\", "\\\\", '\\"', "a", ":", ",", "é", "😀", " ");
    fc.assert(
      fc.property(
        fc.oneof(
          fc.array(piece, { maxLength: 60 }).map((p) => p.join("")),
          fc.json(),
          fc.string(),
        ),
        (text) => {
          expect(jsonDepth(text)).toBe(reference(text));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("answers an unknown route with a JSON 404", async () => {
    const r = await get("/v1/nothing-here");
    expect(r.status).toBe(404);
    expect(r.json).toEqual({ code: 404, error: "no route GET /v1/nothing-here" });
  });

  it("reports unknown fields as notices and does not store them", async () => {
    const r = await post("/v1/products", {
      title: "T",
      price: 1,
      colour: "red",
      images: [{ url: "https://img.example/u.jpg", size: 3 }],
    });
    expect(r.status).toBe(200);
    expect(r.json.notices).toEqual(["ignored unknown field colour", "ignored unknown field images[0].size"]);
    expect(r.json.products[0]).not.toHaveProperty("colour");
    expect(r.json.products[0].images).toEqual([{ url: "https://img.example/u.jpg" }]);
  });

  it("gives every response an X-Request-Id, echoing a valid incoming one", async () => {
    const fresh = await get("/health");
    expect(fresh.headers.get("x-request-id")).toMatch(/^[\w-]{16,}$/);
    const echoed = await get("/health", { headers: { "x-request-id": "abc-123" } });
    expect(echoed.headers.get("x-request-id")).toBe("abc-123");
    const refused = await get("/health", { headers: { "x-request-id": "bad id with spaces" } });
    expect(refused.headers.get("x-request-id")).not.toBe("bad id with spaces");
    const error = await get("/v1/nowhere");
    expect(error.headers.get("x-request-id")).toBeTruthy();
  });

  it("never answers with SQL, table names or a stack", async () => {
    // A body that reaches the database with hostile text in every string field.
    const r = await post("/v1/products", { title: "'); DROP TABLE products; --", price: 1, sku: "' OR 1=1 --" });
    expect(r.status).toBe(200);
    const dup = await post("/v1/products", { title: "again", price: 1, sku: "' OR 1=1 --" });
    expect(dup.status).toBe(409);
    expect(dup.text).not.toMatch(/SQLITE|D1_|constraint|skus\.|at \w+ \(/i);
  });
});

describe("an oversized chunked body (docs/api.md, Conventions)", () => {
  /** A streamed body of `total` bytes (endless when Infinity) that counts what was read of it. */
  function streamed(total: number) {
    const chunk = new Uint8Array(64 * 1024).fill(0x20);
    const seen = { pulled: 0, cancelled: false };
    const body = new ReadableStream<Uint8Array>({
      pull(ctl) {
        if (seen.pulled >= total) return ctl.close();
        seen.pulled += chunk.byteLength;
        ctl.enqueue(chunk);
      },
      cancel() {
        seen.cancelled = true;
      },
    });
    return { body, seen };
  }
  const send = (body: ReadableStream<Uint8Array>) =>
    app.request(
      "/v1/products",
      {
        method: "POST",
        headers: { authorization: basic(KEY), "content-type": "application/json" },
        body,
        duplex: "half",
      } as RequestInit,
      env,
    );

  it("is read to its end before the 413, so the connection stays usable", async () => {
    const { body, seen } = streamed(3 * 1024 * 1024);
    const r = await send(body);
    expect(r.status).toBe(413);
    expect(await r.json()).toEqual({ code: 413, error: "request body is larger than 1 MiB" });
    expect(seen.pulled).toBe(3 * 1024 * 1024);
    expect(seen.cancelled).toBe(false);
  });

  it("an endless one is cancelled after MAX_DRAIN_BYTES", async () => {
    const { body, seen } = streamed(Number.POSITIVE_INFINITY);
    const r = await send(body);
    expect(r.status).toBe(413);
    expect(seen.cancelled).toBe(true);
    expect(seen.pulled).toBeGreaterThan(MAX_DRAIN_BYTES);
    expect(seen.pulled).toBeLessThan(MAX_DRAIN_BYTES + 1024 * 1024);
  });
});
