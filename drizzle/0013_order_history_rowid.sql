PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_order_history` (
	`id` integer PRIMARY KEY NOT NULL,
	`order_id` integer NOT NULL,
	`at` integer NOT NULL,
	`change` text NOT NULL,
	`restock` integer,
	`reason` text,
	`key_id` integer,
	`key_name` text,
	`via` text NOT NULL,
	FOREIGN KEY (`order_id`) REFERENCES `orders`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_order_history`("id", "order_id", "at", "change", "restock", "reason", "key_id", "key_name", "via") SELECT "id", "order_id", "at", "change", "restock", "reason", "key_id", "key_name", "via" FROM `order_history`;--> statement-breakpoint
DROP TABLE `order_history`;--> statement-breakpoint
ALTER TABLE `__new_order_history` RENAME TO `order_history`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `order_history_order` ON `order_history` (`order_id`,`id`);