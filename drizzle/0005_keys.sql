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
ALTER TABLE `events` ADD `key_id` integer;--> statement-breakpoint
ALTER TABLE `orders` ADD `key_id` integer;--> statement-breakpoint
ALTER TABLE `products` ADD `key_id` integer;