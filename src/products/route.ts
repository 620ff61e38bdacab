import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../env";
import { jsonBody } from "../platform/body";
import { decodeCursor, encodeCursor } from "../platform/cursor";
import { ApiError } from "../platform/errors";
import { id, int, opt, str } from "../platform/fields";
import { zv } from "../platform/zv";
import { createProducts, findBySku, getProduct, listProducts } from "./create";
import { deleteProducts } from "./delete";
import { productCreate, productDelete, productUpdate } from "./schema";
import { updateProducts } from "./update/index";
import { productIdempotency, writeProducts } from "./write";

const listQuery = z.object({
  sku: opt(str(255)),
  limit: opt(int(1, 100)),
  cursor: opt(str(64)),
});

export const productsRoute = new Hono<AppEnv>()
  .post("/", jsonBody, productIdempotency, (c) => writeProducts(c, productCreate, createProducts))
  .put("/", jsonBody, productIdempotency, (c) => writeProducts(c, productUpdate, updateProducts))
  .delete("/", jsonBody, productIdempotency, (c) =>
    writeProducts(c, productDelete, deleteProducts, { products: false }),
  )
  .get("/", zv("query", listQuery), async (c) => {
    const q = c.req.valid("query");
    if (q.sku !== undefined) return c.json({ products: await findBySku(c.var.db, q.sku) });
    const page = await listProducts(c.var.db, q.limit ?? 50, q.cursor ? decodeCursor(q.cursor) : undefined);
    return c.json({ products: page.products, next_cursor: page.next === null ? null : encodeCursor(page.next) });
  })
  .get("/:product_id", zv("param", z.object({ product_id: id })), async (c) => {
    const { product_id } = c.req.valid("param");
    const product = await getProduct(c.var.db, product_id);
    if (!product) throw new ApiError(404, `product ${product_id} not found`);
    return c.json(product);
  });
