package importer

import (
	"fmt"
	"regexp"
)

// translator returns the function that puts the reasons of a report in
// lang (ru, or English). Reasons are written in English; those the core
// gives with a number inside are matched by pattern.
func translator(lang string) func(string, ...any) string {
	return func(s string, args ...any) string {
		if lang == "ru" {
			if r, ok := ru[s]; ok {
				s = r
			} else {
				for _, p := range ruPatterns {
					if p.re.MatchString(s) {
						s = p.re.ReplaceAllString(s, p.ru)
						break
					}
				}
			}
		}
		if len(args) > 0 {
			return fmt.Sprintf(s, args...)
		}
		return s
	}
}

var ru = map[string]string{
	"required":                                                                        "обязательное поле",
	"line %d: %s; the import stopped there":                                           "строка %d: %s; импорт остановлен на ней",
	"not a whole number of minutes":                                                   "не целое число минут",
	"not an amount like 1500 or 1 500,50":                                             "не сумма вида 1500 или 1 500,50",
	"not a date like 2026-03-08 or 08.03.2026":                                        "не дата вида 2026-03-08 или 08.03.2026",
	"not a time like 9:30 or 18:00":                                                   "не время вида 9:30 или 18:00",
	"not a time like 9:30 or 18:00 (+02:00 for the next day)":                         "не время вида 9:30 или 18:00 (+02:00 — время следующего дня)",
	"confirmed, completed or no_show":                                                 "подтверждена, состоялась или неявка (confirmed, completed, no_show)",
	"bookings would be outside working hours: %s":                                     "записи окажутся вне рабочего времени: %s",
	"this time is taken; the nearest free starts are listed":                          "это время занято; ближайшее свободное время указано",
	"this time is taken, and nothing is free nearby":                                  "это время занято, и рядом нет свободного времени",
	"no such master in this salon":                                                    "в салоне нет такого мастера",
	"no such service in this salon":                                                   "в салоне нет такой услуги",
	"this master does not do this service":                                            "мастер не выполняет эту услугу",
	"this master's day is given twice":                                                "этот день мастера указан дважды",
	"shifts of one day must not overlap":                                              "смены одного дня пересекаются",
	"overlaps a shift of the day before or after":                                     "пересекается со сменой соседнего дня",
	"a Telegram user id (a number)":                                                   "идентификатор пользователя Telegram (число)",
	"must not be negative":                                                            "не может быть отрицательным",
	"must not exceed the price":                                                       "не может быть больше цены",
	"price must not be negative":                                                      "цена не может быть отрицательной",
	"must contain letters or digits, not only invisible characters":                   "должно содержать буквы или цифры",
	"must be valid UTF-8 text":                                                        "текст в неверной кодировке",
	"too long for a phone number":                                                     "слишком длинный номер телефона",
	"a phone number has only digits, spaces, dashes and a leading +":                  "номер телефона — это цифры, пробелы, дефисы и + в начале",
	"not a valid phone number: write it with the country code, like +7 999 123-45-67": "неверный номер телефона: укажите его с кодом страны, например +7 999 123-45-67",
	"times must be between 00:00 and 24:00":                                           "время должно быть от 00:00 до 24:00",
}

var ruPatterns = []struct {
	re *regexp.Regexp
	ru string
}{
	{regexp.MustCompile(`^must be between (\d+) and (\d+)$`), "должно быть от $1 до $2"},
	{regexp.MustCompile(`^longer than (\d+) KiB$`), "длиннее $1 КиБ"},
	{regexp.MustCompile(`^longer than (\d+) MiB: not a line of a CSV file$`), "длиннее $1 МиБ: это не строка CSV-файла"},
	{regexp.MustCompile(`^the quote that opens this cell does not close within (\d+) KiB; the lines after it are read as rows of their own$`),
		"кавычка, открывающая ячейку, не закрыта в пределах $1 КиБ; следующие строки прочитаны как отдельные записи"},
	{regexp.MustCompile(`^too long \((\d+) characters at most\)$`), "слишком длинно (не больше $1 символов)"},
	{regexp.MustCompile(`^no service "(.*)" in this salon$`), "в салоне нет услуги «$1»"},
	{regexp.MustCompile(`^break (\S+) is outside the shift (\S+)$`), "перерыв $1 вне смены $2"},
	{regexp.MustCompile(`^shift (\S+) is empty$`), "смена $1 пустая"},
	{regexp.MustCompile(`^shift (\S+) ends before it starts \(a shift past midnight ends like \+02:00\)$`),
		"конец раньше начала: смена $1 (смена после полуночи заканчивается, например, в +02:00 или 26:00)"},
	{regexp.MustCompile(`^shift (\S+) is longer than (\d+) hours$`), "смена $1 длиннее $2 часов — похоже на ошибку"},
	{regexp.MustCompile(`^duration must be between 5 and 720 minutes$`), "длительность должна быть от 5 до 720 минут"},
}
