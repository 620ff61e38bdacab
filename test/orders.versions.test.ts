import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { scheduled } from "../src/scheduled";
import { get, post, quietEnv, uid } from "./helpers";
import { change, order, stocked } from "./orders-put-helpers";

// Every orders batch that moves stock moves the versions of the products it moves and the
// catalogue's (docs/stock.md: a product's ETag changes when it sells, and only then), itself:
// this file's database has no per-row version triggers on products and variants, so only the
// orders' own statements can move them.
beforeAll(async () => {
  const names = [
    "catalog_products_update",
    "catalog_variants_update",
    "product_version_update",
    "product_version_variant_update",
  ];
  await env.DB.batch(names.map((n) => env.DB.prepare(`DROP TRIGGER IF EXISTS ${n}`)));
});

const etag = async (id: number) => (await get(`/v1/products/${id}`)).headers.get("ETag");
const catalogue = async () =>
  (await env.DB.prepare("SELECT version FROM catalog_version WHERE id = 1").first<{ version: number }>())?.version;

/** Runs `act`, then says whose ETag moved among `ids` and whether the catalogue's version did. */
async function moved(ids: number[], act: () => Promise<unknown>) {
  const before = await Promise.all(ids.map(etag));
  const cat = await catalogue();
  await act();
  const after = await Promise.all(ids.map(etag));
  return { products: ids.filter((_, i) => before[i] !== after[i]), catalogue: (await catalogue()) !== cat };
}

describe("versions moved by orders", () => {
  // Each case prepares what it needs, then answers the request whose moves are measured.
  it.each([
    ["a create", async (a: Sku) => () => order([{ sku: a.sku, qty: 1 }])],
    [
      "a line edit",
      async (a: Sku, b: Sku) => {
        const id = await order([{ sku: b.sku, qty: 1 }]);
        return () => change([{ order_id: id, products_add: [{ sku: a.sku, qty: 1 }] }]);
      },
    ],
    [
      "a cancel with restock",
      async (a: Sku) => {
        const id = await order([{ sku: a.sku, qty: 2 }]);
        return () => change([{ order_id: id, status: "cancelled" }]);
      },
    ],
    [
      "the unpaid hold",
      async (a: Sku) => {
        const id = await order([{ sku: a.sku, qty: 2 }]);
        await env.DB.prepare("UPDATE orders SET created_at = 0 WHERE id = ?1").bind(id).run();
        return () => scheduled({ ...quietEnv, UNPAID_ORDER_HOLD_MINUTES: "30" });
      },
    ],
  ] as const)(
    "%s moves the product whose stock it moves and the catalogue, not another product",
    async (_, prepare) => {
      const a = await stocked(50);
      const b = await stocked(50);
      const act = await prepare(a, b);
      expect(await moved([a.id, b.id], act)).toEqual({ products: [a.id], catalogue: true });
    },
  );

  it("a payment moves no stock and no version", async () => {
    const a = await stocked(5);
    const id = await order([{ sku: a.sku, qty: 1 }]);
    expect(await moved([a.id], () => change([{ order_id: id, status: "paid" }]))).toEqual({
      products: [],
      catalogue: false,
    });
  });

  it("an order of variants moves its product once", async () => {
    const sku = uid("VV");
    const p = await post("/v1/products", {
      title: "Sized",
      price: 100,
      variants: {
        add: ["S", "M"].map((v) => ({
          variant_option1_name: "Size",
          variant_option1_value: v,
          sku: `${sku}-${v}`,
          qty: 9,
        })),
      },
    });
    const id = p.json.products[0].product_id as number;
    const lines = ["S", "M"].map((v) => ({ sku: `${sku}-${v}`, qty: 1 }));
    expect(await moved([id], () => order(lines))).toEqual({ products: [id], catalogue: true });
  });
});

type Sku = { sku: string; id: number };
