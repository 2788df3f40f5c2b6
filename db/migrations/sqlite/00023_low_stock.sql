-- +goose Up
-- Issue 44: the dashboard's low stock (db.FindLowStock) read the index
-- inventory_quantity (00015), which every order's stock update had to
-- rewrite. The pets in stock at or under db.LowStockMax (2) are kept in
-- low_stock instead, by triggers whose WHEN clauses skip every other stock
-- change, as on PostgreSQL (where the index also ended HOT updates).
CREATE TABLE low_stock (
    pet_id   INTEGER PRIMARY KEY,
    quantity INTEGER NOT NULL
);
CREATE INDEX low_stock_quantity ON low_stock (quantity, pet_id);
INSERT INTO low_stock (pet_id, quantity)
SELECT pet_id, quantity FROM inventory WHERE quantity BETWEEN 1 AND 2;

-- +goose StatementBegin
CREATE TRIGGER inventory_low_stock_insert AFTER INSERT ON inventory
WHEN NEW.quantity BETWEEN 1 AND 2
BEGIN
    INSERT INTO low_stock (pet_id, quantity) VALUES (NEW.pet_id, NEW.quantity);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER inventory_low_stock_update AFTER UPDATE OF quantity ON inventory
WHEN OLD.quantity BETWEEN 1 AND 2 OR NEW.quantity BETWEEN 1 AND 2
BEGIN
    DELETE FROM low_stock WHERE pet_id = OLD.pet_id;
    INSERT INTO low_stock (pet_id, quantity) SELECT NEW.pet_id, NEW.quantity WHERE NEW.quantity BETWEEN 1 AND 2;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER inventory_low_stock_delete AFTER DELETE ON inventory
WHEN OLD.quantity BETWEEN 1 AND 2
BEGIN
    DELETE FROM low_stock WHERE pet_id = OLD.pet_id;
END;
-- +goose StatementEnd
DROP INDEX inventory_quantity;

-- +goose Down
CREATE INDEX inventory_quantity ON inventory (quantity, pet_id);
DROP TRIGGER inventory_low_stock_delete;
DROP TRIGGER inventory_low_stock_update;
DROP TRIGGER inventory_low_stock_insert;
DROP TABLE low_stock;
