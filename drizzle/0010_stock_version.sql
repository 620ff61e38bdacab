CREATE TABLE `product_versions` (
	`product_id` integer PRIMARY KEY NOT NULL,
	`version` integer DEFAULT 1 NOT NULL,
	FOREIGN KEY (`product_id`) REFERENCES `products`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `product_versions` (`product_id`, `version`) SELECT `id`, 1 FROM `products`;--> statement-breakpoint
CREATE TRIGGER `product_version_insert` AFTER INSERT ON `products` BEGIN INSERT OR IGNORE INTO `product_versions` (`product_id`, `version`) VALUES (NEW.`id`, 1); END;--> statement-breakpoint
CREATE TRIGGER `product_version_update` AFTER UPDATE ON `products` BEGIN UPDATE `product_versions` SET `version` = `version` + 1 WHERE `product_id` = NEW.`id`; END;--> statement-breakpoint
CREATE TRIGGER `product_version_variant_insert` AFTER INSERT ON `variants` BEGIN UPDATE `product_versions` SET `version` = `version` + 1 WHERE `product_id` = NEW.`product_id`; END;--> statement-breakpoint
CREATE TRIGGER `product_version_variant_update` AFTER UPDATE ON `variants` BEGIN UPDATE `product_versions` SET `version` = `version` + 1 WHERE `product_id` = NEW.`product_id`; END;--> statement-breakpoint
CREATE TRIGGER `product_version_variant_delete` AFTER DELETE ON `variants` BEGIN UPDATE `product_versions` SET `version` = `version` + 1 WHERE `product_id` = OLD.`product_id`; END;
