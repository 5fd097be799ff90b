-- +goose Up
-- A salon's own cancellation (a master ill, the salon closed: the desk
-- said so) frees no time for the waitlist: the time cannot be served, and
-- an offer of it would book a client with a master who is not there. The
-- cancelling transaction says so with salon.not_offered.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION waitlist_busy_freed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF coalesce(current_setting('salon.not_offered', true), '') = 'on' THEN
        RETURN NULL;
    END IF;
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
