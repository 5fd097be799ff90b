-- +goose Up
-- The booking core: salons, their masters, services and shifts, clients and
-- bookings. The guarantee that a master is never booked twice lives in the
-- bookings_master_no_overlap constraint below, whatever path writes the row.

CREATE EXTENSION IF NOT EXISTS btree_gist;

-- booking_slot_end is the end of the interval a booking occupies. It is
-- IMMUTABLE (so it can sit in an index expression) because it only adds
-- minutes, which means the same instant in every time zone; never make a
-- function like this IMMUTABLE over day or month arithmetic.
-- +goose StatementBegin
CREATE FUNCTION booking_slot_end(starts timestamptz, dur integer) RETURNS timestamptz
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN starts + make_interval(mins => dur);
-- +goose StatementEnd

CREATE TABLE salons (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    slug            text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9][a-z0-9-]{1,62}$'),
    name            text NOT NULL CHECK (name <> ''),
    timezone        text NOT NULL,
    currency        text NOT NULL DEFAULT 'RUB' CHECK (currency ~ '^[A-Z]{3}$'),
    locale          text NOT NULL DEFAULT 'ru' CHECK (locale IN ('ru', 'en')),
    slot_step_min   integer NOT NULL DEFAULT 15 CHECK (slot_step_min BETWEEN 5 AND 240),
    min_notice_min  integer NOT NULL DEFAULT 60 CHECK (min_notice_min BETWEEN 0 AND 10080),
    hold_min        integer NOT NULL DEFAULT 15 CHECK (hold_min BETWEEN 1 AND 1440),
    cutoff_hours    integer NOT NULL DEFAULT 3 CHECK (cutoff_hours BETWEEN 0 AND 720),
    horizon_days    integer NOT NULL DEFAULT 60 CHECK (horizon_days BETWEEN 1 AND 366),
    refund_policy   text NOT NULL DEFAULT 'before_cutoff'
                    CHECK (refund_policy IN ('always', 'before_cutoff', 'never')),
    -- bumped by triggers whenever the salon's settings, services, masters or
    -- offers change: processes cache the catalogue and reload it when this moves
    catalog_version bigint NOT NULL DEFAULT 0,
    created_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE masters (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    salon_id    bigint NOT NULL REFERENCES salons ON DELETE CASCADE,
    name        text NOT NULL CHECK (name <> ''),
    phone       text CHECK (phone ~ '^\+[1-9][0-9]{7,14}$'),
    telegram_id bigint,
    active      boolean NOT NULL DEFAULT true,
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (salon_id, name),
    UNIQUE (salon_id, id)
);
CREATE UNIQUE INDEX masters_telegram ON masters (salon_id, telegram_id) WHERE telegram_id IS NOT NULL;

CREATE TABLE services (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    salon_id     bigint NOT NULL REFERENCES salons ON DELETE CASCADE,
    name         text NOT NULL CHECK (name <> ''),
    duration_min integer NOT NULL CHECK (duration_min BETWEEN 5 AND 720),
    buffer_min   integer NOT NULL DEFAULT 0 CHECK (buffer_min BETWEEN 0 AND 240),
    price        numeric(12, 2) NOT NULL DEFAULT 0 CHECK (price >= 0),
    deposit      numeric(12, 2) NOT NULL DEFAULT 0 CHECK (deposit >= 0 AND deposit <= price),
    active       boolean NOT NULL DEFAULT true,
    created_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (salon_id, name),
    UNIQUE (salon_id, id)
);

-- Which master does which service, with optional per-master duration and price.
CREATE TABLE master_services (
    salon_id     bigint NOT NULL,
    master_id    bigint NOT NULL,
    service_id   bigint NOT NULL,
    duration_min integer CHECK (duration_min BETWEEN 5 AND 720),
    price        numeric(12, 2) CHECK (price >= 0),
    PRIMARY KEY (master_id, service_id),
    FOREIGN KEY (salon_id, master_id) REFERENCES masters (salon_id, id) ON DELETE CASCADE,
    FOREIGN KEY (salon_id, service_id) REFERENCES services (salon_id, id) ON DELETE CASCADE
);
CREATE INDEX master_services_service ON master_services (service_id);

-- A master's working intervals. work_date is the salon-local day the shift
-- belongs to (the unit the schedule import replaces); the instants are what
-- slot computation uses, so DST is resolved once, when the shift is written.
CREATE TABLE shifts (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    salon_id        bigint NOT NULL,
    master_id       bigint NOT NULL,
    work_date       date NOT NULL,
    starts_at       timestamptz NOT NULL,
    ends_at         timestamptz NOT NULL,
    break_starts_at timestamptz,
    break_ends_at   timestamptz,
    FOREIGN KEY (salon_id, master_id) REFERENCES masters (salon_id, id) ON DELETE CASCADE,
    CHECK (ends_at > starts_at AND ends_at - starts_at <= interval '24 hours'),
    CHECK ((break_starts_at IS NULL) = (break_ends_at IS NULL)),
    CHECK (break_starts_at IS NULL OR
           (break_starts_at >= starts_at AND break_ends_at > break_starts_at AND break_ends_at <= ends_at)),
    CONSTRAINT shifts_master_no_overlap EXCLUDE USING gist (
        master_id WITH =, tstzrange(starts_at, ends_at) WITH &&)
);
CREATE INDEX shifts_master_day ON shifts (master_id, work_date);
-- Shifts last at most 24 hours, so "the shifts around t" is a bounded range
-- scan: starts_at in (t - 24h, t].
CREATE INDEX shifts_master_start ON shifts (master_id, starts_at);

CREATE TABLE clients (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    salon_id    bigint NOT NULL REFERENCES salons ON DELETE CASCADE,
    name        text NOT NULL DEFAULT '',
    phone       text CHECK (phone ~ '^\+[1-9][0-9]{7,14}$'),
    telegram_id bigint,
    notes       text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (salon_id, id),
    CHECK (phone IS NOT NULL OR telegram_id IS NOT NULL)
);
CREATE UNIQUE INDEX clients_phone ON clients (salon_id, phone) WHERE phone IS NOT NULL;
CREATE UNIQUE INDEX clients_telegram ON clients (salon_id, telegram_id) WHERE telegram_id IS NOT NULL;

CREATE TABLE bookings (
    id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    salon_id          bigint NOT NULL,
    master_id         bigint NOT NULL,
    service_id        bigint NOT NULL,
    client_id         bigint NOT NULL,
    starts_at         timestamptz NOT NULL,
    duration_min      integer NOT NULL CHECK (duration_min BETWEEN 5 AND 720),
    -- minutes kept free after the service (cleaning, rest); part of the
    -- occupied interval, not of what the client sees.
    buffer_min        integer NOT NULL DEFAULT 0 CHECK (buffer_min BETWEEN 0 AND 240),
    status            text NOT NULL
                      CHECK (status IN ('pending', 'confirmed', 'cancelled', 'completed', 'no_show')),
    source            text NOT NULL CHECK (source IN ('bot', 'widget', 'panel', 'import')),
    price             numeric(12, 2) NOT NULL DEFAULT 0,
    deposit           numeric(12, 2) NOT NULL DEFAULT 0,
    hold_expires_at   timestamptz,
    manage_token_hash bytea,
    notes             text NOT NULL DEFAULT '',
    cancel_reason     text NOT NULL DEFAULT '',
    -- who created the booking; later changes are rows of booking_events
    created_by_kind   text NOT NULL DEFAULT 'system' CHECK (created_by_kind IN ('client', 'admin', 'system')),
    created_by_id     bigint,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (salon_id, master_id) REFERENCES masters (salon_id, id),
    FOREIGN KEY (salon_id, service_id) REFERENCES services (salon_id, id),
    FOREIGN KEY (salon_id, client_id) REFERENCES clients (salon_id, id),
    CHECK (status <> 'pending' OR hold_expires_at IS NOT NULL),
    CONSTRAINT bookings_master_no_overlap EXCLUDE USING gist (
        salon_id WITH =,
        master_id WITH =,
        tstzrange(starts_at, booking_slot_end(starts_at, duration_min + buffer_min)) WITH &&
    ) WHERE (status IN ('pending', 'confirmed'))
);
CREATE INDEX bookings_master_time ON bookings (master_id, starts_at);
CREATE INDEX bookings_client ON bookings (client_id, starts_at);
CREATE INDEX bookings_salon_time ON bookings (salon_id, starts_at);
CREATE INDEX bookings_hold ON bookings (hold_expires_at) WHERE status = 'pending';

-- Every change of a booking after its creation (which the booking row itself
-- records in created_by_*), with who made it.
CREATE TABLE booking_events (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    salon_id   bigint NOT NULL,
    booking_id bigint NOT NULL REFERENCES bookings ON DELETE CASCADE,
    action     text NOT NULL,
    actor_kind text NOT NULL CHECK (actor_kind IN ('client', 'admin', 'system')),
    actor_id   bigint,
    details    jsonb NOT NULL DEFAULT '{}',
    at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX booking_events_booking ON booking_events (booking_id, id);

-- Idempotency records: the first request with a key stores its fingerprint and
-- result; a replay with the same fingerprint gets the same result.
CREATE TABLE idempotency_keys (
    salon_id     bigint NOT NULL REFERENCES salons ON DELETE CASCADE,
    scope        text NOT NULL,
    key          text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
    request_hash bytea NOT NULL,
    result       jsonb,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (salon_id, scope, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- Catalogue versioning. Every write to services, masters or master_services
-- (whatever its path: the app, the importer, psql) bumps the salon's
-- catalog_version, as does any change of the salon row itself.
-- +goose StatementBegin
CREATE FUNCTION catalog_changed_new() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE salons SET catalog_version = catalog_version + 1 WHERE id IN (SELECT salon_id FROM new_rows);
    RETURN NULL;
END $$;
CREATE FUNCTION catalog_changed_old() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE salons SET catalog_version = catalog_version + 1 WHERE id IN (SELECT salon_id FROM old_rows);
    RETURN NULL;
END $$;
CREATE FUNCTION catalog_changed_both() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE salons SET catalog_version = catalog_version + 1
    WHERE id IN (SELECT salon_id FROM new_rows UNION SELECT salon_id FROM old_rows);
    RETURN NULL;
END $$;
CREATE FUNCTION salon_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.catalog_version = OLD.catalog_version THEN
        NEW.catalog_version := OLD.catalog_version + 1;
    END IF;
    RETURN NEW;
END $$;
-- +goose StatementEnd
CREATE TRIGGER salons_changed BEFORE UPDATE ON salons FOR EACH ROW EXECUTE FUNCTION salon_changed();
CREATE TRIGGER services_ins AFTER INSERT ON services REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_changed_new();
CREATE TRIGGER services_upd AFTER UPDATE ON services REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_changed_both();
CREATE TRIGGER services_del AFTER DELETE ON services REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_changed_old();
CREATE TRIGGER masters_ins AFTER INSERT ON masters REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_changed_new();
CREATE TRIGGER masters_upd AFTER UPDATE ON masters REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_changed_both();
CREATE TRIGGER masters_del AFTER DELETE ON masters REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_changed_old();
CREATE TRIGGER master_services_ins AFTER INSERT ON master_services REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_changed_new();
CREATE TRIGGER master_services_upd AFTER UPDATE ON master_services REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_changed_both();
CREATE TRIGGER master_services_del AFTER DELETE ON master_services REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_changed_old();

-- +goose Down
DROP TABLE idempotency_keys;
DROP TABLE booking_events;
DROP TABLE bookings;
DROP TABLE clients;
DROP TABLE shifts;
DROP TABLE master_services;
DROP TABLE services;
DROP TABLE masters;
DROP TABLE salons;
DROP FUNCTION salon_changed();
DROP FUNCTION catalog_changed_both();
DROP FUNCTION catalog_changed_old();
DROP FUNCTION catalog_changed_new();
DROP FUNCTION booking_slot_end(timestamptz, integer);
