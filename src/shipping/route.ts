import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../env";
import { jsonBody } from "../platform/body";
import { ApiError } from "../platform/errors";
import { id, parseItem } from "../platform/fields";
import { zv } from "../platform/zv";
import { MAX_METHODS, methodCreate, methodQuery, methodUpdate } from "./schema";
import { createMethod, deleteMethod, listMethods, present, updateMethod } from "./service";

const idParam = zv("param", z.object({ id }));

function objectBody(body: unknown) {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new ApiError(400, "body must be a shipping method object");
  }
  return body;
}

export const shippingRoute = new Hono<AppEnv>()
  .get("/", zv("query", methodQuery), async (c) => {
    // A storefront sees only the methods it may pick.
    const visibleOnly = c.var.credential?.type === "publishable";
    const rows = await listMethods(c.var.db, { visibleOnly, country: c.req.valid("query").country });
    return c.json({ shipping_methods: rows.map(present) });
  })
  .post("/", jsonBody, async (c) => {
    const p = parseItem(methodCreate, objectBody(c.var.body));
    if (!p.ok) throw new ApiError(400, "invalid body", p.errors);
    const row = await createMethod(c.var.db, p.data, Date.now());
    if (!row) throw new ApiError(409, `at most ${MAX_METHODS} shipping methods; delete one first`);
    return c.json({ ...present(row), notices: p.notices }, 201);
  })
  .patch("/:id", idParam, jsonBody, async (c) => {
    const { id } = c.req.valid("param");
    const p = parseItem(methodUpdate, objectBody(c.var.body));
    if (!p.ok) throw new ApiError(400, "invalid body", p.errors);
    const row = await updateMethod(c.var.db, id, p.data, Date.now());
    if (!row) throw new ApiError(404, `shipping method ${id} not found`);
    return c.json({ ...present(row), notices: p.notices });
  })
  .delete("/:id", idParam, async (c) => {
    const { id } = c.req.valid("param");
    if (!(await deleteMethod(c.var.db, id))) throw new ApiError(404, `shipping method ${id} not found`);
    return c.body(null, 204);
  });
