CREATE TABLE `api_keys` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`type` text NOT NULL,
	`prefix` text NOT NULL,
	`hash` text NOT NULL,
	`scopes` text DEFAULT '[]' NOT NULL,
	`allowed_origins` text DEFAULT '[]' NOT NULL,
	`expires_at` integer,
	`created_at` integer NOT NULL,
	`last_used_at` integer,
	`revoked_at` integer,
	CONSTRAINT "api_keys_type" CHECK("api_keys"."type" IN ('secret', 'publishable'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_hash_unique` ON `api_keys` (`hash`);--> statement-breakpoint
CREATE TABLE `catalog_version` (
	`id` integer PRIMARY KEY NOT NULL,
	`version` integer DEFAULT 0 NOT NULL,
	CONSTRAINT "catalog_version_one_row" CHECK("catalog_version"."id" = 1)
);
--> statement-breakpoint
ALTER TABLE `events` ADD `key_id` integer;--> statement-breakpoint
ALTER TABLE `orders` ADD `key_id` integer;--> statement-breakpoint
ALTER TABLE `products` ADD `key_id` integer;--> statement-breakpoint
INSERT INTO `catalog_version` (`id`, `version`) VALUES (1, 0);--> statement-breakpoint
CREATE TRIGGER `catalog_products_insert` AFTER INSERT ON `products` BEGIN UPDATE `catalog_version` SET `version` = `version` + 1 WHERE `id` = 1; END;--> statement-breakpoint
CREATE TRIGGER `catalog_products_update` AFTER UPDATE ON `products` BEGIN UPDATE `catalog_version` SET `version` = `version` + 1 WHERE `id` = 1; END;--> statement-breakpoint
CREATE TRIGGER `catalog_products_delete` AFTER DELETE ON `products` BEGIN UPDATE `catalog_version` SET `version` = `version` + 1 WHERE `id` = 1; END;--> statement-breakpoint
CREATE TRIGGER `catalog_variants_insert` AFTER INSERT ON `variants` BEGIN UPDATE `catalog_version` SET `version` = `version` + 1 WHERE `id` = 1; END;--> statement-breakpoint
CREATE TRIGGER `catalog_variants_update` AFTER UPDATE ON `variants` BEGIN UPDATE `catalog_version` SET `version` = `version` + 1 WHERE `id` = 1; END;--> statement-breakpoint
CREATE TRIGGER `catalog_variants_delete` AFTER DELETE ON `variants` BEGIN UPDATE `catalog_version` SET `version` = `version` + 1 WHERE `id` = 1; END;
