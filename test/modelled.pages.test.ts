import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { ORDER_CHUNK_BYTES, ORDER_LIMIT_MAX } from "../src/orders/list";
import { PRODUCT_CHUNK_BYTES } from "../src/products/list";
import { wrapD1 } from "./d1-wrap";
import { get, uid } from "./helpers";

// Products and orders pages are never cut nor refused (docs/modelled-reads.md, "Paging"): a
// page holds exactly `limit` items unless it is the last, whatever its bytes; a large one is
// streamed in chunks, a D1 round trip each.

const seq = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => i));
const linkOf = (r: { headers: Headers }) => {
  const link = r.headers.get("link");
  return link ? new URL(/^<([^>]+)>; rel="next"$/.exec(link)?.[1] as string) : undefined;
};

describe("products: every page whole, streamed past a chunk", () => {
  it("answers a page whole, whatever its variants, with each product's variants in order", async () => {
    const tag = uid("FULL");
    // 3 products of 700 variants (three parts each on the way from D1) between small ones.
    await env.DB.batch([
      env.DB.prepare(
        `INSERT INTO products (title, price, option_names, created_at, updated_at)
         SELECT ?2 || ' ' || value, 100, '["Size","Colour","Fit","Cut","Sleeve"]', 0, 0 FROM json_each(?1)`,
      ).bind(seq(9), tag),
      env.DB.prepare(
        `INSERT INTO variants (product_id, option1_value, option2_value, option3_value, option4_value,
           option5_value, qty, position, price, created_at, updated_at)
         SELECT p.id, 'S' || j.value, 'red', 'slim', 'v', 'long', 1, 700 - j.value, j.value, 0, 0
         FROM products AS p, json_each(?1) AS j WHERE p.title IN (?2 || ' 1', ?2 || ' 4', ?2 || ' 7')`,
      ).bind(seq(700), tag),
    ]);
    const r = await get(`/v1/products?search=${tag}&limit=9&offset=0&include_details=true`);
    expect(r.status).toBe(200);
    expect(r.json.map((p: any) => p.variants.length)).toEqual([0, 700, 0, 0, 700, 0, 0, 700, 0]);
    const v = r.json[1].variants;
    // By position: the last inserted comes first.
    expect(v[0].values).toEqual([
      { name: "Size", val: "S699" },
      { name: "Colour", val: "red" },
      { name: "Fit", val: "slim" },
      { name: "Cut", val: "v" },
      { name: "Sleeve", val: "long" },
    ]);
    const cents = Array.from({ length: 700 }, (_, i) => 699 - i);
    expect(v.map((x: any) => x.price)).toEqual(
      cents.map((c) => `${Math.trunc(c / 100)}.${String(c % 100).padStart(2, "0")}`),
    );
    expect(r.json[1].qty).toBe("700");
    expect(linkOf(r)).toBeUndefined();
  });

  // Six products with a description of 600 KB each: 3.6 MB with details, past the old 2 MiB bound
  // and a chunk; a few hundred bytes each without.
  const each = 600_000;
  async function sixBig(tag: string) {
    await env.DB.prepare(
      `INSERT INTO products (title, price, description, created_at, updated_at)
       SELECT ?2 || ' ' || value, 100, value || ' ' || hex(zeroblob(?3 / 2)), 0, 0 FROM json_each(?1)`,
    )
      .bind(seq(6), tag, each)
      .run();
  }

  it.each([
    ["&offset=0", true],
    ["", true],
    ["&offset=0", false],
    ["", false],
  ])("answers a page past 2 MiB whole and in id order (search%s, include_details=%s)", async (offset, details) => {
    const tag = uid("BIG");
    await sixBig(tag);
    const { db, counts } = wrapD1();
    const r = await get(`/v1/products?search=${tag}&limit=6${offset}&include_details=${details}`, {
      env: { DB: db },
    });
    expect(r.status).toBe(200);
    expect(r.json.map((p: any) => p.title)).toEqual([0, 1, 2, 3, 4, 5].map((i) => `${tag} ${i}`));
    expect(linkOf(r)).toBeUndefined();
    const bytes = new TextEncoder().encode(r.text).length;
    if (details) {
      for (const [i, p] of r.json.entries()) expect(p.description).toBe(`${i} ${"0".repeat(each)}`);
      expect(bytes).toBeGreaterThan(2.5 * 1024 * 1024);
      // Streamed: one round trip for the page and its first chunk, then one a chunk.
      expect(r.headers.get("content-length")).toBeNull();
      expect(counts.calls).toBeGreaterThanOrEqual(Math.max(2, Math.floor(bytes / PRODUCT_CHUNK_BYTES)));
      expect(counts.statementsPerCall.slice(1).every((n) => n === 1)).toBe(true);
    } else {
      expect(r.json[0].description).toBeUndefined();
      expect(counts.calls).toBe(1);
    }
  });

  it("links to the next page after a streamed one, by offset or by cursor, every product once", async () => {
    const tag = uid("LNK");
    await sixBig(tag);
    for (const first of ["limit=4&offset=0", "limit=4"]) {
      const a = await get(`/v1/products?search=${tag}&include_details=true&${first}`);
      expect(a.json, first).toHaveLength(4);
      const next = linkOf(a);
      expect(next?.searchParams.get(first.includes("offset") ? "offset" : "cursor"), first).toBeTruthy();
      const b = await get(`/v1/products${next?.search}`);
      expect(
        b.json.map((p: any) => p.title),
        first,
      ).toEqual([`${tag} 4`, `${tag} 5`]);
      expect(b.json[1].description, first).toHaveLength(each + 2);
      expect(linkOf(b), first).toBeUndefined();
    }
  });

  it("breaks the answer off, never a short page, when a product of a streamed page is deleted meanwhile", async () => {
    const tag = uid("DEL");
    await sixBig(tag);
    const last = await env.DB.prepare("SELECT id FROM products WHERE title = ?1")
      .bind(`${tag} 5`)
      .first<{ id: number }>();
    // After the first round trip fixed the page, before a later chunk is read.
    const { db } = wrapD1({
      before: async (call) => {
        if (call === 2) await env.DB.prepare("DELETE FROM products WHERE id = ?1").bind(last?.id).run();
      },
    });
    await expect(
      get(`/v1/products?search=${tag}&limit=6&offset=0&include_details=true`, { env: { DB: db } }),
    ).rejects.toThrow(/removed while it was read/);
    // Asked again, the page is whole without it.
    const again = await get(`/v1/products?search=${tag}&limit=6&offset=0&include_details=true`);
    expect(again.json.map((p: any) => p.title)).toEqual([0, 1, 2, 3, 4].map((i) => `${tag} ${i}`));
  });
});

describe("a product larger than a chunk on its own", () => {
  it("is answered whole in a whole page, and the products after it too", async () => {
    const tag = uid("HUGE");
    const huge = 2 * 1024 * 1024;
    await env.DB.prepare(
      `INSERT INTO products (title, price, description, created_at, updated_at)
       SELECT ?2 || ' ' || value, 100, iif(value = 1, hex(zeroblob(?3 / 2)), 'small'), 0, 0 FROM json_each(?1)`,
    )
      .bind(seq(3), tag, huge)
      .run();
    for (const q of ["limit=3&offset=0", "limit=3"]) {
      const r = await get(`/v1/products?search=${tag}&include_details=true&${q}`);
      expect(r.status, q).toBe(200);
      expect(
        r.json.map((p: any) => p.title),
        q,
      ).toEqual([0, 1, 2].map((i) => `${tag} ${i}`));
      expect(r.json[1].description, q).toHaveLength(huge);
      expect(r.json[2].description, q).toBe("small");
    }
    const one = await get(`/v1/products?search=${tag}&limit=1&offset=1&include_details=true`);
    expect(one.json.map((p: any) => p.title)).toEqual([`${tag} 1`]);
  });
});

describe("orders: every page whole, streamed past a chunk", () => {
  it("answers the largest page whole: 500 orders with their lines, in one round trip", async () => {
    const tag = uid("O500");
    await env.DB.batch([
      env.DB.prepare(
        `INSERT INTO orders (token, currency, subtotal, total, note, created_at, updated_at)
         SELECT ?2 || value, 'SEK', 100, 100, ?2, 4e12 + value, 4e12 + value FROM json_each(?1)`,
      ).bind(seq(ORDER_LIMIT_MAX), tag),
      env.DB.prepare(
        `INSERT INTO order_lines (order_id, position, product_id, title, qty, unit_price, tax_rate)
         SELECT o.id, j.value, 1, 'line ' || j.value, 1, 50, 25 FROM orders AS o, json_each('[0,1,2,3]') AS j
         WHERE o.note = ?1`,
      ).bind(tag),
    ]);
    // Created in 2096: from_status_date picks them out (an order's status date is its creation until it changes).
    const { db, counts } = wrapD1();
    const r = await get(
      `/v1/orders?from_status_date=4000000000&limit=${ORDER_LIMIT_MAX}&offset=0&include_details=true`,
      { env: { DB: db } },
    );
    expect(r.status).toBe(200);
    expect(r.json).toHaveLength(ORDER_LIMIT_MAX);
    for (const o of r.json)
      expect(o.products.map((l: any) => l.title)).toEqual(["line 0", "line 1", "line 2", "line 3"]);
    expect(linkOf(r)).toBeUndefined();
    expect(counts.calls).toBe(1);
  });

  // Each test's orders are created after every earlier test's (in 2128 and on), so from_status_date
  // picks out its own.
  let era = 5e9;
  const nextEra = () => {
    era += 1e6;
    return era * 1000;
  };

  // Six orders of 500 lines with long titles, about 0.45 MB each: 2.7 MB in all, past the old
  // 2 MiB bound and several chunks.
  async function sixBig(tag: string, at: number) {
    const title = 800;
    await env.DB.batch([
      env.DB.prepare(
        `INSERT INTO orders (token, currency, subtotal, total, note, created_at, updated_at)
         SELECT ?2 || value, 'SEK', 100, 100 + value, ?2, ?3 + value, ?3 + value FROM json_each(?1)`,
      ).bind(seq(6), tag, at),
      env.DB.prepare(
        `INSERT INTO order_lines (order_id, position, product_id, title, qty, unit_price, tax_rate)
         SELECT o.id, j.value, 1, j.value || ' ' || substr(hex(zeroblob(?3)), 1, ?3), 1, 50, 25
         FROM orders AS o, json_each(?1) AS j WHERE o.note = ?2`,
      ).bind(seq(500), tag, title),
    ]);
  }

  it.each([
    ["sort_order=desc", "&offset=0"],
    ["sort_order=asc", "&offset=0"],
    ["order_by=price&sort_order=desc", "&offset=0"],
    ["sort_order=desc", ""],
    ["order_by=date&sort_order=asc", ""],
    ["sort_order=desc&include_details=true", "&offset=0"],
    ["sort_order=asc&include_details=true", ""],
  ])("answers a page past 2 MiB whole and in its order (%s%s), streamed a chunk a round trip", async (sort, offset) => {
    const tag = uid("OBIG");
    const at = nextEra();
    await sixBig(tag, at);
    const { db, counts } = wrapD1();
    const r = await get(`/v1/orders?from_status_date=${at / 1000}&${sort}&limit=6${offset}`, { env: { DB: db } });
    expect(r.status).toBe(200);
    const bytes = new TextEncoder().encode(r.text).length;
    expect(bytes).toBeGreaterThan(2.5 * 1024 * 1024);
    // Streamed: one round trip for the page and its first chunk, then one a chunk.
    expect(counts.calls).toBeGreaterThanOrEqual(Math.floor(bytes / ORDER_CHUNK_BYTES));
    expect(counts.statementsPerCall.slice(1).every((n) => n === 1)).toBe(true);
    expect(r.json).toHaveLength(6);
    for (const o of r.json) {
      expect(o.products).toHaveLength(500);
      expect(o.products.map((l: any) => Number(l.title.split(" ")[0]))).toEqual(
        Array.from({ length: 500 }, (_, i) => i),
      );
    }
    const ids = r.json.map((o: any) => Number(o.order_id));
    expect(new Set(ids).size).toBe(6);
    const sorted = [...ids].sort((a, b) => (sort.includes("asc") ? a - b : b - a));
    expect(ids).toEqual(sorted);
    if (sort.includes("include_details")) expect(r.json[0].customer).toBeTypeOf("object");
    expect(linkOf(r)).toBeUndefined();
  });

  it("breaks off, never ends as a short page, when a chunk's round trip fails", async () => {
    const at = nextEra();
    await sixBig(uid("OFLT"), at);
    // The second D1 call is the first chunk read after the answer started.
    const { db } = wrapD1({ failCall: 2 });
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      await expect(get(`/v1/orders?from_status_date=${at / 1000}&limit=6`, { env: { DB: db } })).rejects.toThrow(
        /injected fault/,
      );
      const line = JSON.parse(String(logged.mock.calls.at(-1)?.[0]));
      expect(line).toMatchObject({ level: "error", msg: "streamed answer broke off" });
      expect(line.requestId).toBeTruthy();
    } finally {
      logged.mockRestore();
    }
  });

  it("links to the next page after a streamed one, by offset or by cursor, every order once", async () => {
    const tag = uid("OLNK");
    const at = nextEra();
    await sixBig(tag, at);
    for (const first of [`limit=4&offset=0`, `limit=4`]) {
      const a = await get(`/v1/orders?from_status_date=${at / 1000}&${first}`);
      expect(a.json, first).toHaveLength(4);
      const next = linkOf(a);
      expect(next?.searchParams.get(first.includes("offset") ? "offset" : "cursor"), first).toBeTruthy();
      const b = await get(`/v1/orders${next?.search}`);
      expect(b.json, first).toHaveLength(2);
      expect(linkOf(b), first).toBeUndefined();
      const ids = [...a.json, ...b.json].map((o: any) => o.order_id);
      expect(new Set(ids).size, first).toBe(6);
    }
  });
});
