-- +goose Up
-- What live bookings hold of each balance: the reservations not yet spent
-- or given back (a booking's end settles its reservation by a spend or a
-- release entry). Read where a balance is refunded (what stays held) and
-- where its buyer is told of a refund: one definition for both.
CREATE VIEW balance_holds AS
SELECT e.balance_id, e.booking_id, -e.delta AS units
FROM balance_entries e
WHERE e.type = 'reserve'
  AND NOT EXISTS (SELECT 1 FROM balance_entries x WHERE x.balance_id = e.balance_id AND x.booking_id = e.booking_id
                  AND x.type IN ('spend', 'release'));

-- +goose Down
DROP VIEW balance_holds;
