// The catalogue and orders the bench seeds (through the API where it can), and the ids the cases
// need.
import { garmentVariants, SIZES } from "../../test/fixtures/garments.mjs";
import { request, variantEntries } from "./requests.mjs";

/** @typedef {import("./requests.mjs").Target} Target */

export const ORDER_PRODUCTS = 40; // x 3 variants: 120 SKUs for order lines
// The contract's variants per product (src/products/schema.ts MAX_VARIANTS, docs/products.md, "Limits").
export const MAX_VARIANTS = 2048;
export const SYNC_SIZES = [10, 100, MAX_VARIANTS];

/** @param {Target} t @param {unknown} body */
async function create(t, body) {
  const r = await request(t, "POST", "/v1/products", body);
  if (r.status !== 200)
    throw new Error(`seeding failed: POST /v1/products answered ${r.status} ${r.text.slice(0, 500)}`);
  return /** @type {{ product_id: number }[]} */ (r.json.products);
}

/**
 * Seeds the catalog through the API (POST /v1/products, which is implemented) and returns the
 * ids the cases need.
 * @param {Target} t
 */
export async function seed(t) {
  // First, so that they are the catalogue's first 100 products: offset=0 reads exactly them.
  await seedShopWindow(t);
  await seedOrderCatalog(t);
  /** @type {Record<number, number>} */
  const syncIds = {};
  /** @type {Record<number, number[]>} */
  const syncVariantIds = {};
  for (const n of SYNC_SIZES) {
    const [p] = await create(t, {
      title: `Sync ${n}`,
      sku: `SYNC${n}`,
      price: 100,
      variants: { add: variantEntries(`S${n}`, n, 10) },
    });
    syncIds[n] = p.product_id;
    syncVariantIds[n] = /** @type {{ variants: { variant_id: number }[] }} */ (/** @type {unknown} */ (p)).variants.map(
      (v) => v.variant_id,
    );
  }
  // The lists synced again unchanged and with one change: products of their own, so that no other
  // case's writes make "unchanged" untrue.
  /** @param {string} prefix */
  const syncProduct = async (prefix) => {
    const [p] = await create(t, {
      title: `Sync ${prefix}`,
      sku: `SYNC-${prefix}`,
      price: 100,
      variants: { add: variantEntries(prefix, MAX_VARIANTS, SYNC_QTY) },
    });
    return p.product_id;
  };
  const sameId = await syncProduct(SAME_PREFIX);
  const oneId = await syncProduct(ONE_PREFIX);
  await seedLargeOrders(t);
  const pages = await seedPages(t);
  // Last, so that the pages' offsets above do not move.
  await seedStock(t);
  const schema = await request(t, "GET", "/__bench/schema");
  if (schema.status !== 200)
    throw new Error(`seeding failed: /__bench/schema answered ${schema.status} ${schema.text}`);
  return {
    syncIds,
    syncVariantIds,
    sameId,
    oneId,
    ...pages,
    ...(await seedOrders(t)),
    ...(await seedKeys(t)),
    schema: /** @type {import("./least.mjs").Schema} */ (schema.json),
  };
}

/** The qty every variant of the seeded sync products has. */
export const SYNC_QTY = 10;
export const SAME_PREFIX = "SS";
export const ONE_PREFIX = "SO";

// The stock tools' catalogues (bench/worker/seed.ts, /seed-stock): the 5,000 SKUs a push sends
// (PUSH.products of PUSH.variants, SKU PU<p>-<k>, qty PUSH.qty) and the 100-SKU batches' own
// (BATCH_SKUS: 20 products of 10, SB<p>-<k>, qty 5; the first 10 products for the batch that changes
// nothing, the next 10 for the one that changes 2).
export const PUSH = { prefix: "PU", products: 500, variants: 10, qty: 100, perRequest: 100 };
export const BATCH_SKUS = { prefix: "SB", products: 20, variants: 10, qty: 5 };

/** @param {Target} t */
async function seedStock(t) {
  for (const s of [PUSH, BATCH_SKUS]) {
    const r = await request(
      t,
      "POST",
      `/__bench/seed-stock?prefix=${s.prefix}&products=${s.products}&variants=${s.variants}&qty=${s.qty}`,
    );
    if (r.status !== 200) throw new Error(`seeding failed: /__bench/seed-stock answered ${r.status} ${r.text}`);
  }
}

/**
 * What the order and stock cases sell and set: 40 products of 3 SKUs (O<p>-S/M/L, a million each)
 * and the stock product (STK-0 to STK-2); the throughput phase seeds only these.
 * @param {Target} t
 */
export async function seedOrderCatalog(t) {
  const orderProducts = Array.from({ length: ORDER_PRODUCTS }, (_, p) => ({
    title: `Order product ${p}`,
    sku: `OP${p}`,
    price: 199,
    variants: {
      add: ["S", "M", "L"].map((s) => ({
        ...variantEntries(`O${p}`, 1, 1_000_000)[0],
        sku: `O${p}-${s}`,
        variant_option1_value: s,
      })),
    },
  }));
  await create(t, orderProducts);
  await create(t, { title: "Stock product", sku: "STK", price: 99, variants: { add: variantEntries("STK", 3, 10) } });
}

// The products window that was refused (docs/modelled-reads.md, "Paging"): 100 products, two
// of them of 2,048 variants named as a shop names them (test/fixtures/garments.mjs, shared with
// the replay test), the others of 1 to 6 sizes; through the API.
/** A garment of 2,048 variants as a shop writes it. @param {string} kind @param {string} title @param {number} price */
const garment = (kind, title, price) => ({
  title,
  sku: kind,
  price,
  tax_rate: 25,
  description:
    `${title}: a wardrobe staple cut from certified fibres, garment-dyed for a soft, lived-in hand. ` +
    "Reinforced shoulder seams, a tagless neck label and a double-stitched hem. Machine wash at 30 °C, inside out.",
  seo_title: `${title} | Nordic Basics`,
  images: [1, 2, 3].map((i) => ({
    url: `https://cdn.nordicbasics.example/${kind.toLowerCase()}-${i}.jpg`,
    alttext: `${title}, view ${i}`,
  })),
  categories: [["Clothes", kind === "TSHIRT" ? "T-shirts" : "Hoodies"]],
  variants: { add: garmentVariants(kind, price) },
});

/** @param {number} i */
const smallProduct = (i) => ({
  title: `Everyday socks ${i}`,
  sku: `SOCK-${i}`,
  price: 99,
  description: "Combed cotton, reinforced heel and toe.",
  categories: [["Clothes", "Socks"]],
  variants: {
    add: SIZES.slice(0, 1 + (i % 6)).map((size) => ({
      sku: `SOCK-${i}-${size}`,
      variant_option1_name: "Size",
      variant_option1_value: size,
      qty: 10 + (i % 9),
    })),
  },
});

/** @param {Target} t */
async function seedShopWindow(t) {
  await create(
    t,
    Array.from({ length: 33 }, (_, i) => smallProduct(i)),
  );
  await create(t, garment("TSHIRT", "Organic T-shirt Classic", 299));
  await create(
    t,
    Array.from({ length: 33 }, (_, i) => smallProduct(33 + i)),
  );
  await create(t, garment("HOODIE", "Heavyweight Hoodie", 799));
  await create(
    t,
    Array.from({ length: 32 }, (_, i) => smallProduct(66 + i)),
  );
}

// Orders pages at the sizes that were cut or refused (docs/modelled-reads.md, "Paging"): 46
// orders, 24 of them of 500 lines, the 500-line ones among the others; and the largest page there
// is, 500 orders of 500 lines. Each set paid in a window of its own (LARGE_ORDERS, WORST_ORDERS).
export const LARGE_ORDERS = {
  paid: 3_000_000_000,
  counts: Array.from({ length: 46 }, (_, i) => (i % 2 === 0 || i === 45 ? 500 : 2)),
};
export const WORST_ORDERS = { paid: 3_100_000_000, counts: Array.from({ length: 500 }, () => 500) };
/** The date_paid window of a set: its orders and no other. @param {{ paid: number, counts: number[] }} set */
export const paidWindow = (set) => `from_date_paid=${set.paid}&to_date_paid=${set.paid + set.counts.length}`;

/** @param {Target} t */
async function seedLargeOrders(t) {
  for (const set of [LARGE_ORDERS, WORST_ORDERS]) {
    const q = `counts=${JSON.stringify(set.counts)}&paid=${set.paid * 1000}`;
    const r = await request(t, "POST", `/__bench/seed-orders-large?${q}`);
    if (r.status !== 200) throw new Error(`seeding failed: /__bench/seed-orders-large answered ${r.status} ${r.text}`);
  }
}

// The largest modelled pages (docs/modelled-reads.md): the 500 products after those seeded
// above (which include the 2,048-variant sync product) are PAGE_BIG products of 2,048 variants and
// small ones of 3; 500 orders of 4 lines.
const PAGE_BIG = 1;
const PAGE_SIZE = 500;

/** @param {Target} t */
async function seedPages(t) {
  const before = await request(t, "GET", "/v1/products/count");
  const small = PAGE_SIZE - PAGE_BIG;
  const r = await request(t, "POST", `/__bench/seed-pages?big=${PAGE_BIG}&small=${small}&orders=${PAGE_SIZE}`);
  if (r.status !== 200) throw new Error(`seeding failed: /__bench/seed-pages answered ${r.status} ${r.text}`);
  return { pageBig: /** @type {number[]} */ (r.json.big), pageOffset: Number(before.json.count) };
}

/**
 * A stored secret key and a publishable key (docs/keys.md), for the cases that authenticate with
 * them instead of the bootstrap API_KEY.
 * @param {Target} t
 */
async function seedKeys(t) {
  const secret = await request(t, "POST", "/v1/keys", {
    name: "bench secret",
    type: "secret",
    scopes: ["products:read", "orders:write"],
  });
  const publishable = await request(t, "POST", "/v1/keys", { name: "bench storefront", type: "publishable" });
  if (secret.status !== 201 || publishable.status !== 201)
    throw new Error(`seeding failed: POST /v1/keys answered ${secret.status}/${publishable.status}`);
  return {
    secretKey: /** @type {string} */ (secret.json.key),
    publishableKey: /** @type {string} */ (publishable.json.key),
  };
}

/** Orders to change with PUT /v1/orders (status and cancel cases, and their baselines). */
export const CANCEL_ORDERS = 200;

/** @param {Target} t @param {number} n @returns {Promise<number[]>} */
async function createOrders(t, n) {
  /** @type {number[]} */
  const ids = [];
  for (let done = 0; done < n; done += 100) {
    const body = Array.from({ length: Math.min(100, n - done) }, (_, i) => ({
      order_id: "create",
      products: [
        { sku: `O${i % ORDER_PRODUCTS}-S`, qty: 1 },
        { sku: `O${(i + 1) % ORDER_PRODUCTS}-M`, qty: 2 },
        { sku: `O${(i + 2) % ORDER_PRODUCTS}-L`, qty: 1 },
      ],
    }));
    const r = await request(t, "POST", "/v1/orders", body);
    if (r.status !== 200)
      throw new Error(`seeding failed: POST /v1/orders answered ${r.status} ${r.text.slice(0, 500)}`);
    for (const x of Object.values(r.json.results)) ids.push(/** @type {any} */ (x).order_id);
  }
  return ids;
}

/** @param {Target} t */
async function seedOrders(t) {
  const [statusOrder, baselineStatusOrder] = await createOrders(t, 2);
  return {
    statusOrder,
    baselineStatusOrder,
    cancelOrders: await createOrders(t, CANCEL_ORDERS),
    baselineCancelOrders: await createOrders(t, CANCEL_ORDERS),
  };
}
