//! A regex compiled the first time it is used. A hook process checks or redacts a few short
//! texts and needs few of the hundreds of patterns gza holds; compiling them all at once (the
//! case-insensitive Unicode ones take milliseconds each) was most of some hooks' CPU.

use regex::Regex;
use std::sync::OnceLock;

pub struct LazyRegex {
    pattern: String,
    compiled: OnceLock<Regex>,
}

impl LazyRegex {
    /// `pattern` is checked when first used (a bad one panics there, as `Regex::new(..)
    /// .expect(..)` did where it was built).
    pub fn new(pattern: impl Into<String>) -> LazyRegex {
        LazyRegex {
            pattern: pattern.into(),
            compiled: OnceLock::new(),
        }
    }
}

impl std::ops::Deref for LazyRegex {
    type Target = Regex;

    fn deref(&self) -> &Regex {
        self.compiled
            .get_or_init(|| Regex::new(&self.pattern).expect("a valid built-in pattern"))
    }
}
