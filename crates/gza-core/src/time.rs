//! Times as gza keeps them: `chrono::DateTime<Utc>` in the types, and in the database (and in
//! every JSON output) the text gza has always written, RFC 3339 in UTC to the second
//! (`2026-11-22T07:50:09Z`).

use chrono::{DateTime, NaiveDateTime, SecondsFormat, SubsecRound, Utc};

/// Now, to the second: what gza stores.
pub fn now() -> DateTime<Utc> {
    Utc::now().trunc_subsecs(0)
}

/// The stored text of `at`: `2026-11-22T07:50:09Z`. A time read from a row with fractions of a
/// second (gza never writes one) keeps them, so reading and writing back changes nothing.
pub fn to_db(at: &DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

/// A stored time: RFC 3339 (what gza writes), or SQLite's own `YYYY-MM-DD HH:MM:SS`, in UTC
/// (what `datetime('now')` in a hand-written statement gives). `None` for anything else.
pub fn parse_db(text: &str) -> Option<DateTime<Utc>> {
    if let Ok(at) = DateTime::parse_from_rfc3339(text) {
        return Some(at.with_timezone(&Utc));
    }
    NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f")
        .ok()
        .map(|naive| naive.and_utc())
}

/// For `#[serde(serialize_with)]`: a time as its stored text.
pub fn serialize<S: serde::Serializer>(at: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&to_db(at))
}

/// For `#[serde(serialize_with)]`: a time that may be missing, as its stored text or `null`.
pub fn serialize_opt<S: serde::Serializer>(
    at: &Option<DateTime<Utc>>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match at {
        Some(at) => serialize(at, s),
        None => s.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_times_read_and_write_back_unchanged() {
        for text in [
            "2026-11-22T07:50:09Z",
            "1999-12-31T23:59:59Z",
            "2026-01-01T00:00:00.250Z",
        ] {
            assert_eq!(to_db(&parse_db(text).unwrap()), text);
        }
        assert_eq!(
            to_db(&parse_db("2026-11-22 07:50:09").unwrap()),
            "2026-11-22T07:50:09Z"
        );
        assert_eq!(
            to_db(&parse_db("2026-11-22T09:50:09+02:00").unwrap()),
            "2026-11-22T07:50:09Z"
        );
        for bad in ["", "yesterday", "2026-11-22", "07:50:09"] {
            assert_eq!(parse_db(bad), None, "{bad}");
        }
    }

    #[test]
    fn now_is_stored_to_the_second() {
        let text = to_db(&now());
        assert_eq!(text.len(), "2026-11-22T07:50:09Z".len(), "{text}");
        assert!(text.ends_with('Z'), "{text}");
    }
}
