import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../env";
import { ApiError } from "../platform/errors";
import { id } from "../platform/fields";
import { nextLink } from "../platform/query";
import { zv } from "../platform/zv";
import { parseCustomerQuery } from "./schema";
import { getCustomer, listCustomers } from "./service";

// /v1/customers (docs/customers.md): secret keys with orders:read only; a publishable key is
// refused by the route table (src/keys/scopes.ts) before these run.

const idParam = zv("param", z.object({ customer_id: id }));
const storeCurrency = (env: AppEnv["Bindings"]) => env.DEFAULT_CURRENCY || "SEK";

export const customersRoute = new Hono<AppEnv>()
  .get("/", async (c) => {
    const q = parseCustomerQuery(c.req.url);
    const page = await listCustomers(c.var.db, q, storeCurrency(c.env));
    const headers: Record<string, string> = {};
    if (page.more) headers.Link = nextLink(c.req.url, { offset: String(page.offset + page.limit) });
    if (page.total !== undefined) headers["X-Total-Count"] = String(page.total);
    return c.json({ customers: page.customers }, 200, headers);
  })
  .get("/:customer_id", idParam, async (c) => {
    const { customer_id } = c.req.valid("param");
    const customer = await getCustomer(c.var.db, customer_id, storeCurrency(c.env));
    if (!customer) throw new ApiError(404, `customer ${customer_id} not found`);
    return c.json(customer);
  });
