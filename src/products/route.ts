import { Hono } from "hono";
import { z } from "zod";
import { products } from "../db/schema";
import type { AppEnv } from "../env";
import { publicView } from "../keys/public";
import { bodyItems, fieldNames, jsonBody } from "../platform/body";
import { sqlNames } from "../platform/columns";
import { stmt } from "../platform/d1";
import { ApiError } from "../platform/errors";
import { id } from "../platform/fields";
import { carriedJson } from "../platform/quotes";
import { carriedChunks } from "../platform/stream";
import { zv } from "../platform/zv";
import { storeUrl } from "./categories";
import { createProducts } from "./create";
import { deleteProducts } from "./delete";
import { countProducts, listProducts, parseProductQuery } from "./list";
import { ownJson, publicJson } from "./present";
import { productCreate, productDelete, productUpdate } from "./schema";
import { updateProducts } from "./update/index";
import { catalogEdge, ifMatchTags, notModified, productETag, VERSION_OF } from "./version";
import { productIdempotency, writeProducts } from "./write";

const BY_ID = `p.${sqlNames(products).id} = ?1`;

export const productsRoute = new Hono<AppEnv>()
  .use(storeUrl)
  .post("/", jsonBody, productIdempotency, (c) => writeProducts(c, productCreate, createProducts))
  .put("/", jsonBody, productIdempotency, async (c) => {
    // If-Match (docs/stock.md): a write of one product, only if it is still the version the client
    // read; the answer carries the product's ETag.
    const ifMatch = ifMatchTags(c.req.header("If-Match"));
    if (!ifMatch) return writeProducts(c, productUpdate, updateProducts);
    if (bodyItems(c.var.body, "product", true, fieldNames(productUpdate)).length !== 1) {
      throw new ApiError(400, "If-Match: applies to a PUT of one product; send one product object");
    }
    const res = await writeProducts(c, productUpdate, (db, items, now, recorder, options) =>
      updateProducts(db, items, now, recorder, { ...options, ifMatch }),
    );
    if (ifMatch.etag) res.headers.set("ETag", ifMatch.etag);
    return res;
  })
  .delete("/", jsonBody, productIdempotency, (c) =>
    writeProducts(c, productDelete, deleteProducts, { products: false }),
  )
  .get("/", notModified, catalogEdge, async (c) => {
    const pub = publicView(c.var.credential);
    const q = { ...parseProductQuery(c.req.url), visibleOnly: pub !== undefined };
    const { chunks, link, etag } = await listProducts(c.var.db, q, c.req.url, pub);
    // SQLite's text as is, streamed when large: the page is never parsed in the Worker (docs/design.md).
    return carriedChunks(c, chunks, { ETag: etag, ...(link ? { Link: link } : {}) });
  })
  .get("/count", async (c) => c.json(await countProducts(c.var.db, c.req.url)))
  .get("/:product_id", notModified, zv("param", z.object({ product_id: id })), catalogEdge, async (c) => {
    const { product_id } = c.req.valid("param");
    const pub = publicView(c.var.credential);
    // SQLite's text as is (./present.ts), a storefront's with only what it may see. The ETag comes
    // of the product's version: hashing a megabyte of answer cost about a quarter of this read's CPU.
    const db = c.var.db;
    const [found, version] = await db.$client.batch<Record<string, unknown>>([
      pub ? publicJson(db, pub, BY_ID, product_id) : ownJson(db, BY_ID, product_id),
      stmt(db, VERSION_OF, product_id),
    ]);
    // A hidden product does not exist for a storefront (publicJson yields no row for it).
    if (!found.results.length) throw new ApiError(404, `product ${product_id} not found`);
    // The product's own version: it moves when this product changes or sells, not when another
    // does, so it is also what If-Match on PUT compares (docs/stock.md).
    const tag = productETag(product_id, version.results[0]?.version, pub);
    return carriedJson(c, found.results[0].json as string, 200, { ETag: tag });
  });
