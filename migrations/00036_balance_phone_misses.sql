-- +goose Up
-- A package's code asked about with a phone (the widget's code field, before
-- booking): a phone that is not its client's is counted per package, and
-- past a few a day the lookup stops comparing, so whoever holds a code
-- cannot try phones against it in silence. One row per package that was
-- missed; a day after its first miss the count starts again.
CREATE TABLE balance_phone_misses (
    balance_id bigint PRIMARY KEY REFERENCES balances ON DELETE CASCADE,
    salon_id   bigint NOT NULL,
    misses     integer NOT NULL CHECK (misses > 0),
    since      timestamptz NOT NULL
);

-- What live bookings hold, with the salon of each hold, for its readers to
-- scope by.
CREATE OR REPLACE VIEW balance_holds AS
SELECT e.balance_id, e.booking_id, -e.delta AS units, e.salon_id
FROM balance_entries e
WHERE e.type = 'reserve'
  AND NOT EXISTS (SELECT 1 FROM balance_entries x WHERE x.balance_id = e.balance_id AND x.booking_id = e.booking_id
                  AND x.type IN ('spend', 'release'));

-- +goose Down
DROP VIEW balance_holds;
CREATE VIEW balance_holds AS
SELECT e.balance_id, e.booking_id, -e.delta AS units
FROM balance_entries e
WHERE e.type = 'reserve'
  AND NOT EXISTS (SELECT 1 FROM balance_entries x WHERE x.balance_id = e.balance_id AND x.booking_id = e.booking_id
                  AND x.type IN ('spend', 'release'));
DROP TABLE balance_phone_misses;
