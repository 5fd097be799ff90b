package bot

import "github.com/go-telegram/bot/models"

// SetTurnHook makes f run at the start of every turn (to test panics).
func SetTurnHook(b *Bot, f func(*models.Update)) { b.turnHook = f }
