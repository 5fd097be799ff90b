-- +goose Up
-- The message settings' form had no row for waiting-list offers, so saving
-- it turned their e-mails off unasked (helper-49 H1). No owner could have
-- chosen that: every salon e-mails them again; the form now shows the row.
UPDATE salons SET email_kinds = array_append(email_kinds, 'waitlist_offer')
WHERE NOT 'waitlist_offer' = ANY (email_kinds);

-- +goose Down
SELECT 1;
