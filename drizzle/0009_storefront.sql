CREATE TABLE `shipping_methods` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`price` integer NOT NULL,
	`free_over` integer,
	`countries` text DEFAULT '[]' NOT NULL,
	`visible` integer DEFAULT 1 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	CONSTRAINT "shipping_methods_money" CHECK("shipping_methods"."price" >= 0 AND ("shipping_methods"."free_over" IS NULL OR "shipping_methods"."free_over" >= 0)),
	CONSTRAINT "shipping_methods_visible" CHECK("shipping_methods"."visible" IN (0, 1))
);
--> statement-breakpoint
ALTER TABLE `orders` ADD `storefront` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `orders_hold` ON `orders` (`storefront`,`status`,`created_at`);--> statement-breakpoint
-- Orders made with publishable keys before this migration are storefront orders too: they get the
-- storefront hold and token rules from now on.
UPDATE `orders` SET `storefront` = 1 WHERE `key_id` IN (SELECT `id` FROM `api_keys` WHERE `type` = 'publishable');
