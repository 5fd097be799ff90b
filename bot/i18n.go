package bot

import (
	"fmt"
	"strings"
	"time"

	"salon/booking"
	"salon/i18n"
)

// texts are the bot's words in each language.
var texts = map[string]map[string]string{
	"en": {
		"choose_salon":     "Choose a salon:",
		"no_salons":        "There are no salons to book yet.",
		"unknown_salon":    "I don't know the salon %q. Choose one:",
		"welcome":          "Welcome to %s!",
		"choose_service":   "Choose a service:",
		"no_services":      "This salon has no services to book online yet.",
		"choose_master":    "%s. Choose a master:",
		"any_master":       "Any master",
		"no_masters":       "Nobody does this service at the moment.",
		"choose_day":       "%s. Choose a day:",
		"no_days":          "No free times on these days. Try later days, another master or another service.",
		"later":            "Later »",
		"earlier":          "« Earlier",
		"choose_time":      "%s. Choose a time:",
		"no_times":         "No free times left on this day. Choose another day.",
		"back":             "« Back",
		"ask_phone":        "To book, share your phone number with the button below, or type it (for example %s).",
		"share_phone":      "📱 Share my phone",
		"bad_phone":        "That does not look like a phone number: %s. Type it with the country code, for example %s, or use the button.",
		"bad_contact":      "Telegram gave us the number %s, which we cannot read as a phone number. Please type your number with the country code, for example %s.",
		"not_your_contact": "Please share your own phone number: use the button below.",
		"confirm_title":    "Check your booking:",
		"confirm_deposit":  "💳 A deposit of %s is paid online right after booking; the time is held for you for %d minutes until it is paid.",
		"confirm":          "✅ Confirm",
		"booked":           "✅ You are booked!",
		"held":             "⏳ The time is held for you until the deposit is paid",
		"deposit_note":     "A deposit of %s is paid in the salon.",
		"pending_note":     "The time is held until %s, waiting for the deposit of %s.",
		"pay_button":       "💳 Pay the deposit",
		"pay_follows":      "The payment page follows in a moment.",
		"pay_due":          "💳 The deposit of %s, due by %s: pay it to confirm the booking.",
		"pay_n":            "💳 Pay #%d",
		"not_due":          "Nothing is due for this booking now.",
		"calendar_button":  "📅 Add to calendar",
		"pay_later":        "The payment page is not ready yet; you will be sent a message when the deposit arrives, or try /my in a minute.",
		"taken":            "⚠️ This time was just taken. The nearest free times:",
		"taken_none":       "⚠️ This time was just taken, and there is nothing free nearby. Choose another day.",
		"gone":             "This time is no longer available. Choose another one.",
		"busy":             "The salon's calendar is busy right now; nothing was changed. Please tap again in a moment.",
		"invalid":          "The salon could not accept this:",
		"my_title":         "Your bookings:",
		"my_none":          "You have no upcoming bookings. /book to book.",
		"cancel_n":         "❌ Cancel %d",
		"move_n":           "🔁 Move %d",
		"cancel_q":         "Cancel this booking?",
		"cancel_yes":       "Yes, cancel",
		"keep":             "Keep it",
		"cancelled":        "Your booking is cancelled:",
		"moved":            "Your booking is moved:",
		"too_late":         "It is too late to change this booking online: changes close %d hours before the start. Please call the salon.",
		"not_active":       "This booking can no longer be changed.",
		"move_day":         "Moving %s. Choose a new day:",
		"move_here":        "🔁 Move here",
		"stale":            "This menu is out of date.",
		"help":             "I book you at the salon.\n/book — book a visit\n/my — your bookings: cancel or move them\n/lang — language\n/start — choose a salon\n/help — this help",
		"lang_q":           "Choose your language:",
		"lang_set":         "I will speak English.",
		"dont_understand":  "I did not understand that. /book to book, /my for your bookings, /help for help.",
		"error":            "Sorry, something went wrong on our side. Please try again in a minute.",
		"link_ok":          "You are linked as master %s of %s. I will tell you about your bookings here.",
		"link_bad":         "This code is not valid (it may be used or expired). Ask the salon for a new one.",
		"link_conflict":    "This Telegram account is already linked to another master of the salon.",
		"link_usage":       "Send /link followed by the code the salon gave you.",
		"service":          "Service",
		"master":           "Master",
		"when":             "When",
		"price":            "Price",
		"price_from":       "from %s",
		"address":          "Address",
		"salon_phone":      "Salon phone",
		"phone":            "Phone",
		"salon":            "Salon",
		"n_new_booking":    "🆕 New booking",
		"n_cancelled":      "❌ Booking cancelled",
		"n_moved":          "🔁 Booking moved",
		"n_client_booked":  "✅ You are booked",
		"n_client_cancel":  "❌ Your booking is cancelled",
		"n_client_moved":   "🔁 Your booking is moved",
		"n_hold_expired":   "⌛ The time was held for the deposit, which did not come, so the booking is cancelled",
		"n_paid":           "✅ The deposit is paid: you are booked",
		"n_refunded":       "↩️ Your payment for this booking is returned: a hold on your card is lifted by the bank (a refund takes the bank a few days)",
		"n_reminder_24h":   "⏰ Reminder: tomorrow you are booked",
		"n_reminder_2h":    "⏰ Reminder: in two hours you are booked",
		"n_was":            "was",
		"n_reminder_in":    "⏰ Reminder: you are booked in %s",
		"link_claimed":     "🔔 Done: updates about this booking come here. /my shows your bookings.",
		"link_stale":       "This link has expired or was used. Book with /book, or see your bookings with /my.",
		"b_will_come":      "✅ I will come",
		"b_move":           "Move",
		"b_cancel":         "Cancel",
		"n_confirmed":      "✅ Thank you! The salon knows you will come.",
		"n_confirmed_was":  "You have confirmed already. See you!",
		"client":           "Client",
		"min":              "min",
	},
	"ru": {
		"choose_salon":     "Выберите салон:",
		"no_salons":        "Пока нет салонов для записи.",
		"unknown_salon":    "Я не знаю салон %q. Выберите:",
		"welcome":          "Добро пожаловать в %s!",
		"choose_service":   "Выберите услугу:",
		"no_services":      "В этом салоне пока нет услуг для онлайн-записи.",
		"choose_master":    "%s. Выберите мастера:",
		"any_master":       "Любой мастер",
		"no_masters":       "Сейчас эту услугу никто не оказывает.",
		"choose_day":       "%s. Выберите день:",
		"no_days":          "В эти дни свободного времени нет. Посмотрите дни позже, другого мастера или другую услугу.",
		"later":            "Позже »",
		"earlier":          "« Раньше",
		"choose_time":      "%s. Выберите время:",
		"no_times":         "На этот день свободного времени не осталось. Выберите другой день.",
		"back":             "« Назад",
		"ask_phone":        "Чтобы записаться, поделитесь номером телефона кнопкой ниже или напишите его (например, %s).",
		"share_phone":      "📱 Поделиться номером",
		"bad_phone":        "Это не похоже на номер телефона: %s. Напишите его с кодом страны, например %s, или нажмите кнопку.",
		"bad_contact":      "Telegram передал номер %s, который не получается прочитать как телефон. Пожалуйста, напишите свой номер с кодом страны, например %s.",
		"not_your_contact": "Пожалуйста, поделитесь своим номером: нажмите кнопку ниже.",
		"confirm_title":    "Проверьте запись:",
		"confirm_deposit":  "💳 Предоплата %s вносится онлайн сразу после записи; пока она не оплачена, время удерживается за вами %d мин.",
		"confirm":          "✅ Подтвердить",
		"booked":           "✅ Вы записаны!",
		"held":             "⏳ Время удерживается за вами, пока не поступит предоплата",
		"deposit_note":     "Предоплата %s вносится в салоне.",
		"pending_note":     "Время удерживается до %s в ожидании предоплаты %s.",
		"pay_button":       "💳 Оплатить предоплату",
		"pay_follows":      "Ссылка на оплату придёт следующим сообщением.",
		"pay_due":          "💳 Предоплата %s, до %s: оплатите её, чтобы подтвердить запись.",
		"pay_n":            "💳 Оплатить №%d",
		"not_due":          "Сейчас по этой записи ничего оплачивать не нужно.",
		"calendar_button":  "📅 Добавить в календарь",
		"pay_later":        "Страница оплаты ещё не готова; когда предоплата поступит, придёт сообщение. Или попробуйте /my через минуту.",
		"taken":            "⚠️ Это время только что заняли. Ближайшее свободное время:",
		"taken_none":       "⚠️ Это время только что заняли, и рядом ничего свободного нет. Выберите другой день.",
		"gone":             "Это время уже недоступно. Выберите другое.",
		"busy":             "Календарь салона сейчас занят, ничего не изменилось. Нажмите, пожалуйста, ещё раз через минуту.",
		"invalid":          "Салон не может это принять:",
		"my_title":         "Ваши записи:",
		"my_none":          "У вас нет предстоящих записей. /book — записаться.",
		"cancel_n":         "❌ Отменить %d",
		"move_n":           "🔁 Перенести %d",
		"cancel_q":         "Отменить эту запись?",
		"cancel_yes":       "Да, отменить",
		"keep":             "Не отменять",
		"cancelled":        "Запись отменена:",
		"moved":            "Запись перенесена:",
		"too_late":         "Изменить эту запись онлайн уже нельзя: это возможно не позже чем за %d ч до начала. Позвоните, пожалуйста, в салон.",
		"not_active":       "Эту запись уже нельзя изменить.",
		"move_day":         "Переносим %s. Выберите новый день:",
		"move_here":        "🔁 Перенести сюда",
		"stale":            "Это меню устарело.",
		"help":             "Я записываю вас в салон.\n/book — записаться\n/my — ваши записи: отменить или перенести\n/lang — язык\n/start — выбрать салон\n/help — эта справка",
		"lang_q":           "Выберите язык:",
		"lang_set":         "Буду говорить по-русски.",
		"dont_understand":  "Я не понял. /book — записаться, /my — ваши записи, /help — справка.",
		"error":            "Извините, у нас что-то пошло не так. Попробуйте, пожалуйста, через минуту.",
		"link_ok":          "Вы подключены как мастер %s салона %s. Я буду сообщать вам о записях.",
		"link_bad":         "Код недействителен (уже использован или истёк). Попросите в салоне новый.",
		"link_conflict":    "Этот аккаунт Telegram уже подключён к другому мастеру салона.",
		"link_usage":       "Отправьте /link и код, который вам дали в салоне.",
		"service":          "Услуга",
		"master":           "Мастер",
		"when":             "Когда",
		"price":            "Стоимость",
		"price_from":       "от %s",
		"address":          "Адрес",
		"salon_phone":      "Телефон салона",
		"phone":            "Телефон",
		"salon":            "Салон",
		"n_new_booking":    "🆕 Новая запись",
		"n_cancelled":      "❌ Запись отменена",
		"n_moved":          "🔁 Запись перенесена",
		"n_client_booked":  "✅ Вы записаны",
		"n_client_cancel":  "❌ Ваша запись отменена",
		"n_client_moved":   "🔁 Ваша запись перенесена",
		"n_hold_expired":   "⌛ Время удерживалось для предоплаты, но она не поступила, поэтому запись отменена",
		"n_paid":           "✅ Предоплата получена: вы записаны",
		"n_refunded":       "↩️ Оплата за эту запись возвращается: блокировку суммы на карте банк снимет сам (возврат банк проводит за несколько дней)",
		"n_reminder_24h":   "⏰ Напоминаем: завтра вы записаны",
		"n_reminder_2h":    "⏰ Напоминаем: через два часа вы записаны",
		"n_was":            "было",
		"n_reminder_in":    "⏰ Напоминаем: вы записаны через %s",
		"link_claimed":     "🔔 Готово: новости об этой записи будут приходить сюда. /my — ваши записи.",
		"link_stale":       "Ссылка устарела или уже использована. Записаться — /book, ваши записи — /my.",
		"b_will_come":      "✅ Я приду",
		"b_move":           "Перенести",
		"b_cancel":         "Отменить",
		"n_confirmed":      "✅ Спасибо! Салон знает, что вы придёте.",
		"n_confirmed_was":  "Вы уже подтвердили визит. До встречи!",
		"client":           "Клиент",
		"min":              "мин",
	},
}

// tr returns the text for key in lang, formatted with args.
func tr(lang, key string, args ...any) string {
	s, ok := texts[lang][key]
	if !ok {
		s = texts["en"][key]
	}
	if len(args) > 0 {
		return fmt.Sprintf(s, args...)
	}
	return s
}

// langOf maps a Telegram language_code to one of ours: Russian for ru, uk,
// be and for none given (Telegram leaves it out for some clients; the
// platform's salons are Russian first), English for any other.
func langOf(code string) string {
	code = strings.ToLower(code)
	if code == "" || strings.HasPrefix(code, "ru") || strings.HasPrefix(code, "uk") || strings.HasPrefix(code, "be") {
		return "ru"
	}
	return "en"
}

// dayLabel is "Tue 3 Mar" / "вт 3 мар".
func dayLabel(lang string, d booking.Date) string {
	return i18n.Day(lang, d.Year, d.Month, d.Day)
}

// when is "Tue 3 Mar, 11:00" in the salon's zone.
func when(lang string, t time.Time, loc *time.Location) string {
	return i18n.When(lang, t, loc)
}
