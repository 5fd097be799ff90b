package panel

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"salon/booking"
	"salon/i18n"
)

// lang is the language a page is shown in. Texts are written in English in
// the code and templates; ru translates them.
type lang struct {
	Code string // en or ru
}

// untranslated are the texts T was asked for in Russian and had not.
var untranslated sync.Map

var (
	langEN = &lang{Code: "en"}
	langRU = &lang{Code: "ru"}
)

// T translates s (a format when args are given). A text Russian lacks is
// shown in English and remembered (untranslated), for the test that
// renders every page.
func (l *lang) T(s string, args ...any) string {
	switch {
	case l.Code == "ru":
		if r, ok := ru[s]; ok {
			s = r
		} else if s != "" {
			untranslated.Store(s, true)
		}
	case en[s] != "":
		s = en[s]
	}
	if len(args) > 0 {
		return fmt.Sprintf(s, args...)
	}
	return s
}

// en are the English words of the keys that are not English to read (a
// key naming the thing it qualifies: "sale registered" is a sale's state).
var en = map[string]string{
	"sale registering": "being created", "sale registered": "awaiting payment", "sale unknown": "being checked",
	"sale authorized": "paid, being captured", "sale completed": "paid", "sale canceled": "not paid", "sale failed": "not paid",
	"sale refunding": "being refunded", "sale refunded": "refunded",
	"entry credit": "sale", "entry reserve": "reserved", "entry spend": "spent", "entry release": "reservation given back",
	"entry refund": "money refunded",
	"gone":         "no longer free",
	"always":       "always", "before_cutoff": "before the cancellation deadline", "never": "never",
	"deposit_received": "deposit received", "deposit_refunded": "deposit refunded",
	"payment registering": "being created", "payment registered": "waiting for the client to pay",
	"payment unknown": "no answer from the service yet; being checked", "payment authorized": "paid, being captured",
	"payment canceling": "being released", "payment completed": "paid", "payment canceled": "cancelled, nothing charged",
	"payment failed": "not paid", "payment refunding": "being refunded", "payment refunded": "refunded",
	"zone Africa": "Africa", "zone America": "America", "zone Antarctica": "Antarctica", "zone Arctic": "Arctic",
	"zone Asia": "Asia", "zone Atlantic": "Atlantic", "zone Australia": "Australia", "zone Europe": "Europe",
	"zone Indian": "Indian Ocean", "zone Pacific": "Pacific", "zone UTC": "UTC", "zone Other": "Other",
}

// Other is the other language's code and name, for the switch.
func (l *lang) Other() [2]string {
	if l.Code == "ru" {
		return [2]string{"en", "English"}
	}
	return [2]string{"ru", "Русский"}
}

// Status names a booking status.
func (l *lang) Status(s booking.Status) string {
	return l.T(map[booking.Status]string{
		booking.StatusPending: "awaiting deposit", booking.StatusConfirmed: "confirmed",
		booking.StatusCancelled: "cancelled", booking.StatusCompleted: "completed", booking.StatusNoShow: "no-show",
	}[s])
}

// Entity names a kind of record of the audit log.
func (l *lang) Entity(e string) string { return l.T(entityNames[e]) }

// Source names where a booking was made.
func (l *lang) Source(s booking.Source) string {
	return l.T(map[booking.Source]string{
		booking.SourceBot: "Telegram bot", booking.SourceWidget: "online booking", booking.SourcePanel: "the panel",
		booking.SourceImport: "an import",
	}[s])
}

// Attention names why a payment needs a person.
func (l *lang) Attention(k booking.AttentionKind) string {
	return l.T(map[booking.AttentionKind]string{
		booking.AttentionStuck:   "Stuck: the payment service does not answer",
		booking.AttentionHeld:    "Money held for a booking that is off",
		booking.AttentionKept:    "Deposit kept for a cancelled booking",
		booking.AttentionReceipt: "Settlement receipt refused by the payment service",
	}[k])
}

// Weekday names a weekday (0 Sunday).
func (l *lang) Weekday(d int) string {
	en := []string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}
	return l.T(en[d%7])
}

// langOf is the request's language: the user's choice, else the salon's,
// else what the browser asks for.
func langOf(c *fiber.Ctx) *lang {
	code := ""
	if u, ok := c.Locals(userKey).(*booking.User); ok {
		code = u.Lang
	}
	if code == "" {
		if s, ok := c.Locals(salonKey).(*booking.Salon); ok {
			code = s.Locale
		}
	}
	if code == "" {
		if q := c.Query("lang"); q == "ru" || q == "en" {
			code = q
		} else if strings.HasPrefix(strings.ToLower(c.Get(fiber.HeaderAcceptLanguage)), "ru") {
			code = "ru"
		}
	}
	if code == "ru" {
		return langRU
	}
	return langEN
}

// ru is the Russian for every text of the panel.
var ru = map[string]string{
	// Messages to clients.
	"the client confirmed": "клиент подтвердил", "not confirmed by the client": "клиент не подтвердил",
	"The client confirmed": "Клиент подтвердил", "Not yet, and the visit is in less than 2 hours: call the client?": "Ещё нет, а до визита меньше 2 часов: позвонить клиенту?",
	"Messages": "Сообщения", "Message": "Сообщение", "Channel": "Канал", "Recipient": "Кому", "State": "Состояние", "SMS parts: %d": "частей SMS: %d",
	"%s of the reservation": "%s из резерва",
	"To pay at the salon":   "К оплате в салоне", "nothing: it is paid": "ничего — всё оплачено",
	"Send again": "Отправить снова", "No messages: none of the channels the salon sends on reaches this client.": "Сообщений нет: ни один канал, по которому пишет салон, не доходит до этого клиента.",
	"confirmation": "подтверждение", "change": "перенос", "cancellation": "отмена", "deposit not paid in time": "предоплата не пришла вовремя",
	"deposit received": "предоплата получена", "refund": "возврат", "reminder": "напоминание", "waitlist offer": "предложение из листа ожидания",
	"new booking": "новая запись", "reminder %s before": "напоминание за %s", "to the master": "мастеру",
	"queued": "в очереди", "sent": "отправлено", "delivered": "доставлено", "failed": "не отправлено",
	"not sent: no longer applied": "не отправлено: уже не актуально", "%d h": "%d ч", "%d min": "%d мин",
	"Messages that did not go": "Сообщения, которые не ушли",
	"A provider refused them, or did not say whether it took them (then they are not sent again by themselves, so that nobody gets one twice). Send one again once the reason is fixed.": "Сервис отправки отказал или не ответил, принял ли их (тогда они не отправляются повторно сами, чтобы никто не получил сообщение дважды). Отправьте снова, когда причина устранена.",
	"Every message went.": "Все сообщения ушли.",
	"The message is queued again: it is rebuilt from the booking and sent now.": "Сообщение снова в очереди: оно собирается заново по записи и уходит сейчас.",
	"Messages to clients": "Сообщения клиентам",
	"Telegram carries every message, free. E-mail and SMS carry what is ticked below (SMS costs money at the provider).": "В Telegram уходят все сообщения, бесплатно. По эл. почте и SMS — отмеченные ниже (SMS платные у провайдера).",
	"Reminders before the visit": "Напоминания до визита",
	"Quiet hours: no SMS or Telegram message to clients, it waits for the morning": "Тихие часы: SMS и сообщения в Telegram клиентам ждут утра",
	"from": "с", "to": "до",
	"The client confirmed they will come": "Клиент подтвердил, что придёт",
	"Messages to this client":             "Сообщения этому клиенту", "client's messages": "сообщения клиенту",
	"When the client asks the salon to stop them (SMS cannot be answered to stop).": "Если клиент просит салон их не присылать (ответом на SMS отписаться нельзя).",
	"No SMS to %s": "Не присылать SMS на %s", "No e-mail to %s": "Не присылать письма на %s",
	"All packages and certificates": "Все абонементы и сертификаты", "Amount (a certificate)": "Сумма (сертификат)",
	"Phone (a package's client)": "Телефон (клиент абонемента)",
	"Balance":                    "Баланс", "By": "Кто", "Change": "Изменение", "Code": "Код", "Left": "Осталось", "Nothing sold yet.": "Пока ничего не продано.",
	"Sold for": "Продан за", "%s goes back to it after the visit": "%s вернётся на него после визита", "%s of %s": "%s из %s", "%s online": "%s онлайн", "Packages and certificates": "Абонементы и сертификаты", "Sell": "Продать", "Sell, paid in the salon": "Продать, оплата в салоне",
	"Services (a package): each visit is of any one ticked": "Услуги (абонемент): каждый визит — на любую из отмеченных", "Sold on": "Продан", "Sold": "Проданные",
	"Sold. Its code, shown this once: give it to the client (it is what they book with).": "Продано. Код показан один раз: передайте его клиенту (с ним он записывается).",
	"Valid until (optional)": "Действует до (необязательно)", "Valid until": "Действует до", "Visits": "Визиты",
	"a gift certificate: an amount, for whoever holds the code": "подарочный сертификат: сумма, для того, у кого код",
	"a package: visits of a service, for one client":            "абонемент: визиты на услугу, для одного клиента",
	"of": "из", "valid until": "действует до",
	"entry credit": "продажа", "entry reserve": "резерв", "entry spend": "списание", "entry release": "возврат резерва", "entry refund": "возврат денег",
	"package": "абонемент", "certificate": "сертификат",
	"Packages and certificates sold": "Продано абонементов и сертификатов", "Paid back for them": "Возвращено за них",
	"Package or certificate": "Абонемент или сертификат", "sale": "продажа", "money paid back": "возврат денег",
	"in the salon": "в салоне", "online": "онлайн", "the master's pause after a service": "перерыв мастера после услуги", "after %s": "после %s", "%s paid back to the client in the salon": "клиенту в салоне возвращено %s",
	"Operations": "Операции", "Operation": "Операция",
	"Kind": "Вид", "Paid with": "Оплачено", "Pay with a package or a certificate": "Оплатить абонементом или сертификатом",
	"The client's package": "Абонемент клиента", "or a code:": "или по коду:", "Pay with it": "Оплатить",
	"Refund what is left": "Вернуть остаток", "%s …%s: %s, %s left": "%s …%s: %s, осталось %s",
	"Yes, refund what is left":                                               "Да, вернуть остаток",
	"sold in the salon for %s":                                               "продан в салоне за %s",
	"Tick that you mean it: a refund cannot be undone.":                      "Отметьте, что вы уверены: возврат нельзя отменить.",
	"Paid with the balance: it is spent when the visit is marked completed.": "Оплачено с баланса: списывается, когда визит отмечен состоявшимся.",
	"What was left is refunded: pay it back to the client.":                  "Остаток возвращён: верните деньги клиенту.",
	"Waiting list": "Лист ожидания", "When a time frees up": "Когда освобождается время",
	"offer it to the first few in line at once: the first to tap books it": "предложить сразу нескольким первым в листе: запишется тот, кто успеет первым",
	"hold it for the first in line, then the next":                         "держать для первого в листе, затем для следующего",
	"Held for, min": "Держать, мин", "Offered to, clients at once": "Предлагать сразу, клиентам",
	"Show": "Показать", "The day's bookings": "Записи дня",
	"Fill rate, last %d days: %s — %d of %d freed minutes booked again from the list; %d waiting now, %d booked from the list.": "Заполняемость за последние %d дней: %s — %d из %d освободившихся минут снова заняты из листа ожидания; ждут сейчас: %d, записались из листа: %d.",
	"Who waits for this day, in the order they joined": "Кто ждёт этот день, в порядке записи в лист",
	"Joined": "В листе с", "Waits for": "Ждёт", "Hours": "Часы", "Offered": "Предложено", "Offer a time": "Предложить время",
	"Offer": "Предложить", "Remove from the list": "Убрать из листа", "Nobody waits for this day.": "На этот день никто не ждёт.",
	"Add a client to the waiting list":                "Добавить клиента в лист ожидания",
	"optional: freed times are offered there at once": "необязательно: освободившееся время сразу предложат туда",
	"When a time frees up, the client is offered it on their channels, in the order they joined; the salon's waitlist mode decides whether it is held for them.": "Когда время освободится, его предложат клиенту по его каналам, в порядке записи в лист; держать ли время за ним, решает режим листа ожидания салона.",
	"Add to the waiting list": "Добавить в лист ожидания", "any time": "любое время", "until %s": "до %s",
	"The client is on the waiting list.": "Клиент в листе ожидания.", "The time is offered to the client.": "Время предложено клиенту.",
	"waiting": "ждёт", "booked": "записан", "left": "вышел из листа", "ended": "дни прошли",
	"open": "открыто", "held": "держится", "taken": "принято", "gone": "уже не свободно", "expired": "истекло",

	"Move or cancel them first. If the master cannot work (ill, away), answer on each booking's page that the salon moves or cancels it: the client is told so, with an apology, and the time is not offered to the waiting list.": "Сначала перенесите или отмените их. Если мастер не может работать (болеет, в отъезде), на странице каждой записи укажите, что переносит или отменяет салон: клиенту сообщим об этом с извинениями, а время не предложим листу ожидания.",

	"Who cancels (if you know)":      "Кто отменяет (если знаете)",
	"unknown":                        "неизвестно",
	"Who asks to move (if you know)": "Кто просит перенести (если знаете)",
	"Choose who asks to move: the client or the salon.": "Выберите, кто просит перенести: клиент или салон.",
	"The client keeps the price booked (or the new master's, if lower) and the deposit, and is told the salon had to change the booking, with an apology; the time it frees is not offered to the waiting list.": "У клиента остаются цена записи (или цена нового мастера, если она ниже) и предоплата; клиенту сообщим, что салону пришлось изменить запись, с извинениями; освободившееся время не предложим листу ожидания.",
	"Choose who cancels: the client or the salon.": "Выберите, кто отменяет: клиент или салон.",

	"The client is told the salon had to cancel, with an apology; the time is not offered to the waiting list.": "Клиенту сообщим, что салону пришлось отменить запись, с извинениями; время не предложим листу ожидания.",

	"Cancelled late: after the cancellation deadline, by the client, at their request, or by the salon without saying who asked. When the salon said it cancelled of its own accord, it is not counted.": "Поздно отменили: позже срока отмены, сам клиент, по его просьбе или салоном без указания, кто попросил. Отмены, где салон указал, что отменяет сам, не считаются.",

	"Reminders": "Напоминания", "Group": "Группа", "Did not come": "Не пришли", "Cancelled late": "Поздно отменили",
	"confirmed by a tap": "подтвердили нажатием", "reminded, not confirmed": "напомнили, не подтвердили",
	"hold-out: plain reminders":             "контрольная группа: простые напоминания",
	"No reminded bookings have passed yet.": "Пока нет прошедших записей с напоминаниями.",
	"How clients came after their reminders: those who confirmed with a tap, those who did not, and the hold-out, reminded plainly with nothing to tap (%d%% of bookings; set it in the settings). Only bookings that were reminded and whose time has passed count.": "Как приходили клиенты после напоминаний: подтвердившие нажатием, не подтвердившие и контрольная группа, которой напоминали без кнопок (%d%% записей; задаётся в настройках). Считаются только записи с напоминанием, время которых прошло.",
	"Hold-out: the share of bookings reminded plainly, with nothing to tap, to measure what the answers do (see Reminders), %":                                                                                                                                        "Контрольная группа: доля записей, которым напоминают без кнопок ответа, чтобы измерить их пользу (см. «Напоминания»), %",
	// layout and navigation
	"Salon panel":     "Панель салона",
	"Day":             "День",
	"Clients":         "Клиенты",
	"Masters":         "Мастера",
	"Services":        "Услуги",
	"Settings":        "Настройки",
	"Users":           "Пользователи",
	"Audit log":       "Журнал",
	"Log out":         "Выйти",
	"Skip to content": "К содержимому",

	// login
	"Log in":                   "Вход",
	"Email":                    "Эл. почта",
	"Password":                 "Пароль",
	"Wrong email or password.": "Неверная почта или пароль.",

	// errors and notices
	"Too many failed logins. Try again in %d min.":                       "Слишком много неудачных попыток входа. Попробуйте через %d мин.",
	"Signing in is busy. Try again in a moment.":                         "Вход сейчас занят. Попробуйте через мгновение.",
	"the second time the clock shows it (the clocks go back that night)": "второй раз, когда часы показывают это время (ночью часы переводят назад)",
	"Go to the login page":                                               "На страницу входа",
	"Too many failed logins. Try again later.":                           "Слишком много неудачных попыток входа. Попробуйте позже.",
	"The form has expired. Go back, reload the page and try again.":      "Форма устарела. Вернитесь, обновите страницу и попробуйте снова.",
	"The calendar is busy. Nothing was changed; try again in a moment.":  "Календарь занят. Ничего не изменено; попробуйте через мгновение.",
	"Not found.":                                "Не найдено.",
	"You may not do this.":                      "У вас нет на это прав.",
	"It is too late for this change.":           "Для этого изменения слишком поздно.",
	"This time is taken.":                       "Это время занято.",
	"This cannot be done in its current state.": "Это нельзя сделать в текущем состоянии.",
	"online payment %s":                         "онлайн-оплата %s",
	"the command %s":                            "команда %s",
	"the client or the platform":                "клиент или платформа",
	"given back to a sale paid back in full":    "возвращено покупателю: продажа возвращена полностью",
	"Some fields are invalid.":                  "Некоторые поля заполнены неверно.",
	"This form made a new code already, shown then once. If that one is lost too, make another.":                                      "Эта форма уже выдала новый код — он был показан один раз. Если потерян и он, выдайте ещё один.",
	"This form sold one already, with other values. Nothing more was sold: check the values and send the form again to sell another.": "По этой форме уже продан абонемент или сертификат, с другими значениями. Больше ничего не продано: проверьте значения и отправьте форму ещё раз, чтобы продать ещё один.",
	"The first sale": "Первая продажа",
	"Its new code, shown this once: give it to the client. The old code no longer works.": "Новый код, показан один раз: передайте его клиенту. Старый код больше не действует.",
	"Its code is locked until %s: it was tried with more than %d phones not its client's within a day, so whoever types it, online or in the bot, is refused, its client too. The desk still spends it; a new code ends the lock.": "Код заблокирован до %s: за сутки его пробовали больше чем с %d телефонами не его клиента, поэтому на сайте и в боте он не принимается ни от кого, даже от его клиента. В салоне им можно расплатиться; новый код снимает блокировку.",
	"Make a new code (the old one stops working)":    "Выдать новый код (старый перестанет действовать)",
	"Given a new code (the old one no longer works)": "Выдан новый код (старый больше не действует)",
	"The request was not understood.":                "Запрос не понят.",
	"internal error":                                 "внутренняя ошибка",
	"Error":                                          "Ошибка",
	"Back to the day":                                "К расписанию дня",

	"Booking cancelled. Its time is not offered to the waiting list; if the master cannot work then, take it off their schedule, so that it is not booked online either.": "Запись отменена. Это время не предлагается листу ожидания; если мастер не сможет работать, уберите это время из его графика, чтобы его не заняли и онлайн.",

	"Booking created.":     "Запись создана.",
	"Booking cancelled.":   "Запись отменена.",
	"Booking moved.":       "Запись перенесена.",
	"Marked as completed.": "Отмечено: визит состоялся.",
	"Marked as no-show.":   "Отмечено: клиент не пришёл.",
	"Saved.":               "Сохранено.",
	"Removed.":             "Удалено.",

	"Nothing to move: the booking is already at that time, with that master.": "Переносить нечего: запись уже на это время и к этому мастеру.",

	// day and week
	"Today":               "Сегодня",
	"Previous day":        "Предыдущий день",
	"Next day":            "Следующий день",
	"Previous week":       "Предыдущая неделя",
	"Next week":           "Следующая неделя",
	"Week":                "Неделя",
	"Go":                  "Перейти",
	"Time":                "Время",
	"free":                "свободно",
	"break":               "перерыв",
	"No masters yet.":     "Мастеров пока нет.",
	"Cancelled this day":  "Отменённые в этот день",
	"Updates by itself":   "Обновляется само",
	"deposit":             "предоплата",
	"deposit due":         "ждёт предоплату",
	"paid with a package": "оплачено абонементом", "paid with a certificate": "оплачено сертификатом",
	"day off":    "выходной",
	"Week of %s": "Неделя мастера %s",

	// statuses
	"awaiting deposit": "ждёт предоплату",
	"confirmed":        "подтверждена",
	"cancelled":        "отменена",
	"completed":        "состоялась",
	"no-show":          "неявка",

	// bookings
	"Booking":           "Запись",
	"New booking":       "Новая запись",
	"Service":           "Услуга",
	"Master":            "Мастер",
	"Client":            "Клиент",
	"Phone":             "Телефон",
	"Name":              "Имя",
	"Notes":             "Заметки",
	"Date":              "Дата",
	"Start":             "Начало",
	"End":               "Конец",
	"Ends the next day": "Заканчивается на следующий день",
	"Past midnight":     "После полуночи",
	"(the next day)":    "(до следующего дня)",
	"Status":            "Статус",
	"Source":            "Источник",
	"Telegram bot":      "Telegram-бот", "online booking": "онлайн-запись", "the panel": "панель", "an import": "импорт",
	"a client of the salon": "клиент салона", "Schedule": "График", "Actions": "Действия",
	"Online booking": "Онлайн-запись", "Changed by an import": "Изменена импортом", "several kinds: a .zip of the files": "несколько видов: .zip с файлами",
	"A .zip of the salon's files (services.csv, masters.csv, schedule.csv, clients.csv, bookings.csv, or in Russian) is checked as one: each file sees what the files before it would create.": "Архив .zip с файлами салона (services.csv, masters.csv, schedule.csv, clients.csv, bookings.csv или по-русски: услуги.csv, мастера.csv …) проверяется целиком: каждый файл видит то, что создадут файлы перед ним.", "The salon's panel: the day, bookings, clients, masters and services.": "Панель салона: день, записи, клиенты, мастера и услуги.", "What each file holds": "Что в каждом файле", "Required": "Обязательна", "Example": "Пример",
	"Import in this order: services, masters, schedule, clients, bookings. A template is a file to fill in, with example rows; an export is your data in the same format.": "Импортируйте по порядку: услуги, мастера, расписание, клиенты, записи. Шаблон — файл для заполнения с примерами строк; выгрузка — ваши данные в том же формате.",
	"Download the template": "Скачать шаблон", "Export the salon's data": "Выгрузить данные салона", "Days": "Дни", "Sections": "Разделы", "Cancelled": "Отменена", "Deposit paid": "Предоплата внесена", "service": "услуга",
	"master": "мастер", "salon": "салон", "SMS": "SMS",
	"Booked": "Создана", "Moved": "Перенесена", "Visit completed": "Визит состоялся", "The client did not show up": "Клиент не пришёл",
	"Not paid in time: the time was released": "Не оплачена вовремя: время освобождено", "Deposit paid: confirmed": "Предоплата внесена: подтверждена",
	"Deposit refunded": "Предоплата возвращена", "the salon": "салон", "the client": "клиент", "automatically": "автоматически",
	"e-mail": "эл. почта", "(marked by itself after the day)": "(отмечено автоматически после дня визита)",
	"Changed": "Изменено", "Deleted": "Удалено", "Confirmed": "Подтверждена", "booking": "запись", "master's service": "услуга мастера",
	"Service added to a master": "Мастеру добавлена услуга", "Service taken from a master": "У мастера убрана услуга",
	"Master's price or duration of a service changed": "Изменены цена или длительность услуги у мастера",
	"shift": "смена", "user": "пользователь", "invitation": "приглашение", "import of %s": "импорт %s", "What changed": "Что изменено", "Address": "Адрес", "Salon phone": "Телефон салона",
	"A few words about the salon": "Несколько слов о салоне", "Privacy policy link": "Ссылка на политику конфиденциальности",
	"The booking form links it before a client gives their name and phone (152-FZ).": "Форма записи показывает её, прежде чем клиент укажет имя и телефон (152-ФЗ).",
	"The booking form links it before a client gives their name and phone.":          "Форма записи показывает её, прежде чем клиент укажет имя и телефон.", "Getting started": "С чего начать", "Four steps, and clients can book online.": "Четыре шага — и клиенты смогут записываться онлайн.",
	"Add your services": "Добавьте услуги", "Add your masters (each does every service unless you untick it)": "Добавьте мастеров (каждый делает все услуги, пока вы не снимете отметку)",
	"Set the working hours": "Задайте рабочие часы", "Share the booking link": "Поделитесь ссылкой для записи",
	"Copy the first day to every day": "Скопировать первый день на все дни", "For every master (the salon's hours)": "Для всех мастеров (часы работы салона)", "Booking link": "Ссылка для записи",
	"Send it to clients, put it in your social profiles and maps.": "Отправляйте её клиентам, добавьте в соцсети и на карты.",
	"The link": "Ссылка", "Copied": "Скопировано", "Copy the link": "Скопировать ссылку", "On your website": "На вашем сайте",
	"Paste this where the booking form should appear on your site.": "Вставьте этот код туда, где на сайте должна быть форма записи.",
	"Embed code": "Код для сайта", "Copy the code": "Скопировать код", "QR code for the reception desk": "QR-код для стойки администратора",
	"QR code of the booking link": "QR-код ссылки для записи", "Download PNG": "Скачать PNG", "Download SVG": "Скачать SVG",
	"This link opens the bot straight at your salon:":                      "Эта ссылка открывает бота сразу на вашем салоне:",
	"No Telegram bot runs on this server (TELEGRAM_BOT_TOKEN is not set).": "На этом сервере не запущен Telegram-бот (не задан TELEGRAM_BOT_TOKEN).", "Client notes": "Заметки о клиенте", "min": "мин",
	"Price":           "Цена",
	"Deposit":         "Предоплата",
	"Book":            "Записать",
	"History":         "История",
	"Cancel booking":  "Отменить запись",
	"Reason":          "Причина",
	"Move":            "Перенести",
	"Move booking":    "Перенести запись",
	"Processing, min": "Выдержка, мин",
	"Finish, min":     "Завершение, мин",
	"After the service the client may wait (a colour taking) while the master is free for others, then the master finishes.": "После услуги клиент может ждать (пока берётся краска), мастер в это время свободен для других, затем мастер завершает.",
	"Then, in the same visit (optional)":                                                                  "Затем, в том же визите (необязательно)",
	"Each service follows the one before; the visit is booked whole or not at all.":                       "Каждая услуга идёт после предыдущей; визит записывается целиком или никак.",
	"Done at the same time as (two masters, one client)":                                                  "Делается одновременно с (два мастера, один клиент)",
	"In a visit, a service done at the same time as the one before it starts with it, by another master.": "В визите услуга, которая делается одновременно с предыдущей, начинается вместе с ней, у другого мастера.",
	"Move only %s": "Перенести только: %s",
	"The rest of the visit stays; this service must still come after the one before it and before the one after it.": "Остальной визит остаётся; эта услуга должна идти после предыдущей и до следующей.",
	"Move the whole visit":                    "Перенести весь визит",
	"Cancel the whole visit":                  "Отменить весь визит",
	"Visit":                                   "Визит",
	"processing %s: the master is free":       "выдержка %s: мастер свободен",
	"the client waits %s":                     "клиент ждёт %s",
	"processing until %s: the master is free": "выдержка до %s: мастер свободен",
	"finish":                "завершение",
	"service %s of a visit": "услуга %s визита",
	"The visit's services follow one another from this time.": "Услуги визита идут одна за другой с этого времени.",
	"Mark completed": "Визит состоялся",
	"Mark no-show":   "Клиент не пришёл",
	"Hold until":     "Удерживается до",
	"Cancel reason":  "Причина отмены",
	"Name given":     "Имя в записи",
	"This time is taken. The nearest free times:":           "Это время занято. Ближайшее свободное время:",
	"This time is taken, and there is nothing free nearby.": "Это время занято, и рядом нет свободного времени.",
	"The client is found by phone, or created.":             "Клиент ищется по телефону или создаётся.",
	"any master": "любой мастер",
	"Clients cannot change it themselves after %s.": "Клиент не может изменить запись сам после %s.",
	"created":      "создана",
	"rescheduled":  "перенесена",
	"hold_expired": "истекло удержание",
	"by %s":        "— %s",
	"system":       "система",
	"client":       "клиент",
	"admin":        "администратор",

	// clients
	"Search by name or phone": "Поиск по имени или телефону",
	"Search":                  "Найти",
	"Bookings":                "Записи",
	"No-shows":                "Неявки",
	"Last visit":              "Последний визит", "Next booking": "Следующая запись",
	"Nothing found.":   "Ничего не найдено.",
	"Save":             "Сохранить",
	"Book this client": "Записать клиента",

	// catalogue
	"Active":              "Активен",
	"Bookable":            "Активна",
	"Bookable by clients": "Активна: на неё записываются",
	"Add master":          "Добавить мастера",
	"Add service":         "Добавить услугу",
	"Duration, min":       "Длительность, мин",
	"Buffer, min":         "Перерыв после, мин",
	"Own duration, min":   "Своя длительность, мин",
	"Own price":           "Своя цена",
	"Does":                "Выполняет",
	"Services and terms":  "Услуги и условия",
	"Telegram link code":  "Код привязки Telegram",
	"New code":            "Новый код",
	"Send %s to the bot as: /link %s (valid until %s).": "Отправьте боту: /link %[2]s (действует до %[3]s). Мастер: %[1]s.",
	"Linked Telegram accounts: %d":                      "Привязано аккаунтов Telegram: %d",
	"Shifts":                                            "Смены",
	"Edit a day":                                        "Изменить день",
	"Leave the start empty for a day off.":              "Оставьте начало пустым, чтобы сделать выходной.",
	"Break start":                                       "Начало перерыва",
	"Break end":                                         "Конец перерыва",
	"Weekly template":                                   "Недельный шаблон",
	"From":                                              "С",
	"To":                                                "По",
	"Apply":                                             "Применить",
	"Next 14 days":                                      "Ближайшие 14 дней",
	"yes":                                               "да",
	"no":                                                "нет",
	"Mon":                                               "Пн",
	"Tue":                                               "Вт",
	"Wed":                                               "Ср",
	"Thu":                                               "Чт",
	"Fri":                                               "Пт",
	"Sat":                                               "Сб",
	"Sun":                                               "Вс",
	"These bookings would be outside working hours:": "Эти записи окажутся вне рабочего времени:",

	// settings and users
	"Salon name":            "Название салона",
	"Time zone":             "Часовой пояс",
	"Slot step, min":        "Шаг записи, мин",
	"Minimum notice, min":   "Минимум до записи, мин",
	"Hold for deposit, min": "Удержание до оплаты, мин",
	"Cancel cutoff, hours":  "Отмена клиентом не позднее, ч",
	"Booking horizon, days": "Запись вперёд, дней",
	"Refund policy":         "Возврат предоплаты",
	"Language":              "Язык",
	"always":                "всегда",
	"before_cutoff":         "до срока отмены",
	"never":                 "никогда",
	"The salon's country":   "Страна салона",
	"zone Africa":           "Африка",
	"zone America":          "Америка",
	"zone Antarctica":       "Антарктида",
	"zone Arctic":           "Арктика",
	"zone Asia":             "Азия",
	"zone Atlantic":         "Атлантический океан",
	"zone Australia":        "Австралия",
	"zone Europe":           "Европа",
	"zone Indian":           "Индийский океан",
	"zone Pacific":          "Тихий океан",
	"zone UTC":              "UTC",
	"zone Other":            "Другие",
	"Role":                  "Роль",
	"owner":                 "владелец",
	"Add user":              "Добавить пользователя",
	"%s is invited as %s.":  "%s приглашён(а) как %s.",
	"Hand them this link (it is shown only now):": "Передайте эту ссылку сами (она показана только сейчас):",
	"An SMS is paid by its parts: a part holds 70 letters in Cyrillic (160 in Latin); a confirmation with its links to confirm and cancel takes 3 or 4 parts. See what each took on a booking's page.": "SMS оплачивается по частям: в части 70 букв кириллицей (160 латиницей); подтверждение со ссылками «подтвердить» и «отменить» занимает 3–4 части. Сколько заняло каждое, видно на странице записи.",
	"Accepted":                         "Принято",
	"(break %s)":                       "(перерыв %s)",
	"Packages and certificates online": "Абонементы и сертификаты онлайн",
	"Where clients buy what you have on sale, paying online; the code comes by e-mail.":                              "Здесь клиенты покупают то, что у вас в продаже, с оплатой онлайн; код приходит на почту.",
	"Put a package or a certificate on sale (Packages and certificates) and its page to buy it online appears here.": "Выставьте абонемент или сертификат на продажу (раздел «Абонементы и сертификаты»), и здесь появится страница, где его покупают онлайн.",
	"Invitation link":  "Ссылка приглашения",
	"Invitations":      "Приглашения",
	"Link valid until": "Ссылка действует до",
	"Withdraw":         "Отозвать",
	"Invite a user":    "Пригласить пользователя",
	"They get an e-mail with a link to set their own password. Inviting an address again sends a new link.": "Приглашённый получит письмо со ссылкой и сам задаст пароль. Повторное приглашение отправит новую ссылку.",
	"Invite":      "Пригласить",
	"e-mail sent": "письмо отправлено",
	"this server sends no e-mail: hand over the link":                                   "сервер не отправляет почту: передайте ссылку сами",
	"the e-mail did not go: invite again":                                               "письмо не ушло: пригласите ещё раз",
	"This server sends no e-mail: hand them this link yourself (it is shown only now):": "Сервер не отправляет почту: передайте эту ссылку сами (она показана только сейчас):",
	"Invitation e-mailed: its link lets them set their password.":                       "Приглашение отправлено на почту: по ссылке из письма задают пароль.",
	"The invitation's e-mail did not go: invite the address again in a while.":          "Письмо с приглашением не ушло: пригласите адрес ещё раз чуть позже.",
	"Invitation withdrawn: its link no longer works.":                                   "Приглашение отозвано: ссылка больше не действует.",
	"Invitation to the panel":                                                           "Приглашение в панель",
	"%s invites you to its panel as %s.":                                                "%s приглашает вас в свою панель как %s.",
	"At least 8 characters.":                                                            "Не короче 8 символов.",
	"Password again":                                                                    "Пароль ещё раз",
	"Set the password and log in":                                                       "Задать пароль и войти",
	"This invitation does not work":                                                     "Это приглашение не действует",
	"It was used, withdrawn or has expired. Ask the salon's owner to invite you again.": "Им уже воспользовались, его отозвали или срок истёк. Попросите владельца салона пригласить вас снова.",
	"the passwords differ":                                                              "пароли не совпадают",
	"Remove":                                                                            "Удалить",
	"you":                                                                               "вы",

	// import
	"Import":              "Импорт",
	"What the file holds": "Что в файле",
	"CSV file":            "Файл CSV",
	"UTF-8, Windows-1251 or Windows-1252; comma, semicolon or tab; a header row in English or Russian. Up to %d MiB.": "UTF-8, Windows-1251 или Windows-1252; запятая, точка с запятой или табуляция; строка заголовков на русском или английском. До %d МиБ.",
	"Check":                             "Проверить",
	"Choose what the file holds.":       "Выберите, что в файле.",
	"Choose a file.":                    "Выберите файл.",
	"The file is larger than %d MiB.":   "Файл больше %d МиБ.",
	"services":                          "услуги",
	"masters":                           "мастера",
	"schedule":                          "расписание",
	"clients":                           "клиенты",
	"bookings":                          "записи",
	"Checking; nothing is written yet.": "Проверка; пока ничего не записывается.",
	"Checked: this is what the import will do.": "Проверено: так пройдёт импорт.",
	"Importing.":                  "Импорт идёт.",
	"Imported.":                   "Импорт завершён.",
	"The file could not be read.": "Файл не прочитан.",
	"rows":                        "строк",
	"Read":                        "Прочитано",
	"Created":                     "Создано",
	"Updated":                     "Изменено",
	"Unchanged":                   "Без изменений",
	"Rejected":                    "Отклонено",
	"Unknown columns, ignored:":   "Неизвестные столбцы (пропущены):",
	"and %d more":                 "и ещё %d",
	"Rejected rows":               "Отклонённые строки",
	"Line":                        "Строка",
	"Key":                         "Ключ",
	"Column":                      "Столбец",
	"Value":                       "Значение",
	"First rows":                  "Первые строки",
	"More rows are not shown.":    "Остальные строки не показаны.",
	"Import another file":         "Импортировать ещё файл",
	"rejected":                    "отклонена",
	"unchanged":                   "без изменений",

	// privacy
	"Personal data": "Персональные данные",
	"Export everything stored about the client": "Выгрузить всё, что хранится о клиенте",
	"Erasing replaces the client's name, phone, notes and chat accounts; their bookings stay, for the salon's counts. It cannot be undone.": "Удаление заменит имя, телефон, заметки и аккаунты клиента; записи останутся для статистики салона. Отменить нельзя.",
	"Erase the client's personal data":      "Удалить персональные данные клиента",
	"The client's personal data is erased.": "Персональные данные клиента удалены.",

	// calendars
	"Calendar feed": "Календарь",
	"A private link the master subscribes to in their phone's calendar; a new link ends the old one.": "Личная ссылка, на которую мастер подписывается в календаре телефона; новая ссылка отменяет старую.",
	"The master has a calendar link.": "У мастера есть ссылка на календарь.",
	"New calendar link":               "Новая ссылка на календарь",
	"Revoke the link":                 "Отозвать ссылку",

	// payments
	"Payments":               "Оплаты",
	"Payment":                "Оплата",
	"Deposits received":      "Получено предоплат",
	"Refunded":               "Возвращено",
	"package or certificate": "абонемент или сертификат",
	"it cancelled the refund: the money is still owed to the buyer": "он отменил возврат: деньги всё ещё причитаются покупателю",
	"Ask for the refund again":                                      "Запросить возврат снова",
	"A refund the system will not finish by itself":                 "Возврат, который система сама не завершит",
	"It succeeded at the payment service: record it":                "Он прошёл в платёжном сервисе — отметить",
	"Look for this refund in the payment service's account. Succeeded there: record it. Not there: ask for it again.": "Найдите этот возврат в личном кабинете платёжного сервиса. Если он там прошёл успешно, отметьте это; если его нет, запросите возврат снова.",
	"The payment service did not answer, so the refund could not be checked: try again in a minute.":                  "Платёжный сервис не ответил, и возврат не удалось проверить: попробуйте через минуту.",
	"The refund is recorded as made at the payment service.":                                                          "Возврат отмечен как сделанный в платёжном сервисе.",
	"refunded: the salon found the refund made at the provider":                                                       "возвращено: салон нашёл возврат сделанным в платёжном сервисе",
	"Checked again with the payment service":                                                                          "Повторная проверка в платёжном сервисе",
	"Money held released":                                                                                             "Заблокированные деньги освобождены",
	"Refund asked":                                                                                                    "Запрошен возврат",
	"Refund recorded as made at the payment service":                                                                  "Возврат отмечен как сделанный в платёжном сервисе",
	"This sale was made already (the form was sent twice): here it is. Its code was shown once, after the first send; nothing more was sold.": "Эта продажа уже сделана (форма отправлена дважды): вот она. Код был показан один раз, после первой отправки; больше ничего не продано.",
	"A booking paid with it at the desk": "Запись оплачена им на месте", "Paid at the desk with": "Оплачена на месте",
	"payment":                           "оплата",
	"the provider cancelled the refund": "платёжный сервис отменил возврат",
	"the provider lists no refunds: check at the provider whether this refund was made; if it was not, ask for it again here":                                "платёжный сервис не даёт списка возвратов: проверьте в его личном кабинете, сделан ли этот возврат; если нет, запросите его снова здесь",
	"the provider's refunds of the payment are not what ours add up to: check them at the provider; if this refund is not among them, ask for it again here": "возвраты этого платежа в платёжном сервисе не сходятся с нашими: проверьте их в его личном кабинете; если этого возврата среди них нет, запросите его снова здесь",
	"The refund is asked of the payment service again: it is followed until the money goes back.":                                                            "Возврат снова запрошен у платёжного сервиса: мы следим за ним, пока деньги не вернутся.",
	"The money went back to the buyer's card.": "Деньги вернулись на карту покупателя.",
	"offer for sale":                    "предложение для продажи",
	"Net":                               "Итого",
	"Ledger":                            "Журнал денег",
	"Entry":                             "Операция",
	"Amount":                            "Сумма",
	"Provider":                          "Платёжный сервис",
	"Payment sessions started this day": "Оплаты, начатые в этот день",
	"deposit_received":                  "предоплата получена",
	"deposit_refunded":                  "предоплата возвращена",
	"payment registering":               "создаётся",
	"payment registered":                "ждёт оплаты клиентом",
	"payment unknown":                   "ответ сервиса не получен; проверяется",
	"payment authorized":                "оплачено, списывается",
	"payment canceling":                 "деньги освобождаются",
	"payment completed":                 "оплачено",
	"payment canceled":                  "отменено, деньги не списаны",
	"payment failed":                    "не оплачено",
	"payment refunding":                 "возвращается",
	"payment refunded":                  "возвращено",
	"The deposit is paid. Refund it in full?": "Предоплата получена. Вернуть её полностью?",
	"Fiscal receipts":                         "Фискальные чеки",

	"What the receipts of what is paid online say: deposits, and certificates and packages bought online (sent through YooKassa when receipts are on).":                                                                                                       "Что пишется в чеках оплат онлайн: предоплат, а также сертификатов и абонементов, купленных онлайн (чеки отправляет ЮKassa, когда они включены).",
	"The service's own rate: the receipt of a visit paid in advance (the settlement) carries it; what is paid in advance (a deposit, a certificate or a package bought online, and their refunds) carries its calculated rate: 20% is 20/120, 10% is 10/110.": "Ставка самой услуги: с ней выбивается чек визита, оплаченного заранее (зачёт предоплаты); то, что платят заранее (предоплата, сертификат или абонемент, купленные онлайн, и их возвраты), идёт по расчётной ставке: 20% — 20/120, 10% — 10/110.",

	"VAT":                                 "НДС",
	"Tax system":                          "Система налогообложения",
	"not given":                           "не указывать",
	"The service on the receipt":          "Название услуги в чеке",
	"the service's own name":              "название самой услуги",
	"no VAT":                              "без НДС",
	"VAT 0%":                              "НДС 0%",
	"VAT 10%":                             "НДС 10%",
	"VAT 20%":                             "НДС 20%",
	"VAT 10/110":                          "НДС 10/110",
	"VAT 20/120":                          "НДС 20/120",
	"VAT 5%":                              "НДС 5%",
	"VAT 7%":                              "НДС 7%",
	"VAT 22%":                             "НДС 22%",
	"VAT 5/105":                           "НДС 5/105",
	"VAT 7/107":                           "НДС 7/107",
	"VAT 22/122":                          "НДС 22/122",
	"general (OSN)":                       "общая (ОСН)",
	"simplified, income (USN)":            "упрощённая, доходы (УСН)",
	"simplified, income minus expense":    "упрощённая, доходы минус расходы",
	"single tax on imputed income (ENVD)": "ЕНВД",
	"unified agricultural tax (ESN)":      "ЕСХН",
	"patent (PSN)":                        "патентная (ПСН)",
	"Stuck: the payment service does not answer":                                                                   "Зависло: платёжный сервис не отвечает",
	"Money held for a booking that is off":                                                                         "Деньги заблокированы за отменённую запись",
	"Deposit kept for a cancelled booking":                                                                         "Предоплата удержана за отменённую запись",
	"Settlement receipt refused by the payment service":                                                            "Платёжный сервис отклонил чек расчёта",
	"Settlement receipt of a package or certificate sold online refused by the payment service":                    "Платёжный сервис отклонил чек зачёта предоплаты по абонементу или сертификату, купленному онлайн",
	"the package or certificate":                                                                                   "абонемент или сертификат",
	"Check the salon's receipt settings, then contact the payment service.":                                        "Проверьте настройки чеков салона, затем обратитесь в платёжный сервис.",
	"While online payment is down":                                                                                 "Пока онлайн-оплата недоступна",
	"refuse deposit bookings, saying why":                                                                          "не принимать записи с предоплатой, объясняя почему",
	"book them, the deposit paid in the salon":                                                                     "записывать, предоплата вносится в салоне",
	"No message carries a link to pay to this client. Make one here and send it yourself, in a chat or a message.": "Ни одно сообщение не везёт этому клиенту ссылку на оплату. Создайте её здесь и отправьте сами — в чате или сообщением.",
	"captured":   "списана",
	"released":   "отменена, деньги разблокированы",
	"never paid": "так и не оплачена",
	"declined, or expired unpaid, at the provider":                       "отклонена или истекла без оплаты у платёжного сервиса",
	"the booking was cancelled":                                          "запись отменена",
	"paid after the hold, the time taken":                                "оплачена после окончания удержания, время уже занято",
	"paid after the hold, the package or certificate it used given back": "оплачена после окончания удержания, а абонемент или сертификат уже возвращён на баланс",
	"captured before the cancellation was known":                         "списана до того, как стало известно об отмене",
	"refunded by the salon":                                              "возвращена салоном",
	"paid in the salon":                                                  "оплачено в салоне",
	"released by the salon":                                              "отменена салоном",
	"refunded in full: the booking was cancelled":                        "возвращена полностью: запись отменена",
	"the difference refunded: the booking moved to a smaller deposit":    "разница возвращена: запись перенесли на меньшую предоплату",
	"the booking was paid otherwise":                                     "запись оплачена иначе: деньги разблокированы",
	"paid after the visit":                                               "оплачена после визита: деньги разблокированы",
	"A message with a link to pay waits to be sent (see Messages). To send one yourself now, in a chat or a call, make it here.": "Сообщение со ссылкой на оплату ждёт отправки (см. «Сообщения»). Чтобы отправить ссылку самим сейчас, в чате или по телефону, создайте её здесь.",
	"paid":                    "оплачена",
	"refunded":                "возвращена",
	"hold expired":            "не оплачено вовремя",
	"the booking is %s":       "запись: %s",
	"the booking moved":       "запись перенесена",
	"too late to remind":      "поздно напоминать",
	"its time has passed":     "время записи прошло",
	"the difference is paid":  "разница оплачена",
	"the client unsubscribed": "клиент отписался",
	"the booking's e-mail is no longer this one":                                                         "у записи теперь другая эл. почта",
	"the client's phone is no longer this one":                                                           "у клиента теперь другой телефон",
	"an SMS abroad to a client new online: send it again if the client is real":                          "SMS за границу новому клиенту из онлайн-записи: отправьте ещё раз, если клиент настоящий",
	"too many SMS to this number in a day: send it again if the client is real":                          "слишком много SMS на этот номер за сутки: отправьте ещё раз, если клиент настоящий",
	"too many SMS to new clients in an hour (a flood of bookings?): send it again if the client is real": "слишком много SMS новым клиентам за час (поток записей?): отправьте ещё раз, если клиент настоящий",
	"paid online":               "оплачено онлайн",
	"due":                       "к доплате",
	"Up to %s can be refunded.": "Можно вернуть до %s.",
	"By the salon's refund policy, the deposit of %s paid online is kept: cancelling does not refund it.": "По правилам возврата салона предоплата %s, внесённая онлайн, остаётся у салона: при отмене она не возвращается.",
	"Cancelling refunds the deposit of %s paid online to the client.":                                     "При отмене предоплата %s, внесённая онлайн, вернётся клиенту.",
	"Nothing to apply: the file changes nothing. Fix the rows above and upload it again.":                 "Применять нечего: файл ничего не меняет. Исправьте строки выше и загрузите его снова.",
	"A service of a visit: the visit's deposit, payments and messages are on its page,":                   "Услуга визита: предоплата, платежи и сообщения визита — на его странице,",
	"On the visit's page,":              "На странице визита,",
	"What was paid online is refunded.": "Оплаченное онлайн вернётся.",
	"By the salon's refund policy, %s of what the package or certificate paid is not given back.": "По правилам возврата салона %s из оплаченного абонементом или сертификатом не вернётся.",
	"Who cancels":                                      "Кто отменяет",
	"the client: they asked to cancel":                 "клиент: попросил отменить",
	"the salon (a master is ill, the salon is closed)": "салон (мастер заболел, салон закрыт)",
	"What was paid online is refunded, and what a package or certificate paid goes back to it.": "Оплаченное онлайн вернётся, оплаченное абонементом или сертификатом вернётся на него.",
	"Nothing is paid online yet.":                           "Онлайн пока ничего не оплачено.",
	"What the package or certificate paid goes back to it.": "Оплаченное абонементом или сертификатом вернётся на него.",
	"The terms of cancelling changed since the page was shown (a payment came, or the cancellation deadline passed): check them and cancel again.": "Условия отмены изменились, пока страница была открыта (пришла оплата или прошёл срок отмены): проверьте их и отмените снова.",
	"at the client's request": "по просьбе клиента",
	"by the salon":            "по решению салона",
	"The booking moved to a larger deposit: %s more is due online. If the client paid it here, in the salon, record it; a payment of it online is then cancelled.": "Запись перенесли на бо́льшую предоплату: онлайн осталось доплатить %s. Если клиент доплатил здесь, в салоне, отметьте это; онлайн-оплата тогда отменится.",
	"The client was sent a link to pay on their channels (see Messages). To send it yourself, in a chat or a call, make one here.":                                 "Клиенту отправлена ссылка на оплату по его каналам (см. «Сообщения»). Чтобы отправить её самим, в чате или по телефону, создайте ссылку здесь.",
	"Payment link, valid until %s":                                      "Ссылка на оплату, действует до %s",
	"Make a payment link":                                               "Создать ссылку на оплату",
	"optional: messages and the payment link go there too":              "необязательно: туда тоже придут сообщения и ссылка на оплату",
	"If the service asks a deposit":                                     "Если услуга с предоплатой",
	"paid in the salon: the booking is confirmed now":                   "вносится в салоне: запись подтверждена сразу",
	"send the client a link to pay online: the time is held until paid": "отправить клиенту ссылку на онлайн-оплату: время держится, пока не оплачено",
	"The rest of the deposit paid in the salon":                         "Доплата предоплаты внесена в салоне",
	"Deposit paid late: booked again":                                   "Предоплата пришла поздно: запись восстановлена",
	"When a paid booking moves to a larger deposit":                     "Когда оплаченную запись переносят на бо́льшую предоплату",
	"ask the client the difference online":                              "просить клиента доплатить разницу онлайн",
	"take the difference at the visit":                                  "разница оплачивается при визите",
	"Needs attention":                                                   "Требует внимания",
	"Payments the system could not finish by itself, and money held or kept for bookings that are no longer on. Each action is recorded in the audit log.": "Оплаты, которые система не смогла завершить сама, и деньги, заблокированные или удержанные за записи, которых больше нет. Каждое действие записывается в журнал изменений.",
	"What":                     "Что",
	"Since":                    "С",
	"Last error":               "Последняя ошибка",
	"checks":                   "проверок",
	"Check again now":          "Проверить сейчас",
	"Release the money":        "Разблокировать деньги",
	"Refund":                   "Вернуть",
	"Nothing needs attention.": "Внимания ничего не требует.",
	"The deposit is paid. Refund it, in full or in part?": "Предоплата получена. Вернуть её полностью или частично?",
	"Enter an amount, like 500 or 500.50":                 "Введите сумму, например 500 или 500,50",
	"The deposit is not paid yet. If the client paid it here, in the salon, confirm the booking; a payment of it online is then cancelled.": "Предоплата ещё не внесена. Если клиент оплатил её здесь, в салоне, подтвердите запись; онлайн-оплата будет отменена.",
	"Deposit paid in the salon": "Предоплата внесена в салоне",
	"Payment history":           "История оплаты",
	"Why":                       "Почему",
	"The deposit is recorded as paid in the salon; the booking is confirmed.": "Предоплата отмечена как внесённая в салоне; запись подтверждена.",
	"Checked with the payment service.":                                       "Проверено в платёжном сервисе.",
	"The money is being released.":                                            "Деньги разблокируются.",
	"Nothing to do: it had already moved on.":                                 "Делать ничего не нужно: оплата уже изменилась.",

	"Refund the deposit":             "Вернуть предоплату",
	"The deposit is being refunded.": "Предоплата возвращается.",

	// audit
	"Actor":      "Кто",
	"Action":     "Действие",
	"Entity":     "Объект",
	"Before":     "Было",
	"After":      "Стало",
	"When":       "Когда",
	"Filter":     "Фильтр",
	"all":        "все",
	"create":     "создание",
	"update":     "изменение",
	"delete":     "удаление",
	"reschedule": "перенос",
	"no_show":    "неявка",
	// Packages and certificates sold online.
	"Packages": "Абонементы",
	"What is left, %s, is refunded: %s goes back to the buyer's card through the payment service.":            "Возвращается остаток %s: покупателю на карту через платёжный сервис уйдёт %s.",
	"A refund of it is on its way at the payment service: what is left can be refunded once it is made.":      "Возврат по нему ещё идёт в платёжном сервисе: остаток можно будет вернуть, когда он пройдёт.",
	"What is left, %s, is refunded: nothing more goes back to the buyer's card (the refunds before paid it).": "Возвращается остаток %s: на карту покупателя больше ничего не уйдёт (прежние возвраты это уже вернули).",
	"What is left, %s, is refunded: pay it back in the salon.":                                                "Возвращается остаток %s: верните деньги в салоне.",
	"What is left, %s, is refunded: pay the client back %s in the salon.":                                     "Возвращается остаток %s: верните клиенту в салоне %s.",
	"Paid by the client (optional: a refund then says how much to pay back)":                                  "Оплачено клиентом (необязательно: при возврате будет видно, сколько вернуть)",
	"Booking %s holds %s: it comes back when it is cancelled, and can be refunded then.":                      "Запись %s держит %s: это вернётся на баланс при её отмене, тогда его можно будет вернуть.",
	"Bookings %s hold %s: it comes back when they are cancelled, and can be refunded then.":                   "Записи %s держат %s: это вернётся на баланс при их отмене, тогда его можно будет вернуть.",
	"kept by the cancellation rules: %s":                                                                      "удержано по правилам отмены: %s", "given back to it: %s": "возвращено на него: %s",
	"A client the salon knows by the phone needs no name.": "Для клиента, которого салон знает по телефону, имя можно не вводить.",
	"Sold online": "Продажи онлайн", "Title": "Название", "Valid for": "Срок", "On sale": "В продаже", "Buyer": "Покупатель",
	"The salon takes no payments online: clients buy packages and certificates in the salon.": "Салон не принимает оплату онлайн: абонементы и сертификаты покупают в салоне.",
	"Take off sale": "Снять с продажи", "Put on sale": "Выставить на продажу", "Put on sale online": "Выставить на продажу онлайн",
	"Valid for, days (optional)": "Срок действия, дней (необязательно)", "Online purchases": "Покупки онлайн",
	"the code's e-mail did not go": "письмо с кодом не ушло", "Bought online": "Куплено онлайн",
	"The code's e-mail did not go: %s": "Письмо с кодом не ушло: %s", "E-mail a new code to the buyer": "Отправить покупателю новый код",
	"The e-mail did not go: %s": "Письмо не ушло: %s", "%d days": "%d дн.", "code e-mailed %s": "код отправлен %s", "this server sends no e-mail": "этот сервер не отправляет почту",
	"not recorded as sent":                  "не отмечено как отправленное",
	"Packages and certificates sold online": "Абонементы и сертификаты, проданные онлайн",
	"Purchases whose money is still on its way, whose refund the payment service has not made, or whose code was not e-mailed. Open the balance to send a new code or refund it.": "Покупки, деньги за которые ещё в пути, возврат по которым платёжный сервис не сделал, или код которых не ушёл письмом. Откройте баланс, чтобы отправить новый код или вернуть деньги.", "The payment service: %s": "Платёжный сервис: %s",
	"sale registering": "создаётся", "sale registered": "ждёт оплаты", "sale unknown": "проверяется", "sale authorized": "оплачено, списывается",
	"sale completed": "оплачено", "sale canceled": "не оплачено", "sale failed": "не оплачено", "sale refunding": "возвращается",
	"sale refunded": "возвращено",
	"%s: %s of %s":  "%s: %s из %s",
	"What was left is being refunded to the buyer's card through the payment service.": "Остаток возвращается на карту покупателя через платёжный сервис.",
	"On sale online: clients buy it on the widget's gift page.":                        "Выставлено на продажу: клиенты покупают на странице подарков виджета.",
	"A new code is e-mailed to the buyer; the old one no longer works.":                "Новый код отправлен покупателю; старый больше не действует.",

	"Pay with a package or a certificate (optional)": "Оплата абонементом или сертификатом (необязательно)",
	"Certificate or package code":                    "Код сертификата или абонемента",
	"none: paid in the salon":                        "нет: оплата в салоне",

	"The package or certificate cannot pay for this.": "Абонементом или сертификатом это не оплатить.",

	"paid in part with a certificate: the rest at the salon": "частично оплачено сертификатом, остальное в салоне",
	"%s …%s (%s): %s left":                                   "%s …%s (%s): осталось %s",
	"The client's bookings that day:":                        "Записи клиента в этот день:",
	"paid with a package or certificate":                     "оплата абонементом или сертификатом",
	"e.g. 3,000":                                             "например, 3 000", "e.g. 8,000": "например, 8 000",
	"What was done": "Что сделано",
	"no master does it: clients are not offered it": "её не делает ни один мастер: клиентам она не предлагается",
}

// Field is a field's name as Fields keys it, for a template to find the
// field's error.
func (l *lang) Field(name string) string { return i18n.Field(name).In(l.Code) }

// Fields puts the core's refused fields in the page's language: each
// field's label and why.
func (l *lang) Fields(fields map[string]i18n.Text) map[string]string {
	out := make(map[string]string, len(fields))
	for k, v := range fields {
		out[i18n.Field(k).In(l.Code)] = v.In(l.Code)
	}
	return out
}

// When is a salon-local time as a list of choices shows it: "12.01
// 14:45" in Russian, "12 Jan 14:45" in English, with the year when it is
// not now's.
func (l *lang) When(t, now time.Time) string {
	day := "02.01"
	if l.Code != "ru" {
		day = "2 Jan"
	}
	if t.Year() != now.In(t.Location()).Year() {
		day += " 2006"
		if l.Code == "ru" {
			day = "02.01.2006"
		}
	}
	return t.Format(day) + " " + i18n.Clock(t)
}

// Day is a day as a list of days reads it: "08.12" / "8 Dec".
func (l *lang) Day(d booking.Date) string {
	if l.Code == "ru" {
		return fmt.Sprintf("%02d.%02d", d.Day, d.Month)
	}
	return fmt.Sprintf("%d %s", d.Day, d.Month.String()[:3])
}

// DateTime is a moment of the past or future as a line of a list reads
// it, with its year: "07.12.2026 15:04" / "7 Dec 2026, 15:04" (an English
// reader takes 07.12 for July 12th), the repeated hour named.
func (l *lang) DateTime(t time.Time) string {
	if l.Code == "ru" {
		return t.Format("02.01.2006 ") + i18n.Clock(t)
	}
	return t.Format("2 Jan 2006, ") + i18n.Clock(t)
}

// Quote is a name quoted as the language quotes: «Анна» / “Anna”.
func (l *lang) Quote(s string) string {
	if l.Code == "ru" {
		return "«" + s + "»"
	}
	return "“" + s + "”"
}

// Date is a day with its year as a line reads it: "09.12.2026" / "9 Dec
// 2026" (an English reader takes 09.12 for September 12th).
func (l *lang) Date(d booking.Date) string {
	if l.Code == "ru" {
		return fmt.Sprintf("%02d.%02d.%d", d.Day, d.Month, d.Year)
	}
	return fmt.Sprintf("%d %s %d", d.Day, d.Month.String()[:3], d.Year)
}

// MonthYear is a month as a heading: "March 2026" / "Март 2026".
func (l *lang) MonthYear(d booking.Date) string {
	if l.Code == "ru" {
		return monthNamesRU[d.Month] + " " + strconv.Itoa(d.Year)
	}
	return d.Month.String() + " " + strconv.Itoa(d.Year)
}

var monthNamesRU = []string{"", "Январь", "Февраль", "Март", "Апрель", "Май", "Июнь", "Июль", "Август", "Сентябрь",
	"Октябрь", "Ноябрь", "Декабрь"}
