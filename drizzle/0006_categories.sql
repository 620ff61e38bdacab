CREATE TABLE `product_categories` (
	`product_id` integer NOT NULL,
	`path` text NOT NULL,
	`name` text NOT NULL,
	PRIMARY KEY(`product_id`, `path`),
	FOREIGN KEY (`product_id`) REFERENCES `products`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `product_categories_name` ON `product_categories` (`name`,`product_id`);--> statement-breakpoint
CREATE INDEX `product_categories_path` ON `product_categories` (`path`,`product_id`);--> statement-breakpoint
ALTER TABLE `products` ADD `slug` text;--> statement-breakpoint
ALTER TABLE `products` ADD `categories` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX `products_slug` ON `products` (`slug`);--> statement-breakpoint
-- The category index (src/docs/products.md, "Categories, URLs and images"): one row per category a
-- product is in, at any level of any path, kept from products.categories inside the statement that
-- writes it, so every write path keeps it and a batch that fails leaves it unchanged.
CREATE TRIGGER `product_categories_insert` AFTER INSERT ON `products` WHEN NEW.`categories` <> '[]' BEGIN
  INSERT INTO `product_categories` (`product_id`, `path`, `name`)
  SELECT DISTINCT NEW.`id`,
    (SELECT group_concat(a.value, '>' ORDER BY a.key) FROM json_each(c.value) AS a WHERE a.key <= n.key), n.value
  FROM json_each(NEW.`categories`) AS c, json_each(c.value) AS n;
END;
--> statement-breakpoint
CREATE TRIGGER `product_categories_update` AFTER UPDATE OF `categories` ON `products` WHEN OLD.`categories` IS NOT NEW.`categories` BEGIN
  DELETE FROM `product_categories` WHERE `product_id` = NEW.`id`;
  INSERT INTO `product_categories` (`product_id`, `path`, `name`)
  SELECT DISTINCT NEW.`id`,
    (SELECT group_concat(a.value, '>' ORDER BY a.key) FROM json_each(c.value) AS a WHERE a.key <= n.key), n.value
  FROM json_each(NEW.`categories`) AS c, json_each(c.value) AS n;
END;
--> statement-breakpoint
-- Slugs derived from the title: the write stores "<base>~<token or id>" ('~' is never in a slug)
-- and these triggers replace it, row by row, with <base> when that is free, else <base>-N with N one
-- more than the largest number already used after "<base>-" (so -2, -3, ...). Rows of one statement
-- are resolved in order, each seeing the ones before it, so a request creating two products of
-- one title gets both slugs in its one batch.
CREATE TRIGGER `products_slug_insert` AFTER INSERT ON `products` WHEN instr(NEW.`slug`, '~') > 0 BEGIN
  -- Setting the slug fires products_slug_update below, which resolves it (a trigger fires others).
  UPDATE `products` SET `slug` = NEW.`slug` WHERE `id` = NEW.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `products_slug_update` AFTER UPDATE OF `slug` ON `products` WHEN instr(NEW.`slug`, '~') > 0 BEGIN
  UPDATE `products` SET `slug` = (
    SELECT iif(NOT EXISTS (SELECT 1 FROM `products` AS o WHERE o.`slug` = b.base), b.base,
      b.base || '-' || (1 + coalesce((SELECT max(CAST(substr(o.`slug`, length(b.base) + 2) AS INTEGER))
        FROM `products` AS o WHERE o.`slug` > b.base || '-' AND o.`slug` < b.base || '.'
          AND substr(o.`slug`, length(b.base) + 2) NOT GLOB '*[^0-9]*'), 1)))
    FROM (SELECT substr(NEW.`slug`, 1, instr(NEW.`slug`, '~') - 1) AS base) AS b)
  WHERE `id` = NEW.`id`;
END;
