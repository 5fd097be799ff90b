-- +goose Up
-- What a package or a certificate sold in the salon was paid, when the
-- desk says (one sold online has its sale's price): what the desk pays
-- back of it when what is left is refunded. A table of its own, not a
-- column of balances, whose row every reservation updates; and no
-- foreign key to balances (whose trigger would be looked at on each of
-- those updates): balances are never deleted, and the row is written in
-- the transaction that writes its balance.
CREATE TABLE balance_prices (
    balance_id bigint PRIMARY KEY,
    salon_id   bigint NOT NULL REFERENCES salons ON DELETE CASCADE,
    price      bigint NOT NULL CHECK (price > 0)
);

-- +goose Down
DROP TABLE balance_prices;
