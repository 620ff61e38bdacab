CREATE TABLE `customers` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`email` text NOT NULL,
	`email_key` text NOT NULL,
	`type` text,
	`phone` text,
	`billing_details` text,
	`shipping_details` text,
	`has_login` integer DEFAULT 0 NOT NULL,
	`newsletter` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `customers_email_key_unique` ON `customers` (`email_key`);--> statement-breakpoint
CREATE TABLE `idempotency_keys` (
	`key` text PRIMARY KEY NOT NULL,
	`request_hash` text NOT NULL,
	`status` integer NOT NULL,
	`body` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `idempotency_keys_created` ON `idempotency_keys` (`created_at`);--> statement-breakpoint
CREATE TABLE `order_lines` (
	`order_id` integer NOT NULL,
	`position` integer NOT NULL,
	`product_id` integer NOT NULL,
	`variant_id` integer,
	`sku` text,
	`title` text NOT NULL,
	`options` text DEFAULT '[]' NOT NULL,
	`qty` integer NOT NULL,
	`unit_price` integer NOT NULL,
	`tax_rate` integer NOT NULL,
	PRIMARY KEY(`order_id`, `position`),
	FOREIGN KEY (`order_id`) REFERENCES `orders`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "order_lines_qty" CHECK("order_lines"."qty" BETWEEN 1 AND 100000),
	CONSTRAINT "order_lines_price" CHECK("order_lines"."unit_price" >= 0)
);
--> statement-breakpoint
CREATE TABLE `orders` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`token` text NOT NULL,
	`status` text DEFAULT 'unpaid' NOT NULL,
	`customer_id` integer,
	`email` text,
	`phone` text,
	`customer_type` text,
	`note` text,
	`login_create` integer DEFAULT 0 NOT NULL,
	`newsletter_subscribe` integer DEFAULT 0 NOT NULL,
	`billing_details` text,
	`shipping_details` text,
	`payment_method` text,
	`transaction_id` text,
	`payment_log` text,
	`currency` text NOT NULL,
	`shipping_id` integer,
	`shipping_name` text,
	`shipping_price` integer DEFAULT 0 NOT NULL,
	`subtotal` integer NOT NULL,
	`discount` integer DEFAULT 0 NOT NULL,
	`total` integer NOT NULL,
	`tax` text DEFAULT '[]' NOT NULL,
	`metadata` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`customer_id`) REFERENCES `customers`(`id`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "orders_money" CHECK("orders"."subtotal" >= 0 AND "orders"."discount" >= 0 AND "orders"."total" >= 0 AND "orders"."shipping_price" >= 0)
);
--> statement-breakpoint
CREATE UNIQUE INDEX `orders_token_unique` ON `orders` (`token`);--> statement-breakpoint
CREATE INDEX `orders_status` ON `orders` (`status`,`id`);--> statement-breakpoint
CREATE TABLE `products` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`token` text,
	`sku` text,
	`title` text NOT NULL,
	`price` integer DEFAULT 0 NOT NULL,
	`before_price` integer,
	`purchase_price` integer,
	`tax_rate` integer DEFAULT 25 NOT NULL,
	`stock` integer DEFAULT 0 NOT NULL,
	`qty_location` text,
	`disable_minusqty` integer DEFAULT 0 NOT NULL,
	`visible` integer DEFAULT 1 NOT NULL,
	`description` text,
	`gtin` text,
	`supplier_name` text,
	`supplier_sku` text,
	`datafield_1` text,
	`datafield_2` text,
	`datafield_3` text,
	`seo_description` text,
	`seo_title` text,
	`weight` real,
	`images` text DEFAULT '[]' NOT NULL,
	`metadata` text,
	`option_names` text DEFAULT '[]' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	CONSTRAINT "products_price" CHECK("products"."price" >= 0),
	CONSTRAINT "products_tax_rate" CHECK("products"."tax_rate" BETWEEN 0 AND 100),
	CONSTRAINT "products_flags" CHECK("products"."disable_minusqty" IN (0, 1) AND "products"."visible" IN (0, 1)),
	CONSTRAINT "products_stock_floor" CHECK("products"."disable_minusqty" = 0 OR "products"."stock" >= 0)
);
--> statement-breakpoint
CREATE UNIQUE INDEX `products_token_unique` ON `products` (`token`);--> statement-breakpoint
CREATE TABLE `skus` (
	`sku` text PRIMARY KEY NOT NULL,
	`product_id` integer NOT NULL,
	`variant_id` integer
);
--> statement-breakpoint
CREATE TABLE `variants` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`product_id` integer NOT NULL,
	`sku` text,
	`option1_value` text DEFAULT '' NOT NULL,
	`option2_value` text DEFAULT '' NOT NULL,
	`option3_value` text DEFAULT '' NOT NULL,
	`option4_value` text DEFAULT '' NOT NULL,
	`option5_value` text DEFAULT '' NOT NULL,
	`price` integer DEFAULT 0 NOT NULL,
	`before_price` integer,
	`purchase_price` integer,
	`qty` integer DEFAULT 0 NOT NULL,
	`qty_location` text,
	`gtin` text,
	`supplier_sku` text,
	`weight` real,
	`visible` integer DEFAULT 1 NOT NULL,
	`images` text DEFAULT '[]' NOT NULL,
	`no_minus` integer DEFAULT 0 NOT NULL,
	`position` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`product_id`) REFERENCES `products`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "variants_price" CHECK("variants"."price" >= 0),
	CONSTRAINT "variants_visible" CHECK("variants"."visible" IN (0, 1) AND "variants"."no_minus" IN (0, 1)),
	CONSTRAINT "variants_stock_floor" CHECK("variants"."no_minus" = 0 OR "variants"."qty" >= 0)
);
--> statement-breakpoint
CREATE UNIQUE INDEX `variants_options` ON `variants` (`product_id`,`option1_value`,`option2_value`,`option3_value`,`option4_value`,`option5_value`);--> statement-breakpoint
CREATE INDEX `variants_product` ON `variants` (`product_id`,`position`);