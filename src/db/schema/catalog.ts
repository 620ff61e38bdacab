import { sql } from "drizzle-orm";
import { check, index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { timestamps } from "./timestamps";

export const products = sqliteTable(
  "products",
  {
    // AUTOINCREMENT: an id is never reused, so order-line snapshots and cursors stay unambiguous.
    id: integer("id").primaryKey({ autoIncrement: true }),
    // Worker-generated token that ties rows created in one batch to this product (docs/security.md, "Guarantees").
    token: text("token").unique(),
    sku: text("sku"),
    title: text("title").notNull(),
    price: integer("price").notNull().default(0),
    beforePrice: integer("before_price"),
    purchasePrice: integer("purchase_price"),
    taxRate: integer("tax_rate").notNull().default(25),
    stock: integer("stock").notNull().default(0),
    qtyLocation: text("qty_location"),
    disableMinusqty: integer("disable_minusqty").notNull().default(0),
    visible: integer("visible").notNull().default(1),
    description: text("description"),
    gtin: text("gtin"),
    supplierName: text("supplier_name"),
    supplierSku: text("supplier_sku"),
    datafield1: text("datafield_1"),
    datafield2: text("datafield_2"),
    datafield3: text("datafield_3"),
    seoDescription: text("seo_description"),
    seoTitle: text("seo_title"),
    weight: real("weight"),
    images: text("images").notNull().default("[]"),
    metadata: text("metadata"),
    brand: text("brand"),
    // Option names shared by all variants (docs/products.md, "Updating products"), as a JSON array of 0 to 5 strings.
    optionNames: text("option_names").notNull().default("[]"),
    ...timestamps,
    // The API key (api_keys.id) that last wrote the product; null for the bootstrap API_KEY.
    keyId: integer("key_id"),
    // The product's URL path under STORE_URL (docs/products.md, "Categories, URLs and images"): unique;
    // a write that leaves it to the database stores "<base>~<token>" and a trigger resolves it
    // (drizzle/0006_categories.sql). NULL for products created before slugs existed.
    slug: text("slug"),
    // The category paths, head category first: a JSON array of arrays of names ([["Clothes", "Shirts"]]).
    categories: text("categories").notNull().default("[]"),
  },
  (t) => [
    uniqueIndex("products_slug").on(t.slug),
    check("products_price", sql`${t.price} >= 0`),
    check("products_tax_rate", sql`${t.taxRate} BETWEEN 0 AND 100`),
    check("products_flags", sql`${t.disableMinusqty} IN (0, 1) AND ${t.visible} IN (0, 1)`),
    // Never oversell: with disable_minusqty on, stock cannot go below zero (docs/orders.md, "Orders").
    check("products_stock_floor", sql`${t.disableMinusqty} = 0 OR ${t.stock} >= 0`),
  ],
);

export const variants = sqliteTable(
  "variants",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    productId: integer("product_id")
      .notNull()
      .references(() => products.id, { onDelete: "cascade" }),
    sku: text("sku"),
    // Absent options are '' rather than NULL so the unique combination index sees them as equal.
    option1: text("option1_value").notNull().default(""),
    option2: text("option2_value").notNull().default(""),
    option3: text("option3_value").notNull().default(""),
    option4: text("option4_value").notNull().default(""),
    option5: text("option5_value").notNull().default(""),
    price: integer("price").notNull().default(0),
    beforePrice: integer("before_price"),
    purchasePrice: integer("purchase_price"),
    qty: integer("qty").notNull().default(0),
    qtyLocation: text("qty_location"),
    gtin: text("gtin"),
    supplierSku: text("supplier_sku"),
    weight: real("weight"),
    visible: integer("visible").notNull().default(1),
    images: text("images").notNull().default("[]"),
    // Copy of the product's disable_minusqty, kept in the same batch as the product's, because a
    // CHECK cannot look at another table and the stock floor must be a constraint.
    noMinus: integer("no_minus").notNull().default(0),
    position: integer("position").notNull().default(0),
    ...timestamps,
  },
  (t) => [
    uniqueIndex("variants_options").on(t.productId, t.option1, t.option2, t.option3, t.option4, t.option5),
    index("variants_product").on(t.productId, t.position),
    check("variants_price", sql`${t.price} >= 0`),
    check("variants_visible", sql`${t.visible} IN (0, 1) AND ${t.noMinus} IN (0, 1)`),
    check("variants_stock_floor", sql`${t.noMinus} = 0 OR ${t.qty} >= 0`),
  ],
);

// Every category a product is in, at any level of any of its paths (a path ["Clothes", "Shirts"]
// gives "Clothes" and "Clothes>Shirts"): the index of GET /v1/products?category=. Kept from
// products.categories by triggers (drizzle/0006_categories.sql), so no write path maintains it.
export const productCategories = sqliteTable(
  "product_categories",
  {
    productId: integer("product_id")
      .notNull()
      .references(() => products.id, { onDelete: "cascade" }),
    // The names from the head category to this one, joined with ">" (names cannot contain it).
    path: text("path").notNull(),
    name: text("name").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.productId, t.path] }),
    index("product_categories_name").on(t.name, t.productId),
    index("product_categories_path").on(t.path, t.productId),
  ],
);

// Every SKU of the store, product or variant: the primary key makes SKUs unique across both
// tables, inside the database, whatever the order of concurrent writes (docs/products.md, "Updating products").
export const skus = sqliteTable("skus", {
  sku: text("sku").primaryKey(),
  productId: integer("product_id").notNull(),
  variantId: integer("variant_id"),
});

// Never holds a row. A write batch inserts the products that changed since the request read them,
// and the always-false CHECK then fails the whole batch, which is planned again from a fresh read:
// a zero-row UPDATE is no error, so a constraint is how a batch says its read went stale.
export const staleReads = sqliteTable("stale_reads", { productId: integer("product_id").notNull() }, () => [
  check("stale_read", sql`0`),
]);

// One row whose version moves with every change to products or variants (every write batch ends
// with src/products/version.ts, versionBumps): the key of the storefront catalog cache (docs/keys.md,
// "Edge cache").
export const catalogVersion = sqliteTable(
  "catalog_version",
  {
    id: integer("id").primaryKey(),
    version: integer("version").notNull().default(0),
  },
  (t) => [check("catalog_version_one_row", sql`${t.id} = 1`)],
);

// Each product's version (docs/stock.md): the ETag of
// GET /v1/products/{id} and what If-Match on PUT compares. Every batch that changes the product or
// its variants moves it once (src/products/version.ts, versionBumps: a PUT, an order's stock move,
// a cancel's restock), never for another product's change; a trigger gives a new product its row
// (drizzle/0010_stock_version.sql). A table of its own, so a write rewrites a small row, not the product's.
export const productVersions = sqliteTable("product_versions", {
  productId: integer("product_id")
    .primaryKey()
    .references(() => products.id, { onDelete: "cascade" }),
  version: integer("version").notNull().default(1),
});
