-- +goose Up
-- Visits: several services booked as one, and services with processing
-- time.
--
-- A visit is one bookings row per segment. Its first segment is its head
-- (visit_of is NULL, visit_id its own id); the others name the head in
-- visit_of. A single-service booking is a visit of one: nothing to write,
-- nothing to index (the index on visit_of holds only the segments after a
-- head).
--
-- A service may have processing time: after duration_min the client stays
-- processing_min (a colour taking), while the master is free for others,
-- then the master works finish_min more. The master's busy time is then two
-- intervals, and the gap between them is free. Every busy interval of every
-- active booking is one row of master_busy, under an exclusion constraint
-- of the same shape as bookings_master_no_overlap; triggers on bookings keep
-- it, whatever path writes the booking (the app, the importer, psql).
-- bookings_master_no_overlap stays, over each segment's service and buffer.

ALTER TABLE services ADD COLUMN processing_min integer NOT NULL DEFAULT 0 CHECK (processing_min BETWEEN 0 AND 480);
ALTER TABLE services ADD COLUMN finish_min integer NOT NULL DEFAULT 0 CHECK (finish_min BETWEEN 0 AND 240);
-- A finish follows a processing gap (with no gap it is part of the service).
ALTER TABLE services ADD CONSTRAINT services_finish_after_processing CHECK (finish_min = 0 OR processing_min > 0);

ALTER TABLE bookings ADD COLUMN processing_min integer NOT NULL DEFAULT 0 CHECK (processing_min BETWEEN 0 AND 480);
ALTER TABLE bookings ADD COLUMN finish_min integer NOT NULL DEFAULT 0 CHECK (finish_min BETWEEN 0 AND 240);
ALTER TABLE bookings ADD CONSTRAINT bookings_finish_after_processing CHECK (finish_min = 0 OR processing_min > 0);
ALTER TABLE bookings ADD COLUMN visit_of bigint CHECK (visit_of < id);
ALTER TABLE bookings ADD COLUMN visit_id bigint GENERATED ALWAYS AS (COALESCE(visit_of, id)) STORED;
CREATE INDEX bookings_visit ON bookings (visit_of) WHERE visit_of IS NOT NULL;

-- bookings_master_no_overlap keeps its shape (each segment's service and
-- buffer) and is now checked at the end of each statement, so one
-- statement can move every segment of a visit (an earlier segment moving
-- into a later one's old time).
ALTER TABLE bookings DROP CONSTRAINT bookings_master_no_overlap;
ALTER TABLE bookings ADD CONSTRAINT bookings_master_no_overlap EXCLUDE USING gist (
    salon_id WITH =,
    master_id WITH =,
    tstzrange(starts_at, booking_slot_end(starts_at, duration_min + buffer_min)) WITH &&
) WHERE (status IN ('pending', 'confirmed')) DEFERRABLE INITIALLY IMMEDIATE;

-- Every busy interval of every active booking: part 0 the service and its
-- buffer (before a finish, no longer than the processing), part 1 the
-- finish and the buffer again.
CREATE TABLE master_busy (
    booking_id   bigint NOT NULL,
    part         smallint NOT NULL CHECK (part IN (0, 1)),
    salon_id     bigint NOT NULL,
    master_id    bigint NOT NULL,
    starts_at    timestamptz NOT NULL,
    duration_min integer NOT NULL CHECK (duration_min > 0),
    PRIMARY KEY (booking_id, part),
    CONSTRAINT master_busy_no_overlap EXCLUDE USING gist (
        salon_id WITH =,
        master_id WITH =,
        tstzrange(starts_at, booking_slot_end(starts_at, duration_min)) WITH &&
    )
);

-- +goose StatementBegin
-- A new active booking's busy intervals (a row trigger: a booking is
-- inserted alone, and a row trigger with its WHEN costs less than a
-- statement's transition table).
CREATE FUNCTION bookings_busy_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.finish_min = 0 THEN
        INSERT INTO master_busy (booking_id, part, salon_id, master_id, starts_at, duration_min)
        VALUES (NEW.id, 0, NEW.salon_id, NEW.master_id, NEW.starts_at, NEW.duration_min + NEW.buffer_min);
    ELSE
        INSERT INTO master_busy (booking_id, part, salon_id, master_id, starts_at, duration_min)
        VALUES (NEW.id, 0, NEW.salon_id, NEW.master_id, NEW.starts_at, NEW.duration_min + least(NEW.buffer_min, NEW.processing_min)),
               (NEW.id, 1, NEW.salon_id, NEW.master_id, NEW.starts_at + make_interval(mins => NEW.duration_min + NEW.processing_min),
                NEW.finish_min + NEW.buffer_min);
    END IF;
    RETURN NULL;
END $$;

-- An update rewrites the busy intervals of the rows whose time, master or
-- activity changed: all of the old ones go before any new one comes, so
-- segments moved together never meet their own old times.
CREATE FUNCTION bookings_busy_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM master_busy WHERE booking_id IN (
        SELECT n.id FROM new_rows n JOIN old_rows o ON o.id = n.id
        WHERE (o.status IN ('pending', 'confirmed'))
          AND ((n.status NOT IN ('pending', 'confirmed'))
               OR (o.starts_at, o.master_id, o.duration_min, o.buffer_min, o.processing_min, o.finish_min)
                  IS DISTINCT FROM (n.starts_at, n.master_id, n.duration_min, n.buffer_min, n.processing_min, n.finish_min)));
    INSERT INTO master_busy (booking_id, part, salon_id, master_id, starts_at, duration_min)
    SELECT n.id, p.part, n.salon_id, n.master_id, p.starts_at, p.duration_min
    FROM new_rows n JOIN old_rows o ON o.id = n.id
    CROSS JOIN LATERAL (VALUES
        (0, n.starts_at, n.duration_min + CASE WHEN n.finish_min > 0 THEN least(n.buffer_min, n.processing_min) ELSE n.buffer_min END),
        (1, n.starts_at + make_interval(mins => n.duration_min + n.processing_min), n.finish_min + n.buffer_min)
    ) p (part, starts_at, duration_min)
    WHERE n.status IN ('pending', 'confirmed') AND (p.part = 0 OR n.finish_min > 0)
      AND ((o.status NOT IN ('pending', 'confirmed'))
           OR (o.starts_at, o.master_id, o.duration_min, o.buffer_min, o.processing_min, o.finish_min)
              IS DISTINCT FROM (n.starts_at, n.master_id, n.duration_min, n.buffer_min, n.processing_min, n.finish_min));
    RETURN NULL;
END $$;

CREATE FUNCTION bookings_busy_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM master_busy WHERE booking_id IN (SELECT id FROM old_rows);
    RETURN NULL;
END $$;

CREATE FUNCTION bookings_busy_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE master_busy;
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER bookings_busy_insert AFTER INSERT ON bookings
    FOR EACH ROW WHEN (NEW.status IN ('pending', 'confirmed')) EXECUTE FUNCTION bookings_busy_insert();
CREATE TRIGGER bookings_busy_update AFTER UPDATE ON bookings
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bookings_busy_update();
CREATE TRIGGER bookings_busy_delete AFTER DELETE ON bookings
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION bookings_busy_delete();
CREATE TRIGGER bookings_busy_truncate AFTER TRUNCATE ON bookings
    FOR EACH STATEMENT EXECUTE FUNCTION bookings_busy_truncate();

INSERT INTO master_busy (booking_id, part, salon_id, master_id, starts_at, duration_min)
SELECT id, 0, salon_id, master_id, starts_at, duration_min + buffer_min
FROM bookings WHERE status IN ('pending', 'confirmed');

-- Services a salon offers at once, by two masters for one client (a
-- manicure and a pedicure): in a visit, the second of such a pair may start
-- with the first. The pair is unordered (stored lower id first).
CREATE TABLE service_parallel (
    salon_id  bigint NOT NULL REFERENCES salons ON DELETE CASCADE,
    service_a bigint NOT NULL,
    service_b bigint NOT NULL,
    PRIMARY KEY (salon_id, service_a, service_b),
    CHECK (service_a < service_b),
    FOREIGN KEY (salon_id, service_a) REFERENCES services (salon_id, id) ON DELETE CASCADE,
    FOREIGN KEY (salon_id, service_b) REFERENCES services (salon_id, id) ON DELETE CASCADE
);

CREATE TRIGGER service_parallel_ins AFTER INSERT ON service_parallel REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_changed_new();
CREATE TRIGGER service_parallel_del AFTER DELETE ON service_parallel REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_changed_old();

-- +goose Down
DROP TABLE service_parallel;
DROP TRIGGER bookings_busy_truncate ON bookings;
DROP TRIGGER bookings_busy_delete ON bookings;
DROP TRIGGER bookings_busy_update ON bookings;
DROP TRIGGER bookings_busy_insert ON bookings;
DROP FUNCTION bookings_busy_truncate();
DROP FUNCTION bookings_busy_delete();
DROP FUNCTION bookings_busy_update();
DROP FUNCTION bookings_busy_insert();
DROP TABLE master_busy;
ALTER TABLE bookings DROP CONSTRAINT bookings_master_no_overlap;
ALTER TABLE bookings ADD CONSTRAINT bookings_master_no_overlap EXCLUDE USING gist (
    salon_id WITH =,
    master_id WITH =,
    tstzrange(starts_at, booking_slot_end(starts_at, duration_min + buffer_min)) WITH &&
) WHERE (status IN ('pending', 'confirmed'));
DROP INDEX bookings_visit;
ALTER TABLE bookings DROP COLUMN visit_id;
ALTER TABLE bookings DROP COLUMN visit_of;
ALTER TABLE bookings DROP CONSTRAINT bookings_finish_after_processing;
ALTER TABLE bookings DROP COLUMN finish_min;
ALTER TABLE bookings DROP COLUMN processing_min;
ALTER TABLE services DROP CONSTRAINT services_finish_after_processing;
ALTER TABLE services DROP COLUMN finish_min;
ALTER TABLE services DROP COLUMN processing_min;
