//! The extraction endpoint's back-off: how many regenerations in a row found it failing, and
//! until when automatic regenerations leave it alone.

use serde::Serialize;

use super::Store;
use gza_core::error::Result;

/// The single extraction_backoff row.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ExtractionBackoff {
    /// Regenerations in a row whose extraction calls all failed.
    pub failures: i64,
    /// RFC 3339 time before which automatic regenerations make no call.
    pub until: Option<String>,
    /// What the last failed call said.
    pub last_error: Option<String>,
}

impl Store {
    /// The back-off as recorded (all zero when the endpoint never failed).
    pub fn extraction_backoff(&self) -> Result<ExtractionBackoff> {
        self.db
            .query_opt(
                "SELECT failures, until, last_error FROM extraction_backoff WHERE id = 1",
                params![],
                |r| {
                    Ok(ExtractionBackoff {
                        failures: r.get(0)?,
                        until: r.get(1)?,
                        last_error: r.get(2)?,
                    })
                },
            )
            .map_err(|e| self.err(e))
            .map(Option::unwrap_or_default)
    }

    /// Record the back-off a regeneration decided on.
    pub fn set_extraction_backoff(&self, backoff: &ExtractionBackoff) -> Result<()> {
        self.db
            .execute(
                "INSERT INTO extraction_backoff (id, failures, until, last_error) VALUES (1, ?1, ?2, ?3) \
                 ON CONFLICT (id) DO UPDATE SET failures = ?1, until = ?2, last_error = ?3",
                params![backoff.failures, backoff.until, backoff.last_error],)
            .map(|_| ())
            .map_err(|e| self.err(e))
    }
}
