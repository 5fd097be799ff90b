package bot

import (
	"github.com/go-telegram/bot/models"
	"github.com/prometheus/client_golang/prometheus"
)

// SetTurnHook makes f run at the start of every turn (to test panics).
func SetTurnHook(b *Bot, f func(*models.Update)) { b.turnHook = f }

// QuarantinedTotal is the counter of quarantined updates.
func QuarantinedTotal() prometheus.Counter { return quarantinedTotal }
