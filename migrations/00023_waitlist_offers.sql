-- +goose Up
-- Waitlist offers reach their clients: a message of an offer (kind
-- waitlist_offer) names the offer instead of a booking, and carries a link
-- that takes it; an entry remembers the front end it was made from (a
-- hold's booking is booked from there).

ALTER TABLE waitlist_entries ADD COLUMN source text NOT NULL DEFAULT 'widget' CHECK (source IN ('bot', 'widget', 'panel', 'import'));
-- the time of an entry's service asked for, as the client asked for it: a
-- visit's services in order (empty: service_id alone)
ALTER TABLE waitlist_entries ADD COLUMN items jsonb NOT NULL DEFAULT '[]';
-- the chat identity that joined (the bot), which sees the entry and takes its offers
ALTER TABLE waitlist_entries ADD COLUMN origin_channel text;
ALTER TABLE waitlist_entries ADD COLUMN origin_ref text;

ALTER TABLE messages ALTER COLUMN booking_id DROP NOT NULL;
ALTER TABLE messages ADD COLUMN offer_id bigint REFERENCES waitlist_offers ON DELETE CASCADE;
ALTER TABLE messages ADD CONSTRAINT messages_about_one CHECK ((booking_id IS NULL) <> (offer_id IS NULL));
CREATE UNIQUE INDEX messages_offer ON messages (offer_id, channel, recipient) WHERE offer_id IS NOT NULL;
-- An offer's e-mail has its unsubscribe link too: a link of the salon and
-- the address, of no booking.
ALTER TABLE booking_links ALTER COLUMN booking_id DROP NOT NULL;
ALTER TABLE booking_links ADD CONSTRAINT booking_links_of_a_booking CHECK (booking_id IS NOT NULL OR action = 'unsubscribe');

-- The freed time an offer was made of (none: offered by hand): how long
-- the offer took after the time freed.
ALTER TABLE waitlist_offers ADD COLUMN freed_id bigint;

-- A held offer's booking (hold mode: the pending booking that keeps the
-- time for the entry until expires_at).
CREATE INDEX waitlist_offers_booking ON waitlist_offers (booking_id) WHERE booking_id IS NOT NULL;

-- Links in offer messages: each takes one offer, expiring with it, stored
-- as the SHA-256 of the token (the token itself is only in the message).
CREATE TABLE waitlist_links (
    token_hash bytea PRIMARY KEY,
    offer_id   bigint NOT NULL REFERENCES waitlist_offers ON DELETE CASCADE,
    message_id bigint REFERENCES messages ON DELETE SET NULL,
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX waitlist_links_offer ON waitlist_links (offer_id);
CREATE INDEX waitlist_links_expired ON waitlist_links (expires_at);

-- Freed time is kept once offered (offered_at), a while, for the fill
-- rate: the minutes freed from bookings, against those rebooked from the
-- list. cause: 'booking' (busy time that went), 'hold' (a waitlist hold's
-- time that went back), 'shift' (working time
-- that came) or 'shift_gone' (working time that went, in the transaction
-- xact: a day's shifts are replaced by a delete and an insert, and only
-- what the new shifts add is freed; never offered itself).
ALTER TABLE waitlist_freed ADD COLUMN cause text NOT NULL DEFAULT 'booking' CHECK (cause IN ('booking', 'hold', 'shift', 'shift_gone'));
ALTER TABLE waitlist_freed ADD COLUMN xact xid8 NOT NULL DEFAULT pg_current_xact_id();
ALTER TABLE waitlist_freed ADD COLUMN offered_at timestamptz;
CREATE INDEX waitlist_freed_due ON waitlist_freed (id) WHERE offered_at IS NULL;
CREATE INDEX waitlist_freed_salon ON waitlist_freed (salon_id, starts_at) WHERE cause = 'booking';
CREATE INDEX waitlist_freed_gone ON waitlist_freed (xact, master_id) WHERE cause = 'shift_gone';
-- an accept in progress (a lease): one booking per entry, whatever taps at once
ALTER TABLE waitlist_entries ADD COLUMN accepting_at timestamptz;
CREATE INDEX waitlist_entries_booking ON waitlist_entries (booking_id) WHERE booking_id IS NOT NULL;

-- Freed time, whatever frees it: a booking's busy interval that goes (a
-- cancellation, an expired hold, a move, a deletion) and a master's
-- working time that comes (a shift added or changed), while somebody waits
-- at the salon. Written in the transaction that frees it, which wakes
-- every replica on commit (NOTIFY waitlist_freed); offered by OfferFreed
-- (the whole of a freed stretch, as the calendar then is).
-- +goose StatementBegin
CREATE FUNCTION waitlist_busy_freed() RETURNS trigger LANGUAGE plpgsql AS $$
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

-- Working time that came: each new shift less what the same transaction
-- removed of the master's shifts (a schedule saved unchanged frees
-- nothing); an update, the new shift less the old.
CREATE FUNCTION waitlist_shift_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO waitlist_freed (salon_id, master_id, starts_at, ends_at, cause)
    SELECT n.salon_id, n.master_id, lower(r), upper(r), 'shift'
    FROM new_rows n,
         unnest(tstzmultirange(tstzrange(n.starts_at, n.ends_at)) - COALESCE(
             (SELECT range_agg(tstzrange(g.starts_at, g.ends_at)) FROM waitlist_freed g
              WHERE g.cause = 'shift_gone' AND g.xact = pg_current_xact_id() AND g.master_id = n.master_id),
             '{}'::tstzmultirange)) r
    WHERE EXISTS (SELECT 1 FROM waitlist_entries w WHERE w.salon_id = n.salon_id AND w.status = 'waiting');
    IF FOUND THEN
        PERFORM pg_notify('waitlist_freed', '');
    END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION waitlist_shift_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO waitlist_freed (salon_id, master_id, starts_at, ends_at, cause, offered_at)
    SELECT o.salon_id, o.master_id, o.starts_at, o.ends_at, 'shift_gone', now()
    FROM old_rows o
    WHERE EXISTS (SELECT 1 FROM waitlist_entries w WHERE w.salon_id = o.salon_id AND w.status = 'waiting');
    RETURN NULL;
END $$;

CREATE FUNCTION waitlist_shift_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO waitlist_freed (salon_id, master_id, starts_at, ends_at, cause)
    SELECT n.salon_id, n.master_id, lower(r), upper(r), 'shift'
    FROM new_rows n JOIN old_rows o ON o.id = n.id,
         unnest(tstzmultirange(tstzrange(n.starts_at, n.ends_at)) - tstzmultirange(tstzrange(o.starts_at, o.ends_at))) r
    WHERE EXISTS (SELECT 1 FROM waitlist_entries w WHERE w.salon_id = n.salon_id AND w.status = 'waiting');
    IF FOUND THEN
        PERFORM pg_notify('waitlist_freed', '');
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER waitlist_busy_freed AFTER DELETE ON master_busy
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION waitlist_busy_freed();
CREATE TRIGGER waitlist_shift_removed AFTER DELETE ON shifts
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION waitlist_shift_removed();
CREATE TRIGGER waitlist_shift_added AFTER INSERT ON shifts
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION waitlist_shift_added();
CREATE TRIGGER waitlist_shift_changed AFTER UPDATE ON shifts
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION waitlist_shift_changed();

-- +goose Down
DROP INDEX waitlist_entries_booking;
ALTER TABLE waitlist_entries DROP COLUMN accepting_at;
DROP INDEX waitlist_freed_gone;
DROP INDEX waitlist_freed_salon;
DROP INDEX waitlist_freed_due;
ALTER TABLE waitlist_freed DROP COLUMN offered_at;
ALTER TABLE waitlist_freed DROP COLUMN xact;
ALTER TABLE waitlist_freed DROP COLUMN cause;
DROP TRIGGER waitlist_shift_changed ON shifts;
DROP TRIGGER waitlist_shift_added ON shifts;
DROP TRIGGER waitlist_shift_removed ON shifts;
DROP TRIGGER waitlist_busy_freed ON master_busy;
DROP FUNCTION waitlist_shift_changed();
DROP FUNCTION waitlist_shift_removed();
DROP FUNCTION waitlist_shift_added();
DROP FUNCTION waitlist_busy_freed();
DROP TABLE waitlist_links;
DROP INDEX waitlist_offers_booking;
ALTER TABLE waitlist_offers DROP COLUMN freed_id;
DELETE FROM booking_links WHERE booking_id IS NULL;
ALTER TABLE booking_links DROP CONSTRAINT booking_links_of_a_booking;
ALTER TABLE booking_links ALTER COLUMN booking_id SET NOT NULL;
DELETE FROM messages WHERE offer_id IS NOT NULL;
ALTER TABLE messages DROP CONSTRAINT messages_about_one;
ALTER TABLE messages DROP COLUMN offer_id;
ALTER TABLE messages ALTER COLUMN booking_id SET NOT NULL;
ALTER TABLE waitlist_entries DROP COLUMN origin_ref;
ALTER TABLE waitlist_entries DROP COLUMN origin_channel;
ALTER TABLE waitlist_entries DROP COLUMN items;
ALTER TABLE waitlist_entries DROP COLUMN source;
