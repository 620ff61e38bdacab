import { zValidator } from "@hono/zod-validator";
import type { ValidationTargets } from "hono";
import type { z } from "zod";
import { ApiError } from "./errors";
import { issuesToErrors, precompile, safeParse } from "./fields";

/**
 * zValidator whose failures are the error envelope (docs/api.md, "Conventions"), with an `errors` entry per issue. Routes
 * call it while their module is evaluated, so the schema is compiled then (see precompile), and
 * validation is the synchronous safeParse: zValidator's default safeParseAsync skips compiled
 * parsers.
 */
export const zv = <T extends keyof ValidationTargets, S extends z.ZodType>(target: T, schema: S) =>
  zValidator(
    target,
    precompile(schema),
    (result) => {
      if (!result.success) {
        throw new ApiError(400, `invalid ${target === "param" ? "path" : target}`, issuesToErrors(result.error.issues));
      }
    },
    // The hook reads only success, data and error, which safeParse gives as zValidator expects.
    { validationFunction: (s, value) => safeParse(s, value) as never },
  );
