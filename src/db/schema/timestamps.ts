import { integer } from "drizzle-orm/sqlite-core";

/** Epoch milliseconds of a row's creation and last change. */
export const timestamps = {
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at").notNull(),
};
