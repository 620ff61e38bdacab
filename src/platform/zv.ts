import { zValidator } from "@hono/zod-validator";
import type { ValidationTargets } from "hono";
import type { z } from "zod";
import { ApiError } from "./errors";
import { issuesToErrors } from "./validate";

/** zValidator whose failures are the contract's envelope, with an `errors` entry per issue. */
export const zv = <T extends keyof ValidationTargets, S extends z.ZodType>(target: T, schema: S) =>
  zValidator(target, schema, (result) => {
    if (!result.success) {
      throw new ApiError(400, `invalid ${target === "param" ? "path" : target}`, issuesToErrors(result.error.issues));
    }
  });
