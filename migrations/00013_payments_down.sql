-- +goose Up
-- What a new deposit booking does while the payment provider is not
-- answering (the platform found several calls in a row unanswered):
-- refuse, saying so, or book it with the deposit due in the salon.
ALTER TABLE salons ADD COLUMN deposit_fallback text NOT NULL DEFAULT 'refuse'
    CHECK (deposit_fallback IN ('refuse', 'in_salon'));

-- +goose Down
ALTER TABLE salons DROP COLUMN deposit_fallback;
