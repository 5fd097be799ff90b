package bot

import (
	"context"
	"encoding/json"

	"github.com/go-telegram/bot/models"
	"github.com/prometheus/client_golang/prometheus"
)

// SetTurnHook makes f run at the start of every turn (to test panics).
func SetTurnHook(b *Bot, f func(*models.Update)) { b.turnHook = f }

// QuarantinedTotal is the counter of quarantined updates.
func QuarantinedTotal() prometheus.Counter { return quarantinedTotal }

// HandleNow stores one raw update and handles its chat's pending updates
// at once, as the dispatcher would (for the fuzz test).
func HandleNow(ctx context.Context, b *Bot, raw []byte) error {
	if err := store(ctx, b.pool, []json.RawMessage{raw}); err != nil {
		return err
	}
	var u models.Update
	if json.Unmarshal(raw, &u) != nil {
		return nil
	}
	b.drain(ctx, chatOf(&u))
	return nil
}
