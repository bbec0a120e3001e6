//! Time on both sides without a date library in the WASM bundle: the API's RFC 3339 UTC strings
//! (`2026-11-21T10:00:00.000Z`) to Unix milliseconds, and the current time.

/// Parses `YYYY-MM-DDTHH:MM:SS[.fff]Z`. `None` for anything else.
pub fn parse_rfc3339_ms(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' || b[16] != b':' || !s.ends_with('Z') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let millis = match s.get(19..s.len() - 1) {
        Some("") => 0,
        Some(frac) if frac.starts_with('.') && frac.len() > 1 => {
            let digits = &frac[1..frac.len().min(4)];
            digits.parse::<i64>().ok()? * 10_i64.pow(3 - digits.len() as u32)
        }
        _ => return None,
    };
    // Days from civil (Howard Hinnant's algorithm).
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (mo + if mo > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(((days * 24 + h) * 60 + mi) * 60_000 + sec * 1000 + millis)
}

/// Unix milliseconds as the API writes times: `2026-11-21T22:08:09.857Z` (the inverse of
/// [`parse_rfc3339_ms`]).
pub fn format_rfc3339_ms(ms: i64) -> String {
    let (days, in_day) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let (h, mi, s, milli) = (in_day / 3_600_000, in_day / 60_000 % 60, in_day / 1000 % 60, in_day % 1000);
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{milli:03}Z")
}

/// "12 s ago", "3 min ago", "2 h ago", "3 d ago".
pub fn age(seconds: i64) -> String {
    match seconds {
        s if s < 60 => format!("{s} s ago"),
        s if s < 3600 => format!("{} min ago", s / 60),
        s if s < 86_400 => format!("{} h ago", s / 3600),
        s => format!("{} d ago", s / 86_400),
    }
}

/// How long ago an RFC 3339 time was, as `age` says it (the time itself when it does not parse).
pub fn ago(at: &str) -> String {
    parse_rfc3339_ms(at).map(|ms| age((now_ms() - ms).max(0) / 1000)).unwrap_or_else(|| at.to_owned())
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    #[cfg(target_arch = "wasm32")]
    {
        js_sys::Date::now() as i64
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
    }
}

/// `4:59`, `0:07`, or `expired`.
pub fn countdown(remaining_ms: i64) -> String {
    if remaining_ms <= 0 {
        return "expired".into();
    }
    let secs = remaining_ms / 1000;
    if secs >= 3600 { format!("{}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60) } else { format!("{}:{:02}", secs / 60, secs % 60) }
}

/// "5 minutes", "1 minute", "90 seconds", "2 hours", "1 hour 30 minutes".
pub fn duration_words(ms: i64) -> String {
    let plural = |n: i64, unit: &str| if n == 1 { format!("1 {unit}") } else { format!("{n} {unit}s") };
    if ms < 500 {
        return "less than a second".into();
    }
    let seconds = (ms + 500) / 1000;
    match seconds {
        s if s < 120 && s % 60 != 0 => plural(s, "second"),
        s if s < 3600 => plural((s + 30) / 60, "minute"),
        s => {
            let (hours, minutes) = (s / 3600, (s % 3600 + 30) / 60);
            if minutes == 0 || minutes == 60 {
                plural(hours + minutes / 60, "hour")
            } else {
                format!("{} {}", plural(hours, "hour"), plural(minutes, "minute"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_what_it_parses() {
        for ms in [0, 1500, 1_795_298_889_857, 951_782_400_000, 4_107_542_399_999] {
            assert_eq!(parse_rfc3339_ms(&format_rfc3339_ms(ms)), Some(ms), "{ms}");
        }
        assert_eq!(format_rfc3339_ms(1_795_298_889_857), "2026-11-21T22:08:09.857Z");
    }

    #[test]
    fn parses_the_api_format() {
        assert_eq!(parse_rfc3339_ms("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_rfc3339_ms("1970-01-01T00:00:01.5Z"), Some(1500));
        assert_eq!(parse_rfc3339_ms("2026-11-21T22:08:09.857Z"), Some(1_795_298_889_857));
        assert_eq!(parse_rfc3339_ms("2000-02-29T12:00:00.000Z"), Some(951_825_600_000));
    }

    #[test]
    fn refuses_other_formats() {
        assert_eq!(parse_rfc3339_ms("yesterday"), None);
        assert_eq!(parse_rfc3339_ms("2026-11-21 22:08:09Z"), None);
    }

    #[test]
    fn countdowns_read_like_a_clock() {
        assert_eq!(countdown(299_001), "4:59");
        assert_eq!(countdown(7_000), "0:07");
        assert_eq!(countdown(3_600_000), "1:00:00");
        assert_eq!(countdown(0), "expired");
        assert_eq!(countdown(500), "0:00");
    }

    #[test]
    fn ages_read_as_people_say_them() {
        assert_eq!(age(5), "5 s ago");
        assert_eq!(age(125), "2 min ago");
        assert_eq!(age(7300), "2 h ago");
        assert_eq!(age(200_000), "2 d ago");
        assert_eq!(ago("not a time"), "not a time");
    }
}
