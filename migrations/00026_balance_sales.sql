-- +goose Up
-- Packages and certificates sold online. An offer is what the salon sells
-- (a certificate of an amount, or a package of visits, at a price); a sale
-- is one buyer paying for one offer through the payment provider, a saga
-- of its own (created, paid and captured, credited once; refunded through
-- the provider). The balance it makes is credited in the transaction that
-- records the provider's "succeeded", once per sale (balance_id UNIQUE).
-- The code exists readable only in the buyer's e-mail and browser: the
-- sale keeps it sealed to a public key derived from the buyer's claim (a
-- secret the buyer's browser made, which is never stored), so that the
-- return page shows it to that browser and to no one else.

CREATE TABLE balance_offers (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    salon_id    bigint NOT NULL REFERENCES salons ON DELETE CASCADE,
    kind        text NOT NULL CHECK (kind IN ('package', 'certificate')),
    title       text NOT NULL CHECK (title <> ''),
    service_ids bigint[] NOT NULL DEFAULT '{}',
    -- a package's visits, a certificate's minor units
    units       bigint NOT NULL CHECK (units > 0),
    price       bigint NOT NULL CHECK (price > 0), -- minor units
    valid_days  integer CHECK (valid_days BETWEEN 1 AND 3660),
    active      boolean NOT NULL DEFAULT true,
    created_at  timestamptz NOT NULL DEFAULT now(),
    CHECK ((kind = 'package') = (cardinality(service_ids) > 0))
);
CREATE INDEX balance_offers_salon ON balance_offers (salon_id, id);

CREATE TABLE balance_sales (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    salon_id         bigint NOT NULL REFERENCES salons ON DELETE CASCADE,
    offer_id         bigint NOT NULL REFERENCES balance_offers ON DELETE RESTRICT,
    -- the offer as it was sold (an offer changed later changes no sale)
    kind             text NOT NULL CHECK (kind IN ('package', 'certificate')),
    title            text NOT NULL,
    service_ids      bigint[] NOT NULL DEFAULT '{}',
    units            bigint NOT NULL CHECK (units > 0),
    price            bigint NOT NULL CHECK (price > 0),
    currency         text NOT NULL,
    valid_days       integer,
    -- the buyer: a package's client; where the code is e-mailed
    client_id        bigint NOT NULL,
    email            text NOT NULL,
    lang             text NOT NULL DEFAULT '',
    provider         text NOT NULL,
    status           text NOT NULL CHECK (status IN ('registering', 'registered', 'unknown', 'authorized',
                                                     'completed', 'canceled', 'failed', 'refunding', 'refunded')),
    -- the provider's idempotence key for the payment's create, and the
    -- buyer's request key (a retried purchase finds its sale)
    idempotence_key  text NOT NULL UNIQUE,
    request_key      text,
    external_id      text,
    confirmation_url text,
    return_url       text NOT NULL DEFAULT '',
    -- what the return page is found by: shows the sale's state, nothing else
    return_ref       text NOT NULL UNIQUE,
    -- the claim's hash (a retry's check) and its public key (X25519,
    -- derived from the claim): the code is sealed to it, and only the
    -- claim opens it
    claim_hash       bytea,
    claim_key        bytea,
    code_sealed      bytea,
    balance_id       bigint UNIQUE REFERENCES balances,
    receipt          jsonb,
    refund_amount    bigint,
    refund_key       text,
    -- the code's e-mail: when it went, or why it did not
    mailed_at        timestamptz,
    mail_error       text NOT NULL DEFAULT '',
    -- the sweep: when to look again, how often it looked, who holds it
    next_check_at    timestamptz NOT NULL DEFAULT now(),
    checks           integer NOT NULL DEFAULT 0,
    lease_until      timestamptz,
    client_checked_at timestamptz,
    last_error       text NOT NULL DEFAULT '',
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (salon_id, client_id) REFERENCES clients (salon_id, id),
    CHECK (status NOT IN ('completed', 'refunding', 'refunded') OR balance_id IS NOT NULL)
);
CREATE UNIQUE INDEX balance_sales_request ON balance_sales (salon_id, request_key) WHERE request_key IS NOT NULL;
CREATE UNIQUE INDEX balance_sales_external ON balance_sales (provider, external_id) WHERE external_id IS NOT NULL;
CREATE INDEX balance_sales_due ON balance_sales (next_check_at)
    WHERE status IN ('registering', 'registered', 'unknown', 'authorized', 'refunding');
CREATE INDEX balance_sales_salon ON balance_sales (salon_id, id);

-- +goose Down
DROP TABLE balance_sales;
DROP TABLE balance_offers;
