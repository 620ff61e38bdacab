import { z } from "zod";
import type { DB } from "../db/client";
import { decodeCursor, encodeCursor } from "../platform/cursor";
import { asJsonRows, jsonRows, stmt } from "../platform/d1";
import { ApiError } from "../platform/errors";
import {
  boolText,
  cutShort,
  ignored,
  nextLink,
  Params,
  parseQuery,
  rowsThatFit,
  searchText,
  strictQuery,
  text,
  whole,
} from "../platform/query";
import { CATEGORIES_SQL, categoryFilter, categoryQuery, HEAD_SQL, urlSql } from "./categories";
import { type ModelledProduct, modelledProduct, modelledProductDetails, type Row } from "./modelled";

// GET /v1/products and GET /v1/products/count in the modelled dialect (src/docs/modelled-reads.md, "Modelled reads").

/** Page size bounds: the modelled API's default and maximum (one place, for the CPU budget). */
export const PRODUCT_LIMIT_DEFAULT = 100;
export const PRODUCT_LIMIT_MAX = 500;
/**
 * Variants in one page with include_details (src/docs/products.md, "Limits"): a page of 2,048 measured 10.6 to
 * 11.8 ms median in workerd, and 1,024 (after reading pages as JSON rows) 3.0 to 6.0 ms median
 * with p90s of 7.7 to 11.6 ms across full bench runs on a shared machine (bench/README.md): not
 * the margin a p90 needs, so 512; still four of the largest products (MAX_VARIANTS) a page.
 */
export const PAGE_VARIANTS_MAX = 512;
const MAX_OFFSET = 100_000_000;

const PARAMS = ["product_id", "sku", "search", "category", "include_details", "limit", "offset", "cursor", "apps_load"];

// The page's rows come back as one JSON text per statement (asJsonRows, src/platform/d1.ts), with
// only the columns the presenters (modelled.ts) read.
const PRODUCT_COLUMNS = [
  "id",
  "sku",
  "title",
  "visible",
  "stock",
  "price",
  "before_price",
  "purchase_price",
  "tax_rate",
  "weight",
  "gtin",
  "qty_location",
  "disable_minusqty",
  "supplier_name",
  "supplier_sku",
  "updated_at",
  "option_names",
  "images",
  "description",
  "seo_title",
  "seo_description",
  "datafield_1",
  "datafield_2",
  "datafield_3",
  "variant_count",
  "variant_qty",
  "url",
  "headcategory_name",
  "categories",
];
// Columns the subquery computes (after variant_qty): SQLite builds their JSON, the presenters pass
// it through (src/docs/products.md, "Categories, URLs and images").
const COMPUTED = 5;
const NESTED = ["images", "categories"];
// Stored [{url, alttext}] as the modelled {"1": {"image", "alttext"}}.
export const IMAGES_SQL = `(SELECT json_group_object(CAST(i.key + 1 AS TEXT),
    json_object('image', i.value->>'url', 'alttext', coalesce(i.value->>'alttext', '')))
  FROM json_each(p.images) AS i)`;
const VARIANT_COLUMNS = [
  "id",
  "product_id",
  "sku",
  "option1_value",
  "option2_value",
  "option3_value",
  "option4_value",
  "option5_value",
  "price",
  "before_price",
  "purchase_price",
  "qty",
  "weight",
  "gtin",
  "supplier_sku",
  "qty_location",
  "images",
  "visible",
  "no_minus",
];

const listQuery = z
  .object({
    product_id: whole(1, Number.MAX_SAFE_INTEGER, "must be a positive whole number (an id)").optional(),
    sku: text(255).optional(),
    search: text(255).optional(),
    category: categoryQuery.optional(),
    include_details: boolText.optional(),
    limit: whole(1, PRODUCT_LIMIT_MAX).optional(),
    offset: whole(0, MAX_OFFSET).optional(),
    cursor: text(64).optional(),
    apps_load: ignored.optional(),
  })
  .superRefine((q, ctx) => {
    const lookup = q.product_id !== undefined || q.sku !== undefined;
    if (q.product_id !== undefined && q.sku !== undefined) {
      ctx.addIssue({ code: "custom", path: ["sku"], message: "give product_id or sku, not both" });
    }
    if (lookup && q.search !== undefined) {
      ctx.addIssue({ code: "custom", path: ["search"], message: "cannot be combined with product_id or sku" });
    }
    if (q.cursor !== undefined && (lookup || q.offset !== undefined)) {
      ctx.addIssue({ code: "custom", path: ["cursor"], message: "cannot be combined with offset, product_id or sku" });
    }
  });
/** visibleOnly: only visible products (a publishable key's catalog, src/docs/keys.md); never from the URL. */
export type ProductListQuery = z.output<typeof listQuery> & { visibleOnly?: boolean };

export const parseProductQuery = (url: string) => parseQuery(listQuery, strictQuery(url, PARAMS));

/** What GET /v1/products answers: the body, and the Link to the next page if there is one. */
export type ProductListAnswer = {
  // Bare, as the modelled API's clients in the wild read it (src/docs/modelled-reads.md, "GET /v1/products").
  body: ModelledProduct[] | ModelledProduct;
  link?: string;
};

/**
 * One D1 round trip whatever the page: the page of products (with their variants' count and stock
 * sum) and, with include_details, the variants of exactly that page, in one batch (one snapshot).
 * Sorted by id ascending: offset paging then stays stable while products are added (new ones
 * come last), which is what a client paging "until an empty page" relies on.
 */
export async function listProducts(db: DB, q: ProductListQuery, url: string): Promise<ProductListAnswer> {
  const params = new Params();
  const where: string[] = [];
  if (q.product_id !== undefined) where.push(`p.id = ${params.add(q.product_id)}`);
  if (q.sku !== undefined) where.push(`p.id = (SELECT product_id FROM skus WHERE sku = ${params.add(q.sku)})`);
  if (q.search !== undefined) {
    const s = params.add(searchText(q.search));
    const has = (col: string) => `instr(lower(${col}), ${s}) > 0`;
    where.push(
      `(${has("p.title")} OR ${has("p.sku")} OR ${has("p.gtin")}
        OR EXISTS (SELECT 1 FROM variants AS sv WHERE sv.product_id = p.id AND ${has("sv.sku")}))`,
    );
  }
  if (q.category !== undefined) where.push(categoryFilter(q.category, (v) => params.add(v)));
  if (q.cursor !== undefined) where.push(`p.id > ${params.add(decodeCursor(q.cursor))}`);
  if (q.visibleOnly) where.push("p.visible = 1");
  const lookup = q.product_id !== undefined || q.sku !== undefined;
  // A lookup answers its one product: the SDK sends limit=1 with it, and neither limit nor offset
  // may hide the product it asked for.
  const limit = lookup ? 1 : (q.limit ?? PRODUCT_LIMIT_DEFAULT);
  const offset = lookup ? 0 : (q.offset ?? 0);
  const lim = params.add(limit);
  const off = params.add(offset);
  const filter = where.length ? `WHERE ${where.join(" AND ")}` : "";
  const page = `FROM products AS p ${filter} ORDER BY p.id LIMIT ${lim} OFFSET ${off}`;
  // Only with details are images shown: the page without them skips building their JSON.
  const images = q.include_details ? IMAGES_SQL : "'{}'";
  const stmts = [
    stmt(
      db,
      `SELECT ${asJsonRows(PRODUCT_COLUMNS, "x", "x.id", NESTED)} FROM (SELECT ${PRODUCT_COLUMNS.slice(0, -COMPUTED)
        .map((c) => (c === "images" ? `${images} AS images` : `p.${c}`))
        .join(", ")},
        (SELECT count(*) FROM variants AS v WHERE v.product_id = p.id) AS variant_count,
        (SELECT total(v.qty) FROM variants AS v WHERE v.product_id = p.id) AS variant_qty,
        ${urlSql()} AS url,
        ${HEAD_SQL} AS headcategory_name,
        ${CATEGORIES_SQL} AS categories
       FROM products AS p ${filter} ORDER BY p.id LIMIT ${lim} + 1 OFFSET ${off}) AS x`,
      ...params.values,
    ),
  ];
  if (q.include_details) {
    stmts.push(
      stmt(
        db,
        `SELECT ${asJsonRows(VARIANT_COLUMNS, "v", "v.product_id, v.position, v.id")} FROM (SELECT * FROM variants AS v
         WHERE v.product_id IN (SELECT p.id ${page})
         ORDER BY v.product_id, v.position, v.id LIMIT ${PAGE_VARIANTS_MAX}) AS v`,
        ...params.values,
      ),
    );
  }
  const [pj, vj] = await db.$client.batch<{ rows: string }>(stmts);
  const ps = { results: jsonRows<Row>(pj) };
  const vs = { results: jsonRows<Row>(vj) };
  let more = ps.results.length > limit;
  let rows = more ? ps.results.slice(0, limit) : ps.results;
  if (q.include_details) {
    const fit = rowsThatFit(
      rows.map((p) => p.variant_count as number),
      PAGE_VARIANTS_MAX,
    );
    if (fit < rows.length) {
      cutShort(q.offset !== undefined, fit, "variants", PAGE_VARIANTS_MAX);
      rows = rows.slice(0, fit);
      more = true;
    }
  }
  const products = q.include_details ? withVariants(rows, vs.results) : rows.map(modelledProduct);

  if (lookup) {
    if (!products.length) {
      const which = q.product_id !== undefined ? `product ${q.product_id}` : `product with sku ${q.sku}`;
      throw new ApiError(404, `${which} not found`);
    }
    return { body: products[0] };
  }
  let link: string | undefined;
  if (more) {
    // Offset paging continues by offset; any other page continues by cursor (our extension).
    link =
      q.offset !== undefined
        ? nextLink(url, { offset: String(offset + limit) })
        : nextLink(url, { cursor: encodeCursor(rows[rows.length - 1].id as number) });
  }
  return { body: products, link };
}

function withVariants(rows: Row[], vs: Row[]) {
  const byProduct = new Map<unknown, Row[]>();
  for (const v of vs) {
    const list = byProduct.get(v.product_id);
    if (list) list.push(v);
    else byProduct.set(v.product_id, [v]);
  }
  return rows.map((p) => modelledProductDetails(p, byProduct.get(p.id) ?? []));
}

/** GET /v1/products/count: how many products the store has, as a string (the modelled type). */
export async function countProducts(db: DB, url: string) {
  strictQuery(url, []);
  const row = await stmt(db, "SELECT count(*) AS n FROM products").first<{ n: number }>();
  return { count: String(row?.n ?? 0) };
}
