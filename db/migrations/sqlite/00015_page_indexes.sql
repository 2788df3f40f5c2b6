-- +goose Up
-- Issue 30: two console reads that walked every order or every pet, with
-- or without fresh statistics, walk an index and stop after their page.
-- The orders list filtered to complete orders walks them newest first, as
-- orders_open (00006) does the open ones; placing an order writes nothing
-- here.
CREATE INDEX orders_complete ON orders (id) WHERE state = 'complete';
-- The dashboard's low stock walks inventory from the scarcest pet in stock
-- and stops after its panel. The price: an order's stock update writes
-- an entry of this index too.
CREATE INDEX inventory_quantity ON inventory (quantity, pet_id);

-- +goose Down
DROP INDEX inventory_quantity;
DROP INDEX orders_complete;
