-- +goose Up
-- The admin panel: server-side sessions, login throttling, the user's
-- language, and the audit log of every change made in the panel or by an
-- import.

-- A panel session. The cookie carries a random id; only its SHA-256 is
-- stored, so a copy of the database opens no session. A session ends when
-- idle too long, at its absolute expiry, at logout, or with its user.
CREATE TABLE panel_sessions (
    id_hash     bytea PRIMARY KEY,
    user_id     bigint NOT NULL REFERENCES users ON DELETE CASCADE,
    created_at  timestamptz NOT NULL DEFAULT now(),
    seen_at     timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL
);
CREATE INDEX panel_sessions_user ON panel_sessions (user_id);
CREATE INDEX panel_sessions_expires ON panel_sessions (expires_at);

-- Failed logins, by a hash of "email:" or "ip:" and the address: enough to
-- count them, nothing to read back.
CREATE TABLE login_failures (
    key_hash  bytea NOT NULL,
    failed_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX login_failures_key ON login_failures (key_hash, failed_at);

-- The panel's language for the user; NULL: the salon's locale.
ALTER TABLE users ADD COLUMN lang text CHECK (lang IN ('ru', 'en'));

-- Every change made in the panel or by an import. The rows are written by
-- triggers, in the transaction of the change, whenever that transaction
-- names its actor (set_config('salon.actor', ..., true)): a change cannot
-- land without its row, whatever code path made it. old and new hold the
-- changed columns only, and never a secret (password, token and code
-- hashes are left out).
CREATE TABLE audit_log (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    salon_id   bigint NOT NULL REFERENCES salons ON DELETE CASCADE,
    actor      text NOT NULL,
    action     text NOT NULL,
    entity     text NOT NULL,
    entity_id  bigint,
    old        jsonb,
    new        jsonb,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_log_salon ON audit_log (salon_id, created_at DESC, id DESC);

-- +goose StatementBegin
CREATE FUNCTION audit_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    who    text := current_setting('salon.actor', true);
    entity text := TG_ARGV[0];
    o      jsonb;
    n      jsonb;
    k      text;
    act    text := lower(TG_OP);
    salon  bigint;
    eid    bigint;
BEGIN
    IF who IS NULL OR who = '' THEN
        RETURN NULL;
    END IF;
    IF TG_OP <> 'INSERT' THEN
        o := to_jsonb(OLD) - 'password_hash' - 'manage_token_hash' - 'code_hash' - 'updated_at' - 'catalog_version';
    END IF;
    IF TG_OP <> 'DELETE' THEN
        n := to_jsonb(NEW) - 'password_hash' - 'manage_token_hash' - 'code_hash' - 'updated_at' - 'catalog_version';
    END IF;
    IF TG_OP = 'UPDATE' THEN
        FOR k IN SELECT jsonb_object_keys(o) LOOP
            IF o -> k IS NOT DISTINCT FROM n -> k AND k NOT IN ('id') THEN
                o := o - k;
                n := n - k;
            END IF;
        END LOOP;
        IF n - 'id' = '{}'::jsonb THEN
            RETURN NULL; -- nothing changed
        END IF;
    END IF;
    IF TG_TABLE_NAME = 'salons' THEN
        salon := COALESCE(n ->> 'id', o ->> 'id')::bigint;
    ELSE
        salon := COALESCE(NEW.salon_id, OLD.salon_id);
    END IF;
    IF TG_TABLE_NAME IN ('master_services', 'master_link_codes') THEN
        eid := COALESCE(n ->> 'master_id', o ->> 'master_id')::bigint;
    ELSE
        eid := COALESCE(n ->> 'id', o ->> 'id')::bigint;
    END IF;
    IF TG_OP = 'INSERT' THEN
        act := 'create';
    ELSIF TG_TABLE_NAME = 'bookings' AND TG_OP = 'UPDATE' THEN
        IF n ? 'status' THEN
            act := n ->> 'status';
        ELSIF n ? 'starts_at' OR n ? 'master_id' THEN
            act := 'reschedule';
        END IF;
    END IF;
    INSERT INTO audit_log (salon_id, actor, action, entity, entity_id, old, new)
    VALUES (salon, who, act, entity, eid, o, n);
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- Only transactions that name an actor pay for the trigger.
CREATE FUNCTION audited() RETURNS boolean LANGUAGE sql STABLE
    RETURN COALESCE(current_setting('salon.actor', true), '') <> '';

CREATE TRIGGER salons_audit AFTER UPDATE ON salons FOR EACH ROW
    WHEN (audited()) EXECUTE FUNCTION audit_change('salon');
CREATE TRIGGER users_audit AFTER INSERT OR UPDATE OR DELETE ON users FOR EACH ROW
    WHEN (audited()) EXECUTE FUNCTION audit_change('user');
CREATE TRIGGER masters_audit AFTER INSERT OR UPDATE OR DELETE ON masters FOR EACH ROW
    WHEN (audited()) EXECUTE FUNCTION audit_change('master');
CREATE TRIGGER services_audit AFTER INSERT OR UPDATE OR DELETE ON services FOR EACH ROW
    WHEN (audited()) EXECUTE FUNCTION audit_change('service');
CREATE TRIGGER master_services_audit AFTER INSERT OR UPDATE OR DELETE ON master_services FOR EACH ROW
    WHEN (audited()) EXECUTE FUNCTION audit_change('master_service');
CREATE TRIGGER shifts_audit AFTER INSERT OR UPDATE OR DELETE ON shifts FOR EACH ROW
    WHEN (audited()) EXECUTE FUNCTION audit_change('shift');
CREATE TRIGGER clients_audit AFTER INSERT OR UPDATE OR DELETE ON clients FOR EACH ROW
    WHEN (audited()) EXECUTE FUNCTION audit_change('client');
CREATE TRIGGER bookings_audit AFTER INSERT OR UPDATE ON bookings FOR EACH ROW
    WHEN (audited()) EXECUTE FUNCTION audit_change('booking');
CREATE TRIGGER master_link_codes_audit AFTER INSERT ON master_link_codes FOR EACH ROW
    WHEN (audited()) EXECUTE FUNCTION audit_change('master_link_code');

-- +goose Down
DROP TRIGGER master_link_codes_audit ON master_link_codes;
DROP TRIGGER bookings_audit ON bookings;
DROP TRIGGER clients_audit ON clients;
DROP TRIGGER shifts_audit ON shifts;
DROP TRIGGER master_services_audit ON master_services;
DROP TRIGGER services_audit ON services;
DROP TRIGGER masters_audit ON masters;
DROP TRIGGER users_audit ON users;
DROP TRIGGER salons_audit ON salons;
DROP FUNCTION audit_change();
DROP FUNCTION audited();
DROP TABLE audit_log;
ALTER TABLE users DROP COLUMN lang;
DROP TABLE login_failures;
DROP TABLE panel_sessions;
