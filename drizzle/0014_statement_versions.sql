DROP TABLE `variant_sync`;--> statement-breakpoint
-- Versions move once per write statement, not once per row (src/products/version.ts, versionBumps,
-- which every batch that writes products or variants ends with): a trigger per row wrote two rows
-- more for every variant a sync wrote. product_version_insert stays: it gives a new product its row.
DROP TRIGGER IF EXISTS `catalog_products_insert`;--> statement-breakpoint
DROP TRIGGER IF EXISTS `catalog_products_update`;--> statement-breakpoint
DROP TRIGGER IF EXISTS `catalog_products_delete`;--> statement-breakpoint
DROP TRIGGER IF EXISTS `catalog_variants_insert`;--> statement-breakpoint
DROP TRIGGER IF EXISTS `catalog_variants_update`;--> statement-breakpoint
DROP TRIGGER IF EXISTS `catalog_variants_delete`;--> statement-breakpoint
DROP TRIGGER IF EXISTS `product_version_update`;--> statement-breakpoint
DROP TRIGGER IF EXISTS `product_version_variant_insert`;--> statement-breakpoint
DROP TRIGGER IF EXISTS `product_version_variant_update`;--> statement-breakpoint
DROP TRIGGER IF EXISTS `product_version_variant_delete`;
