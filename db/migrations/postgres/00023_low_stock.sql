-- +goose Up
-- Issue 44: the dashboard's low stock (db.FindLowStock) read the index
-- inventory_quantity (00015), and an index on quantity made every order's
-- stock update a non-HOT update: a new row version in the heap plus an
-- entry in that index and in the primary key, about half the raw order
-- transaction's rate. A partial index on quantity would do the same (HOT
-- needs no indexed column to change, the predicate's included). So the
-- pets in stock at or under db.LowStockMax (2) are kept in low_stock by a
-- row trigger whose WHEN clause skips every other stock change: an order
-- of a well-stocked pet updates inventory alone, HOT again.
LOCK TABLE inventory IN SHARE MODE;
CREATE TABLE low_stock (
    pet_id   BIGINT PRIMARY KEY,
    quantity INTEGER NOT NULL
);
CREATE INDEX low_stock_quantity ON low_stock (quantity, pet_id);
INSERT INTO low_stock (pet_id, quantity)
SELECT pet_id, quantity FROM inventory WHERE quantity BETWEEN 1 AND 2;

-- +goose StatementBegin
CREATE FUNCTION track_low_stock() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' OR NEW.quantity NOT BETWEEN 1 AND 2 THEN
        DELETE FROM low_stock WHERE pet_id = OLD.pet_id;
    ELSE
        INSERT INTO low_stock AS l (pet_id, quantity) VALUES (NEW.pet_id, NEW.quantity)
        ON CONFLICT (pet_id) DO UPDATE SET quantity = EXCLUDED.quantity;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER inventory_low_stock_insert AFTER INSERT ON inventory
    FOR EACH ROW WHEN (NEW.quantity BETWEEN 1 AND 2) EXECUTE FUNCTION track_low_stock();
CREATE TRIGGER inventory_low_stock_update AFTER UPDATE OF quantity ON inventory
    FOR EACH ROW WHEN (OLD.quantity BETWEEN 1 AND 2 OR NEW.quantity BETWEEN 1 AND 2) EXECUTE FUNCTION track_low_stock();
CREATE TRIGGER inventory_low_stock_delete AFTER DELETE ON inventory
    FOR EACH ROW WHEN (OLD.quantity BETWEEN 1 AND 2) EXECUTE FUNCTION track_low_stock();
DROP INDEX inventory_quantity;

-- +goose Down
CREATE INDEX inventory_quantity ON inventory (quantity, pet_id);
DROP TRIGGER inventory_low_stock_delete ON inventory;
DROP TRIGGER inventory_low_stock_update ON inventory;
DROP TRIGGER inventory_low_stock_insert ON inventory;
DROP FUNCTION track_low_stock();
DROP TABLE low_stock;
