package booking_test

import (
	"testing"

	"salon/booking/bookingtest"
)

func TestMain(m *testing.M) { bookingtest.Main(m) }
