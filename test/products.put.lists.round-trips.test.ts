import { describe, expect, it } from "vitest";
import { wrapD1 } from "./d1-wrap";
import { get, post, put, uid } from "./helpers";

// A sync, add or update of one product's variants is planned in one round trip
// (src/products/update/plan.ts); a refusal is worded from a read that runs the same plan
// (src/products/update/plan.ts) and writes nothing. Round trips, exact errors, ETags and
// answers of that one path.

describe("a variant sync or update planned", () => {
  it("takes one round trip for an accepted sync, and writes nothing when it refuses", async () => {
    const prefix = `${uid("R")}-`;
    const p = await post("/v1/products", {
      title: "Round trips",
      price: 100,
      variants: {
        add: ["s", "m", "l"].map((v, i) => ({
          sku: `${prefix}${i}`,
          variant_option1_name: "Size",
          variant_option1_value: v,
          qty: 1,
        })),
      },
    });
    const id = p.json.products[0].product_id;
    const w = wrapD1();
    const ok = await put(
      "/v1/products",
      { product_id: id, variants: { sync: [{ sku: `${prefix}0`, qty: 5 }, { variant_option1_value: "xl" }] } },
      { env: { DB: w.db } },
    );
    expect(ok.status, ok.text).toBe(200);
    expect(w.counts.calls).toBeLessThanOrEqual(2);
    expect(ok.json.products[0].variants.map((v: { sku: string; qty: number }) => [v.sku, v.qty])).toEqual([
      [`${prefix}0`, 5],
      [null, 0],
    ]);
    const before = await get(`/v1/products/${id}`);
    const refused = await put("/v1/products", {
      product_id: id,
      variants: { sync: [{ variant_option1_value: "s" }, { variant_option1_value: "s", qty: 2 }] },
    });
    expect(refused.status).toBe(409);
    expect(refused.json.errors).toEqual(["variants.sync[1]: same option values as variants.sync[0]"]);
    expect((await get(`/v1/products/${id}`)).json).toEqual(before.json);
    // An add in one round trip too, placed after the last variant; one that exists is refused.
    const w2 = wrapD1();
    const added = await put(
      "/v1/products",
      { product_id: id, variants: { add: [{ variant_option1_value: "xxl", sku: `${prefix}9` }] } },
      { env: { DB: w2.db } },
    );
    expect(added.status, added.text).toBe(200);
    expect(w2.counts.calls).toBeLessThanOrEqual(2);
    expect(added.json.products[0].variants.map((v: { sku: string }) => v.sku)).toEqual([
      `${prefix}0`,
      null,
      `${prefix}9`,
    ]);
    const again = await put("/v1/products", { product_id: id, variants: { add: [{ variant_option1_value: "xxl" }] } });
    expect(again.status).toBe(409);
    // Product fields beside the list and an Idempotency-Key: the same one round trip, and a retry
    // with the key answers what the first request did without writing again.
    const key = uid("key");
    const body = {
      product_id: id,
      title: "Retitled",
      price: 250,
      variants: { add: [{ variant_option1_value: "3xl" }] },
    };
    const w3 = wrapD1();
    const keyed = await put("/v1/products", body, { env: { DB: w3.db }, headers: { "idempotency-key": key } });
    expect(keyed.status, keyed.text).toBe(200);
    expect(w3.counts.calls).toBeLessThanOrEqual(2);
    const product = keyed.json.products[0];
    expect([product.title, product.variants.at(-1).price]).toEqual(["Retitled", 250]);
    const replay = await put("/v1/products", body, { headers: { "idempotency-key": key } });
    expect(replay.status).toBe(200);
    expect(replay.json).toEqual(keyed.json);
    expect((await get(`/v1/products/${id}`)).json.variants).toHaveLength(4);
    // A slug beside the list: written in the same batch; one another product has is refused whole.
    const slug = uid("slug").toLowerCase();
    const w4 = wrapD1();
    const slugged = await put(
      "/v1/products",
      { product_id: id, slug, variants: { update: [{ variant_id: product.variants[0].variant_id, qty: 7 }] } },
      { env: { DB: w4.db } },
    );
    expect(slugged.status, slugged.text).toBe(200);
    expect(w4.counts.calls).toBeLessThanOrEqual(2);
    expect([slugged.json.products[0].slug, slugged.json.products[0].variants[0].qty]).toEqual([slug, 7]);
    const other = await post("/v1/products", { title: "Other", price: 1 });
    const taken = await put("/v1/products", {
      product_id: other.json.products[0].product_id,
      slug,
      variants: { add: [{ variant_option1_name: "Size", variant_option1_value: "s" }] },
    });
    expect(taken.status, taken.text).toBe(409);
    expect(taken.json.errors[0]).toMatch(/^slug: /);
    expect((await get(`/v1/products/${other.json.products[0].product_id}`)).json.variants).toEqual([]);
    // disable_minusqty beside the list: a variant the list leaves at a negative qty refuses it whole.
    const minus = await put("/v1/products", {
      product_id: id,
      variants: { update: [{ variant_id: product.variants[1].variant_id, qty: -2 }] },
    });
    expect(minus.status, minus.text).toBe(200);
    const flagged = await put("/v1/products", {
      product_id: id,
      disable_minusqty: 1,
      variants: { update: [{ variant_id: product.variants[0].variant_id, qty: 3 }] },
    });
    expect(flagged.status, flagged.text).toBe(409);
    expect(flagged.json.errors).toEqual([
      `disable_minusqty: stock is negative for variant ${product.variants[1].variant_id}; set their stock first`,
    ]);
    const w5 = wrapD1();
    const fixed = await put(
      "/v1/products",
      { product_id: id, disable_minusqty: 1, variants: { sync: [{ sku: `${prefix}0`, qty: 1 }] } },
      { env: { DB: w5.db } },
    );
    expect(fixed.status, fixed.text).toBe(200);
    expect(w5.counts.calls).toBeLessThanOrEqual(2);
    expect((await get(`/v1/products/${id}`)).json).toMatchObject({ disable_minusqty: "1", variants: [{ qty: 1 }] });
  });

  it("takes the plan for If-Match, a selection by SKU or variant id, an update naming a variant twice and two lists", async () => {
    const prefix = `${uid("M")}-`;
    const p = await post("/v1/products", {
      title: "Moved forms",
      price: 100,
      sku: `${prefix}p`,
      variants: {
        add: ["s", "m"].map((v, i) => ({
          sku: `${prefix}${i}`,
          variant_option1_name: "Size",
          variant_option1_value: v,
        })),
      },
    });
    const id = p.json.products[0].product_id;
    const [v0, v1] = p.json.products[0].variants.map((v: { variant_id: number }) => v.variant_id);
    const send = async (body: unknown, headers: Record<string, string> = {}) => {
      const w = wrapD1();
      const r = await put("/v1/products", body, { env: { DB: w.db }, headers });
      expect(r.status, r.text).toBe(200);
      return { r, perCall: w.counts.statementsPerCall };
    };
    // If-Match: * in the one batch; a tag after a read of its version; the answer's ETag is the new one.
    const any = await send({ product_id: id, variants: { update: [{ variant_id: v0, qty: 1 }] } }, { "if-match": "*" });
    expect(any.perCall).toHaveLength(2);
    const etag = String((await get(`/v1/products/${id}`)).headers.get("etag"));
    expect(any.r.headers.get("etag")).toBe(etag);
    const tagged = await send(
      { product_id: id, variants: { update: [{ variant_id: v0, qty: 2 }] } },
      { "if-match": etag },
    );
    expect(tagged.perCall).toHaveLength(2);
    expect(tagged.r.headers.get("etag")).toBe((await get(`/v1/products/${id}`)).headers.get("etag"));
    const stale = await put(
      "/v1/products",
      { product_id: id, variants: { update: [{ variant_id: v0, qty: 3 }] } },
      {
        headers: { "if-match": etag },
      },
    );
    expect(stale.status).toBe(412);
    // A selection by the product's SKU, by a variant's SKU or by a variant id: a read, then the batch.
    for (const selector of [{ sku: `${prefix}p` }, { sku: `${prefix}1` }, { variant_id: v1 }]) {
      const selected = await send({
        ...selector,
        title: "Selected",
        variants: { update: [{ variant_id: v1, qty: 4 }] },
      });
      expect(selected.perCall).toHaveLength(2);
      expect(selected.r.json.products[0]).toMatchObject({ title: "Selected", variants: [{ qty: 2 }, { qty: 4 }] });
    }
    // An update naming one variant twice, applied in order: later fields win, an adjust moves the count set before it.
    const twice = await send({
      product_id: id,
      variants: {
        update: [
          { variant_id: v0, qty: 10, price: 5 },
          { variant_id: v1, adjust: 1 },
          { variant_id: v0, adjust: -3, sku: `${prefix}x` },
          { variant_id: v1, adjust: 2 },
        ],
      },
    });
    expect(twice.perCall).toHaveLength(2);
    // A head category among the paths given, and a slug derived again from the title given.
    const headed = await send({
      product_id: id,
      title: "Moved Forms Again",
      slug: null,
      categories: [["Shoes"], ["Sale", "Boots"]],
      headcategory_name: "Sale",
      variants: { update: [{ variant_id: v1, qty: 1 }] },
    });
    expect(headed.perCall).toHaveLength(2);
    expect(headed.r.json.products[0]).toMatchObject({
      slug: expect.stringMatching(/^moved-forms-again(-\d+)?$/),
      categories: [["Sale", "Boots"], ["Shoes"]],
    });
    // Three lists in one item, each applied to what the one before left: sync, add, then update.
    const three = await send({
      product_id: id,
      variants: {
        sync: [
          { sku: `${prefix}x`, qty: 1 },
          { variant_option1_value: "l", sku: `${prefix}l` },
        ],
        add: [{ variant_option1_value: "xl", sku: `${prefix}xl` }],
        update: [{ variant_id: v0, adjust: 2 }],
      },
    });
    expect(three.perCall).toHaveLength(2);
    expect(three.r.json.products[0].variants.map((v: { sku: string; qty: number }) => [v.sku, v.qty])).toEqual([
      [`${prefix}x`, 3],
      [`${prefix}l`, 0],
      [`${prefix}xl`, 0],
    ]);
    expect(
      twice.r.json.products[0].variants.map((v: { sku: string; qty: number; price: number }) => [
        v.sku,
        v.qty,
        v.price,
      ]),
    ).toEqual([
      [`${prefix}x`, 7, 5],
      [`${prefix}1`, 7, 100],
    ]);
  });
});
