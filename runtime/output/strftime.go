package output

import (
	"strconv"
	"time"
)

// appendStrftime appends t formatted by a C strftime format, as bpftrace's
// time("%H:%M:%S ") prints it. The conversions scripts use are known;
// another is copied as written.
func appendStrftime(dst []byte, format string, t time.Time) []byte {
	two := func(dst []byte, n int) []byte {
		if n < 10 {
			dst = append(dst, '0')
		}
		return strconv.AppendInt(dst, int64(n), 10)
	}
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			dst = append(dst, c)
			continue
		}
		i++
		switch format[i] {
		case 'H':
			dst = two(dst, t.Hour())
		case 'M':
			dst = two(dst, t.Minute())
		case 'S':
			dst = two(dst, t.Second())
		case 'I':
			dst = two(dst, (t.Hour()+11)%12+1)
		case 'p':
			dst = t.AppendFormat(dst, "PM")
		case 'Y':
			dst = strconv.AppendInt(dst, int64(t.Year()), 10)
		case 'y':
			dst = two(dst, t.Year()%100)
		case 'm':
			dst = two(dst, int(t.Month()))
		case 'd':
			dst = two(dst, t.Day())
		case 'e':
			dst = t.AppendFormat(dst, "_2")
		case 'j':
			dst = t.AppendFormat(dst, "002")
		case 'b', 'h':
			dst = t.AppendFormat(dst, "Jan")
		case 'B':
			dst = t.AppendFormat(dst, "January")
		case 'a':
			dst = t.AppendFormat(dst, "Mon")
		case 'A':
			dst = t.AppendFormat(dst, "Monday")
		case 'Z':
			dst = t.AppendFormat(dst, "MST")
		case 'z':
			dst = t.AppendFormat(dst, "-0700")
		case 'T':
			dst = t.AppendFormat(dst, "15:04:05")
		case 'D':
			dst = t.AppendFormat(dst, "01/02/06")
		case 'F':
			dst = t.AppendFormat(dst, "2006-01-02")
		case 's':
			dst = strconv.AppendInt(dst, t.Unix(), 10)
		case 'f':
			// bpftrace's extension: microseconds.
			us := t.Nanosecond() / 1000
			s := strconv.Itoa(us)
			for range 6 - len(s) {
				dst = append(dst, '0')
			}
			dst = append(dst, s...)
		case 'n':
			dst = append(dst, '\n')
		case 't':
			dst = append(dst, '\t')
		case '%':
			dst = append(dst, '%')
		default:
			dst = append(dst, '%', format[i])
		}
	}
	return dst
}
