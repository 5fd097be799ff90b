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

-- Freed time is kept once offered (offered_at), a while, for the fill
-- rate: the minutes freed from bookings, against those rebooked from the
-- list. cause: 'booking' (busy time that went) or 'shift' (working time
-- that came).
ALTER TABLE waitlist_freed ADD COLUMN cause text NOT NULL DEFAULT 'booking' CHECK (cause IN ('booking', 'shift'));
ALTER TABLE waitlist_freed ADD COLUMN offered_at timestamptz;
CREATE INDEX waitlist_freed_due ON waitlist_freed (id) WHERE offered_at IS NULL;
CREATE INDEX waitlist_freed_salon ON waitlist_freed (salon_id, starts_at) WHERE cause = 'booking';

-- Freed time, whatever frees it: a booking's busy interval that goes (a
-- cancellation, an expired hold, a move, a deletion) and a master's
-- working time that comes (a shift added or changed), while somebody waits
-- at the salon. Written in the transaction that frees it, which wakes
-- every replica on commit (NOTIFY waitlist_freed); offered by OfferFreed
-- (the whole of a freed stretch, as the calendar then is).
-- +goose StatementBegin
CREATE FUNCTION waitlist_busy_freed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO waitlist_freed (salon_id, master_id, starts_at, ends_at)
    SELECT o.salon_id, o.master_id, o.starts_at, booking_slot_end(o.starts_at, o.duration_min)
    FROM old_rows o
    WHERE EXISTS (SELECT 1 FROM waitlist_entries w WHERE w.salon_id = o.salon_id AND w.status = 'waiting')
      -- (a visit that took place frees nothing)
      AND NOT EXISTS (SELECT 1 FROM bookings b WHERE b.id = o.booking_id AND b.status IN ('completed', 'no_show'));
    IF FOUND THEN
        PERFORM pg_notify('waitlist_freed', '');
    END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION waitlist_shift_freed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO waitlist_freed (salon_id, master_id, starts_at, ends_at, cause)
    SELECT n.salon_id, n.master_id, n.starts_at, n.ends_at, 'shift'
    FROM new_rows n
    WHERE EXISTS (SELECT 1 FROM waitlist_entries w WHERE w.salon_id = n.salon_id AND w.status = 'waiting');
    IF FOUND THEN
        PERFORM pg_notify('waitlist_freed', '');
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER waitlist_busy_freed AFTER DELETE ON master_busy
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION waitlist_busy_freed();
CREATE TRIGGER waitlist_shift_added AFTER INSERT ON shifts
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION waitlist_shift_freed();
CREATE TRIGGER waitlist_shift_changed AFTER UPDATE ON shifts
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION waitlist_shift_freed();

-- +goose Down
DROP INDEX waitlist_freed_salon;
DROP INDEX waitlist_freed_due;
ALTER TABLE waitlist_freed DROP COLUMN offered_at;
ALTER TABLE waitlist_freed DROP COLUMN cause;
DROP TRIGGER waitlist_shift_changed ON shifts;
DROP TRIGGER waitlist_shift_added ON shifts;
DROP TRIGGER waitlist_busy_freed ON master_busy;
DROP FUNCTION waitlist_shift_freed();
DROP FUNCTION waitlist_busy_freed();
DROP TABLE waitlist_links;
DROP INDEX waitlist_offers_booking;
ALTER TABLE waitlist_offers DROP COLUMN freed_id;
DELETE FROM messages WHERE offer_id IS NOT NULL;
ALTER TABLE messages DROP CONSTRAINT messages_about_one;
ALTER TABLE messages DROP COLUMN offer_id;
ALTER TABLE messages ALTER COLUMN booking_id SET NOT NULL;
ALTER TABLE waitlist_entries DROP COLUMN origin_ref;
ALTER TABLE waitlist_entries DROP COLUMN origin_channel;
ALTER TABLE waitlist_entries DROP COLUMN items;
ALTER TABLE waitlist_entries DROP COLUMN source;
