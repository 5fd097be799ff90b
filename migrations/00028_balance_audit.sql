-- +goose Up
-- Packages, certificates and the offers sold online are audited like the
-- rest of the salon's records: an offer put on sale, changed or taken off,
-- a balance sold in the panel and a code replaced, each under the name of
-- whoever did it. A reservation or a spend (an update of remaining alone)
-- is not a change of the balance but an entry of its ledger, which names
-- its actor itself; the trigger's column list keeps it out, before any
-- condition is evaluated. A refund is a row the core writes (it is an act,
-- not a column).
CREATE TRIGGER balance_offers_audit AFTER INSERT OR UPDATE OR DELETE ON balance_offers FOR EACH ROW
    WHEN (audited()) EXECUTE FUNCTION audit_change('balance_offer');
CREATE TRIGGER balances_audit AFTER INSERT OR UPDATE OF code_hash, code_hint, expires_on ON balances FOR EACH ROW
    WHEN (audited()) EXECUTE FUNCTION audit_change('balance');

-- +goose Down
DROP TRIGGER balances_audit ON balances;
DROP TRIGGER balance_offers_audit ON balance_offers;
