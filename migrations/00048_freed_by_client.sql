-- +goose Up
-- Freed time remembers whose booking freed it: a client who cancels or
-- moves her booking, or lets a waitlist hold for her lapse, is not
-- offered that time back from her waiting entries (she just gave it up).
-- Time a schedule frees (a shift added or longer) has none.
ALTER TABLE waitlist_freed ADD COLUMN client_id bigint;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION waitlist_busy_freed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO waitlist_freed (salon_id, master_id, starts_at, ends_at, cause, client_id)
    SELECT o.salon_id, o.master_id, o.starts_at, booking_slot_end(o.starts_at, o.duration_min),
           CASE WHEN EXISTS (SELECT 1 FROM waitlist_offers h WHERE h.booking_id = o.booking_id AND h.status IN ('held', 'expired'))
                THEN 'hold' ELSE 'booking' END,
           (SELECT b.client_id FROM bookings b WHERE b.id = o.booking_id)
    FROM old_rows o
    WHERE EXISTS (SELECT 1 FROM waitlist_entries w WHERE w.salon_id = o.salon_id AND w.status = 'waiting')
      -- (a visit that took place frees nothing)
      AND NOT EXISTS (SELECT 1 FROM bookings b WHERE b.id = o.booking_id AND b.status IN ('completed', 'no_show'));
    IF FOUND THEN
        PERFORM pg_notify('waitlist_freed', '');
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION waitlist_busy_freed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO waitlist_freed (salon_id, master_id, starts_at, ends_at, cause)
    SELECT o.salon_id, o.master_id, o.starts_at, booking_slot_end(o.starts_at, o.duration_min),
           CASE WHEN EXISTS (SELECT 1 FROM waitlist_offers h WHERE h.booking_id = o.booking_id AND h.status IN ('held', 'expired'))
                THEN 'hold' ELSE 'booking' END
    FROM old_rows o
    WHERE EXISTS (SELECT 1 FROM waitlist_entries w WHERE w.salon_id = o.salon_id AND w.status = 'waiting')
      -- (a visit that took place frees nothing)
      AND NOT EXISTS (SELECT 1 FROM bookings b WHERE b.id = o.booking_id AND b.status IN ('completed', 'no_show'));
    IF FOUND THEN
        PERFORM pg_notify('waitlist_freed', '');
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd
ALTER TABLE waitlist_freed DROP COLUMN client_id;
