-- +goose Up
-- Prepaid deposits. A payment session is one attempt to take a booking's
-- deposit through a provider; the ledger records money that moved, once
-- per session and kind.

CREATE TABLE payment_sessions (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    salon_id         bigint NOT NULL REFERENCES salons ON DELETE CASCADE,
    booking_id       bigint NOT NULL REFERENCES bookings ON DELETE CASCADE,
    provider         text NOT NULL,
    status           text NOT NULL CHECK (status IN ('registering', 'registered', 'unknown', 'authorized', 'canceling',
                                                     'completed', 'canceled', 'failed', 'refunding', 'refunded')),
    amount           numeric(12, 2) NOT NULL CHECK (amount > 0),
    currency         text NOT NULL,
    -- the provider's idempotence key for creating the payment: stable, so a
    -- retried create after a lost answer finds the same payment
    idempotence_key  text NOT NULL UNIQUE,
    external_id      text,
    confirmation_url text,
    -- written only by a transition that read the current version
    version          integer NOT NULL DEFAULT 0,
    -- the one-time right to cancel or refund: taken (set NULL) in the
    -- transaction that moves the session to canceling or refunding
    cancel_token     text,
    refund_amount    numeric(12, 2),
    refund_key       text,
    -- the sweep: when to look again, how often it looked, who holds it
    next_check_at    timestamptz NOT NULL DEFAULT now(),
    checks           integer NOT NULL DEFAULT 0,
    lease_until      timestamptz,
    last_error       text NOT NULL DEFAULT '',
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);
-- At most one active session per booking.
CREATE UNIQUE INDEX payment_sessions_active ON payment_sessions (booking_id)
    WHERE status IN ('registering', 'registered', 'unknown', 'authorized', 'canceling', 'refunding');
CREATE UNIQUE INDEX payment_sessions_external ON payment_sessions (provider, external_id) WHERE external_id IS NOT NULL;
CREATE INDEX payment_sessions_due ON payment_sessions (next_check_at)
    WHERE status IN ('registering', 'registered', 'unknown', 'authorized', 'canceling', 'refunding');
CREATE INDEX payment_sessions_booking ON payment_sessions (booking_id);

-- Every change of a session's state, written by a trigger: the saga's
-- history (and what the state diagram in docs/PAYMENTS.md is checked
-- against).
CREATE TABLE payment_events (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id bigint NOT NULL REFERENCES payment_sessions ON DELETE CASCADE,
    from_status text,
    to_status  text NOT NULL,
    at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX payment_events_session ON payment_events (session_id, id);
-- +goose StatementBegin
CREATE FUNCTION payment_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO payment_events (session_id, from_status, to_status) VALUES (NEW.id, NULL, NEW.status);
    ELSIF OLD.status IS DISTINCT FROM NEW.status THEN
        INSERT INTO payment_events (session_id, from_status, to_status) VALUES (NEW.id, OLD.status, NEW.status);
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER payment_sessions_events AFTER INSERT OR UPDATE OF status ON payment_sessions
    FOR EACH ROW EXECUTE FUNCTION payment_event();

CREATE TABLE ledger_entries (
    id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    salon_id           bigint NOT NULL REFERENCES salons ON DELETE CASCADE,
    booking_id         bigint NOT NULL REFERENCES bookings ON DELETE CASCADE,
    payment_session_id bigint NOT NULL REFERENCES payment_sessions ON DELETE CASCADE,
    entry_type         text NOT NULL CHECK (entry_type IN ('deposit_received', 'deposit_refunded')),
    amount             numeric(12, 2) NOT NULL CHECK (amount > 0),
    currency           text NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    UNIQUE (payment_session_id, entry_type)
);
CREATE INDEX ledger_entries_salon ON ledger_entries (salon_id, created_at);

-- The built-in sandbox provider's payments (development and demos): a
-- payment page of this server with Pay and Decline.
CREATE TABLE sandbox_payments (
    id              text PRIMARY KEY,
    idempotence_key text NOT NULL UNIQUE,
    status          text NOT NULL CHECK (status IN ('pending', 'waiting_for_capture', 'succeeded', 'canceled')),
    amount          bigint NOT NULL,
    currency        text NOT NULL,
    description     text NOT NULL DEFAULT '',
    return_url      text NOT NULL DEFAULT '',
    metadata        jsonb NOT NULL DEFAULT '{}',
    refunded        bigint NOT NULL DEFAULT 0,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE sandbox_refunds (
    id              text PRIMARY KEY,
    idempotence_key text NOT NULL UNIQUE,
    payment_id      text NOT NULL REFERENCES sandbox_payments,
    amount          bigint NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE sandbox_refunds;
DROP TABLE sandbox_payments;
DROP TABLE ledger_entries;
DROP TABLE payment_events;
DROP TABLE payment_sessions;
DROP FUNCTION payment_event();
