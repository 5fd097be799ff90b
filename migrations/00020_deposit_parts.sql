-- +goose Up
-- A deposit in parts: a booking moved to a larger deposit may be asked the
-- difference online (a top-up: a payment session of its own), and a paid
-- session may be refunded more than once, in parts, up to what was paid.
--
-- The ledger stays one row per movement of money. Each row has a part: a
-- deposit's is its number among the booking's deposits (0 the first, then
-- each top-up), a refund's its number among its session's refunds (0 the
-- first). A row written without a part is part 0, so a second deposit or
-- a second refund written by hand still collides with the first.

-- What the salon does when a move raises a paid booking's deposit: ask the
-- client the difference online, or take it at the visit.
ALTER TABLE salons ADD COLUMN deposit_topup text NOT NULL DEFAULT 'online'
    CHECK (deposit_topup IN ('online', 'salon'));

-- What the client still owes online of the booking's deposit after such a
-- move (0: nothing): the top-up's amount.
ALTER TABLE bookings ADD COLUMN deposit_due numeric(12, 2) NOT NULL DEFAULT 0 CHECK (deposit_due >= 0);

-- What has been refunded of the session so far, and how many refunds made
-- it (the next refund's part).
ALTER TABLE payment_sessions ADD COLUMN refunded numeric(12, 2) NOT NULL DEFAULT 0 CHECK (refunded >= 0);
ALTER TABLE payment_sessions ADD COLUMN refunds integer NOT NULL DEFAULT 0;
ALTER TABLE payment_sessions ADD CONSTRAINT payment_sessions_refunded_le_amount CHECK (refunded <= amount);
-- A top-up: the payment of what a confirmed booking still owes of its
-- deposit (a late payment of another session of a confirmed booking is
-- released, never taken twice).
ALTER TABLE payment_sessions ADD COLUMN topup boolean NOT NULL DEFAULT false;
-- The booking was cancelled while a refund of part of the session was
-- under way: when that refund is made, the rest follows.
ALTER TABLE payment_sessions ADD COLUMN refund_rest boolean NOT NULL DEFAULT false;
UPDATE payment_sessions SET refunded = COALESCE(refund_amount, amount), refunds = 1 WHERE status = 'refunded';

ALTER TABLE ledger_entries ADD COLUMN part integer NOT NULL DEFAULT 0 CHECK (part >= 0);
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_payment_session_id_entry_type_key;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_once UNIQUE (payment_session_id, entry_type, part);
-- A session's deposit arrives once.
CREATE UNIQUE INDEX ledger_one_deposit_per_session ON ledger_entries (payment_session_id) WHERE entry_type = 'deposit_received';
-- A booking's deposits are numbered 0, 1, ...: one of each.
DROP INDEX ledger_one_deposit;
CREATE UNIQUE INDEX ledger_one_deposit ON ledger_entries (booking_id, part) WHERE entry_type = 'deposit_received';

-- At most one payment being made per booking (a new one is claimed only
-- when none is); money going back (a release, a refund) may move for each
-- of a booking's payments at once: a cancelled booking whose deposit came
-- in two payments has both refunded.
DROP INDEX payment_sessions_active;
CREATE UNIQUE INDEX payment_sessions_active ON payment_sessions (booking_id)
    WHERE status IN ('registering', 'registered', 'unknown', 'authorized');

-- A message asking for a deposit carries a link that pays it (the client
-- taps, the payment's page opens).
ALTER TABLE booking_links DROP CONSTRAINT booking_links_action_check;
ALTER TABLE booking_links ADD CONSTRAINT booking_links_action_check
    CHECK (action IN ('confirm', 'cancel', 'move', 'manage', 'unsubscribe', 'telegram', 'pay'));

-- +goose Down
DELETE FROM booking_links WHERE action = 'pay';
ALTER TABLE booking_links DROP CONSTRAINT booking_links_action_check;
ALTER TABLE booking_links ADD CONSTRAINT booking_links_action_check
    CHECK (action IN ('confirm', 'cancel', 'move', 'manage', 'unsubscribe', 'telegram'));
DROP INDEX payment_sessions_active;
CREATE UNIQUE INDEX payment_sessions_active ON payment_sessions (booking_id)
    WHERE status IN ('registering', 'registered', 'unknown', 'authorized', 'canceling', 'refunding');
DROP INDEX ledger_one_deposit;
CREATE UNIQUE INDEX ledger_one_deposit ON ledger_entries (booking_id) WHERE entry_type = 'deposit_received';
DROP INDEX ledger_one_deposit_per_session;
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_once;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_payment_session_id_entry_type_key UNIQUE (payment_session_id, entry_type);
ALTER TABLE ledger_entries DROP COLUMN part;
ALTER TABLE payment_sessions DROP COLUMN refund_rest;
ALTER TABLE payment_sessions DROP COLUMN topup;
ALTER TABLE payment_sessions DROP CONSTRAINT payment_sessions_refunded_le_amount;
ALTER TABLE payment_sessions DROP COLUMN refunds;
ALTER TABLE payment_sessions DROP COLUMN refunded;
ALTER TABLE bookings DROP COLUMN deposit_due;
ALTER TABLE salons DROP COLUMN deposit_topup;
