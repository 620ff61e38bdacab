import { rowMapper } from "../platform/d1";
import { products, variants } from "./schema";

// Raw D1 rows of the batched write paths, mapped to the Drizzle row types.
export const toProduct = rowMapper(products);
export const toVariant = rowMapper(variants);
