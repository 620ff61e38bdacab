import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { wrapD1 } from "./d1-wrap";
import { answers, type Case, type Form, slugOf } from "./fixtures/forms";
import { type Json, product, size } from "./fixtures/sizes";
import { put, uid } from "./helpers";

// A product from before slugs with a variant list beside it, in the plan
// (src/products/update/plan.ts): the batch meets the missing slug, the
// read that words it derives one from the title, and the batch is written again with it. Each case
// pins its answer, the slug written and its round trips (./fixtures/forms.ts).

/** A product from before slugs: it gets one on its first change, derived from its title. */
function slugless(): [string, Form][] {
  const before = async (c: Case) => {
    await env.DB.prepare("UPDATE products SET slug = NULL WHERE id = ?").bind(c.id).run();
  };
  const form = (body: (c: Case) => Json, status: number, calls: number, slug = /^refused(-\d+)?$/): Form => ({
    before,
    body: (c) => ({ product_id: c.id, ...body(c) }),
    status,
    ...(status === 200 ? { written: (p: Json) => expect(p.slug).toMatch(slug) } : {}),
    calls,
  });
  // Its first batch meets the missing slug; the read that finds it derives one (after the lean
  // read, where the plan gave no rows), and the batch is written again with it.
  return [
    ["a sync of a product without a slug", form(() => ({ variants: { sync: [size("s", { qty: 5 })] } }), 200, 4)],
    ["an add to a product without a slug", form(() => ({ variants: { add: [size("xl")] } }), 200, 3)],
    [
      "an update of a product without a slug, with a title",
      form(
        (c) => ({ title: "Newly Titled", variants: { update: [{ variant_id: c.v[0], qty: 3 }] } }),
        200,
        4,
        /^newly-titled(-\d+)?$/,
      ),
    ],
    ["an empty sync of a product without a slug", form(() => ({ variants: { sync: [] } }), 200, 3)],
    [
      "a list beside slug: null, of a product without a slug",
      // The stored title read first (as for any product).
      form(() => ({ slug: null, variants: { add: [size("xl")] } }), 200, 2),
    ],
    [
      "a list beside a slug, of a product without one",
      form(
        (c) => ({
          slug: slugOf(c.p),
          variants: { add: [size("xl")] },
        }),
        200,
        1,
        /^[sj]-/,
      ),
    ],
    [
      "a refused sync of a product without a slug",
      {
        ...form(() => ({ variants: { sync: [size("s"), size("s")] } }), 409, 5),
        errors: () => ["variants.sync[1]: same option values as variants.sync[0]"],
      },
    ],
  ];
}

describe("a variant list of a product without a slug", () => {
  it("keeps a slug another write gives a product without one between the read and the batch", async () => {
    const p = `${uid("C")}-`;
    const made = await product(p);
    await env.DB.prepare("UPDATE products SET slug = NULL WHERE id = ?").bind(made.product_id).run();
    const slug = slugOf(p);
    // Calls: the read that finds no slug, then the batch with the one derived, which the guard
    // refuses (a slug was given meanwhile), then the read and batch again.
    const w = wrapD1({
      before: async (call) => {
        if (call === 2) {
          await env.DB.prepare("UPDATE products SET slug = ? WHERE id = ?").bind(slug, made.product_id).run();
        }
      },
    });
    const r = await put(
      "/v1/products",
      { product_id: made.product_id, variants: { sync: [size("m", { qty: 4 })] } },
      { env: { DB: w.db } },
    );
    expect(r.status, r.text).toBe(200);
    expect(r.json.products[0]).toMatchObject({ slug, variants: [{ variant_option1_value: "m", qty: 4 }] });
    expect(w.counts.calls).toBe(4);
  });

  it.each(slugless())("%s", async (_name, form) => {
    await answers(form);
  });
});
