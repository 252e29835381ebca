package main

import (
	"regexp"
	"strconv"
	"time"
)

// strptimeYMD is datetime.strptime(s, "%Y-%m-%d"): four-digit year, month
// and day of one or two digits, a valid calendar date.
func strptimeYMD(s string) (time.Time, bool) {
	m := ymdRE.FindStringSubmatch(s)
	if m == nil {
		return time.Time{}, false
	}
	return mkDate(m[1], m[2], m[3], "0", "0", "0")
}

var (
	ymdRE = regexp.MustCompile(`^(\d{4})-(1[0-2]|0[1-9]|[1-9])-(3[01]|[12]\d|0[1-9]|[1-9]| [1-9])$`)
)

func mkDate(y, mo, d, h, mi, s string) (time.Time, bool) {
	at := func(x string) int {
		n, _ := strconv.Atoi(trimSpace(x))
		return n
	}
	Y, M, D := at(y), at(mo), at(d)
	t := time.Date(Y, time.Month(M), D, at(h), at(mi), at(s), 0, time.UTC)
	if t.Day() != D || int(t.Month()) != M || Y < 1 {
		return time.Time{}, false
	}
	return t, true
}

func trimSpace(s string) string {
	for len(s) > 0 && s[0] == ' ' {
		s = s[1:]
	}
	return s
}
