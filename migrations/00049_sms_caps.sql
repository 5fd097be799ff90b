-- +goose Up
-- Bounds on what anyone's requests can have the salon pay for.
--
-- What a salon's SMS are counted by, against a flood of bookings made to
-- have it pay for messages (SMS pumping): the SMS sent to one number in a
-- day, and those sent in an hour. A message staff send again from the
-- panel is past those counts (uncapped): a person looked at it.
ALTER TABLE messages ADD COLUMN uncapped boolean NOT NULL DEFAULT false;
CREATE INDEX messages_sms_to ON messages (salon_id, recipient, sent_at) WHERE channel = 'sms' AND sent_at IS NOT NULL;
CREATE INDEX messages_sms_sent ON messages (salon_id, sent_at) WHERE channel = 'sms' AND sent_at IS NOT NULL;

-- When a provider's notification of a payment last had us ask the
-- provider: a flood of notifications (anyone may post one) asks once in a
-- few seconds, and the sweep asks for the rest.
ALTER TABLE payment_sessions ADD COLUMN notice_checked_at timestamptz;
ALTER TABLE balance_sales ADD COLUMN notice_checked_at timestamptz;

-- +goose Down
ALTER TABLE balance_sales DROP COLUMN notice_checked_at;
ALTER TABLE payment_sessions DROP COLUMN notice_checked_at;
DROP INDEX messages_sms_sent;
DROP INDEX messages_sms_to;
ALTER TABLE messages DROP COLUMN uncapped;
