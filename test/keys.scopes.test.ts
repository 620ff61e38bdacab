import { describe, expect, it } from "vitest";
import { app } from "../src/app";
import { SCOPES } from "../src/keys/scope-names";
import { ROUTE_SCOPES } from "../src/keys/scopes";
import { call, post } from "./helpers";

// Every route of the app (read from the router, not a hand list) has a scope in the one table, and
// a key holding every scope but that one gets 403 naming it (docs/keys.md, "Scopes").

const routes = app.routes
  .filter((r) => r.method !== "ALL" && r.path.startsWith("/v1/"))
  .map((r) => `${r.method} ${r.path}`)
  .filter((k, i, all) => all.indexOf(k) === i);

// An id that exists nowhere: a route its scope lets through answers 404 or 400, never 401/403.
const sample = (path: string) => path.replace(/:[a-z_]+/g, "999999");

const made = new Map<string, string>();
async function keyWith(scope: string) {
  if (!made.has(scope)) {
    const r = await post("/v1/keys", { name: `only ${scope}`, type: "secret", scopes: [scope] });
    expect(r.status).toBe(201);
    made.set(scope, r.json.key);
  }
  return made.get(scope) as string;
}

describe("route x scope (docs/keys.md, Scopes)", () => {
  it("finds the routes", () => expect(routes.length).toBeGreaterThanOrEqual(17));

  it.each(routes)("%s has a scope in ROUTE_SCOPES", (route) => {
    expect(ROUTE_SCOPES[route], `${route} has no scope`).toBeDefined();
  });

  it("ROUTE_SCOPES names no route that does not exist", () => {
    expect(Object.keys(ROUTE_SCOPES).sort()).toEqual([...routes].sort());
  });

  // The session routes need no scope (docs/admin.md, "Sessions"): test/sessions.test.ts.
  const scoped = routes.filter((route) => ROUTE_SCOPES[route].scope);
  const matrix = scoped.flatMap((route) => SCOPES.map((scope) => [route, scope] as const));
  it.each(matrix)("%s with only %s", async (route, scope) => {
    const [method, path] = route.split(" ");
    const key = await keyWith(scope);
    const r = await call(method, sample(path), { headers: { authorization: `Bearer ${key}` } });
    const needed = ROUTE_SCOPES[route].scope;
    if (needed === scope) {
      expect(r.status, r.text).not.toBe(403);
      expect(r.status).not.toBe(401);
    } else {
      expect(r.status).toBe(403);
      expect(r.json).toEqual({ code: 403, error: `this key lacks the scope ${needed}` });
    }
  });
});

describe("OpenAPI security (docs/keys.md)", () => {
  it("every /v1 operation of the document names its scope from ROUTE_SCOPES", async () => {
    const { openApiDocument } = await import("../src/openapi/document");
    const doc = openApiDocument() as any;
    let seen = 0;
    for (const [path, item] of Object.entries(doc.paths as Record<string, any>)) {
      if (!path.startsWith("/v1/")) continue;
      for (const [method, op] of Object.entries(item as Record<string, any>)) {
        const rule = ROUTE_SCOPES[`${method.toUpperCase()} ${path.replace(/\{([a-z_]+)\}/g, ":$1")}`];
        if (!rule?.scope) continue;
        seen++;
        expect(op["x-scope"]).toBe(rule.scope);
        expect(op.security).toContainEqual({ bearerAuth: [rule.scope] });
        expect(op.security.some((s: any) => "publishableKey" in s)).toBe(Boolean(rule.publishable));
      }
    }
    expect(seen).toBeGreaterThanOrEqual(14);
  });
});
