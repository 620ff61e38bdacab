-- SKUs are unique across products and variants (contract 4.2). The registry is kept by triggers,
-- so every write path maintains it inside the same statement and a duplicate fails the batch on
-- the `skus` primary key, whatever the interleaving of concurrent requests.
CREATE TRIGGER `products_sku_insert` AFTER INSERT ON `products` WHEN NEW.`sku` IS NOT NULL BEGIN
  INSERT INTO `skus` (`sku`, `product_id`, `variant_id`) VALUES (NEW.`sku`, NEW.`id`, NULL);
END;
--> statement-breakpoint
CREATE TRIGGER `products_sku_update` AFTER UPDATE OF `sku` ON `products` WHEN OLD.`sku` IS NOT NEW.`sku` BEGIN
  DELETE FROM `skus` WHERE `sku` = OLD.`sku` AND `variant_id` IS NULL;
  INSERT INTO `skus` (`sku`, `product_id`, `variant_id`) SELECT NEW.`sku`, NEW.`id`, NULL WHERE NEW.`sku` IS NOT NULL;
END;
--> statement-breakpoint
CREATE TRIGGER `products_sku_delete` AFTER DELETE ON `products` BEGIN
  DELETE FROM `skus` WHERE `product_id` = OLD.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `variants_sku_insert` AFTER INSERT ON `variants` WHEN NEW.`sku` IS NOT NULL BEGIN
  INSERT INTO `skus` (`sku`, `product_id`, `variant_id`) VALUES (NEW.`sku`, NEW.`product_id`, NEW.`id`);
END;
--> statement-breakpoint
CREATE TRIGGER `variants_sku_update` AFTER UPDATE OF `sku` ON `variants` WHEN OLD.`sku` IS NOT NEW.`sku` BEGIN
  DELETE FROM `skus` WHERE `sku` = OLD.`sku` AND `variant_id` = OLD.`id`;
  INSERT INTO `skus` (`sku`, `product_id`, `variant_id`) SELECT NEW.`sku`, NEW.`product_id`, NEW.`id` WHERE NEW.`sku` IS NOT NULL;
END;
--> statement-breakpoint
CREATE TRIGGER `variants_sku_delete` AFTER DELETE ON `variants` WHEN OLD.`sku` IS NOT NULL BEGIN
  DELETE FROM `skus` WHERE `sku` = OLD.`sku` AND `variant_id` = OLD.`id`;
END;
--> statement-breakpoint
-- Order numbers start at 1001, as merchants expect from a shop (AUTOINCREMENT reads sqlite_sequence).
INSERT INTO `sqlite_sequence` (`name`, `seq`) VALUES ('orders', 1000);
