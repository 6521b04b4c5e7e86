//! Backing off a failing extraction endpoint across regenerations: after a regeneration whose
//! calls all failed, automatic regenerations make no call for a while (one minute, doubling with
//! each such regeneration in a row, at most an hour); one successful call resets it.

use std::time::Duration;

use chrono::{DateTime, Utc};

use gza_store::ExtractionBackoff;

/// The wait after the first failed regeneration.
pub const FIRST: Duration = Duration::from_secs(60);
/// The longest wait.
pub const LONGEST: Duration = Duration::from_secs(3600);

/// How the extraction calls of one regeneration went.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallsMade {
    pub succeeded: usize,
    pub failed: usize,
    /// The last failure's message.
    pub last_error: Option<String>,
}

/// How long to leave the endpoint alone after `failures` failed regenerations in a row.
pub fn wait_after(failures: i64) -> Duration {
    let doublings = failures.saturating_sub(1).clamp(0, 16) as u32;
    FIRST.saturating_mul(1 << doublings).min(LONGEST)
}

/// The time before which automatic regenerations make no call, if it is still ahead of `now`.
pub fn active_until(state: &ExtractionBackoff, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let until = DateTime::parse_from_rfc3339(state.until.as_deref()?).ok()?;
    let until = until.with_timezone(&Utc);
    (until > now).then_some(until)
}

/// The back-off after a regeneration that made `calls` at `now`; `None` when it is unchanged
/// (no call was made).
pub fn after(
    state: &ExtractionBackoff,
    calls: &CallsMade,
    now: DateTime<Utc>,
) -> Option<ExtractionBackoff> {
    if calls.succeeded > 0 {
        let reset = ExtractionBackoff::default();
        return (*state != reset).then_some(reset);
    }
    if calls.failed == 0 {
        return None;
    }
    let failures = state.failures.saturating_add(1);
    let wait = chrono::Duration::from_std(wait_after(failures)).unwrap_or(chrono::Duration::MAX);
    Some(ExtractionBackoff {
        failures,
        until: Some((now + wait).to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
        last_error: calls.last_error.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn the_wait_doubles_from_a_minute_up_to_an_hour() {
        let minutes: Vec<u64> = (1..=9).map(|n| wait_after(n).as_secs() / 60).collect();
        assert_eq!(minutes, vec![1, 2, 4, 8, 16, 32, 60, 60, 60]);
        assert_eq!(wait_after(i64::MAX), LONGEST);
        assert_eq!(wait_after(0), FIRST);
    }

    #[test]
    fn failed_calls_back_off_and_one_success_resets() {
        let now = at("2026-11-23T03:00:00Z");
        let failed = CallsMade {
            succeeded: 0,
            failed: 3,
            last_error: Some("timed out after 2s".into()),
        };
        let first = after(&ExtractionBackoff::default(), &failed, now).unwrap();
        assert_eq!(first.failures, 1);
        assert_eq!(first.until.as_deref(), Some("2026-11-23T03:01:00Z"));
        assert_eq!(active_until(&first, now), Some(at("2026-11-23T03:01:00Z")));
        assert_eq!(active_until(&first, at("2026-11-23T03:01:00Z")), None);
        let second = after(&first, &failed, now).unwrap();
        assert_eq!(second.until.as_deref(), Some("2026-11-23T03:02:00Z"));
        let mixed = CallsMade {
            succeeded: 1,
            ..failed.clone()
        };
        assert_eq!(
            after(&second, &mixed, now),
            Some(ExtractionBackoff::default())
        );
        assert_eq!(after(&ExtractionBackoff::default(), &mixed, now), None);
        assert_eq!(after(&second, &CallsMade::default(), now), None);
    }

    #[test]
    fn an_unreadable_time_is_no_back_off() {
        let state = ExtractionBackoff {
            failures: 2,
            until: Some("not a time".into()),
            last_error: None,
        };
        assert_eq!(active_until(&state, Utc::now()), None);
    }
}
