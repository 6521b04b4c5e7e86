//! The learning record: what one lesson is, whatever room reads or writes it.

use serde::Serialize;

/// How much a learning matters when it applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Default)]
#[serde(rename_all = "UPPERCASE")]
pub enum Priority {
    Critical,
    High,
    #[default]
    Medium,
    Low,
}

impl Priority {
    pub const ALL: [Priority; 4] = [Self::Critical, Self::High, Self::Medium, Self::Low];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Critical => "CRITICAL",
            Self::High => "HIGH",
            Self::Medium => "MEDIUM",
            Self::Low => "LOW",
        }
    }

    /// Parse a priority, in any case.
    pub fn parse(text: &str) -> Option<Priority> {
        Self::ALL
            .into_iter()
            .find(|p| p.as_str().eq_ignore_ascii_case(text.trim()))
    }
}

impl std::fmt::Display for Priority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// Whether a learning is in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Awaiting review.
    Draft,
    Active,
    Archived,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Draft => "draft",
            Self::Active => "active",
            Self::Archived => "archived",
        }
    }

    pub fn parse(text: &str) -> Option<Status> {
        match text {
            "draft" => Some(Self::Draft),
            "active" => Some(Self::Active),
            "archived" => Some(Self::Archived),
            _ => None,
        }
    }
}

/// Where a learning came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// The agent listed it under its own `## Learnings` heading.
    Agent,
    /// The extraction model wrote it.
    Llm,
    /// A person wrote it (in the file or with `gza learnings add`).
    User,
}

impl Origin {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Agent => "agent",
            Self::Llm => "llm",
            Self::User => "user",
        }
    }

    pub fn parse(text: &str) -> Option<Origin> {
        match text {
            "agent" => Some(Self::Agent),
            "llm" => Some(Self::Llm),
            "user" => Some(Self::User),
            _ => None,
        }
    }
}

/// When a piece of process knowledge applies to a tool call (seed 003's trigger conditions).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Triggers {
    /// Tool names, e.g. `Write`, `Edit`, `Bash`.
    pub tools: Vec<String>,
    /// Globs on the file a tool touches, e.g. `**/plugin.json`.
    pub files: Vec<String>,
    /// Words in what the tool is asked to do, e.g. `version bump`, `git push`.
    pub actions: Vec<String>,
    /// Words anywhere in the call's context (its input, the session's prompt).
    pub contexts: Vec<String>,
}

impl Triggers {
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
            && self.files.is_empty()
            && self.actions.is_empty()
            && self.contexts.is_empty()
    }
}

/// A stored learning.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Learning {
    /// Shown and typed as `L<id>`.
    pub id: i64,
    pub section: String,
    pub text: String,
    pub insight: Option<String>,
    pub example: Option<String>,
    pub keywords: Vec<String>,
    /// Task phrasings or file globs saying when it applies.
    pub applies_when: Vec<String>,
    /// `learning`, or a kind of process knowledge (`checklist`, `procedure`, `warning`, …).
    pub kind: String,
    pub triggers: Triggers,
    pub checklist: Vec<String>,
    pub confidence: f64,
    pub priority: Priority,
    pub status: Status,
    pub status_reason: Option<String>,
    pub status_changed_at: Option<String>,
    pub origin: Origin,
    pub created_at: String,
    pub updated_at: String,
    pub confirmed_at: String,
    /// How many tasks taught or re-confirmed it.
    pub support: i64,
    /// How many times it was given to an agent.
    pub injected: i64,
    /// Tier, evidence, staleness and quarantine.
    #[serde(flatten)]
    pub lifecycle: Lifecycle,
}

/// Where a learning stands beyond its status: proven by the code (tier 2), or not yet; whether
/// its evidence went away; whether it is held back as an instruction in disguise.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Lifecycle {
    /// 1: an unvalidated rule; 2: validated expertise (seed 002).
    pub tier: u8,
    /// For tier 2: `medium` (3-4 files) or `high` (5+).
    pub tier_level: Option<String>,
    pub evidence: Option<Evidence>,
    pub validated_at: Option<String>,
    /// Why it dropped back a tier.
    pub stale_reason: Option<String>,
    /// Why it is held back from agents until a person accepts it.
    pub quarantine_reason: Option<String>,
}

impl Default for Lifecycle {
    fn default() -> Self {
        Lifecycle {
            tier: 1,
            tier_level: None,
            evidence: None,
            validated_at: None,
            stale_reason: None,
            quarantine_reason: None,
        }
    }
}

/// What the code showed for a learning the last time it was validated.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, Default)]
pub struct Evidence {
    /// The search terms derived from its text.
    pub terms: Vec<String>,
    /// How many files matched.
    pub count: usize,
    /// Up to ten of them, relative to the project root.
    pub files: Vec<String>,
    pub at: String,
    /// The commit checked out in the clone that found it (its tree may have held changes not
    /// committed yet); none outside git. In team mode each clone validates its own tree, so
    /// this says which code the evidence is of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

/// Files a learning's terms must appear in for it to become tier 2, and for `high`.
pub const TIER2_MEDIUM_FILES: usize = 3;
pub const TIER2_HIGH_FILES: usize = 5;

impl Learning {
    /// Its tier and what it rests on: `2 (high, 7 files)`, `1 (1 file)`, `1 (not validated)`.
    pub fn tier_text(&self) -> String {
        let lc = &self.lifecycle;
        match (&lc.evidence, lc.tier) {
            (None, _) if lc.validated_at.is_some() => {
                "1 (no distinctive terms to search for)".into()
            }
            (None, t) => format!("{t} (not validated)"),
            (Some(e), 2) => format!(
                "2 ({}, {} files)",
                lc.tier_level.as_deref().unwrap_or("medium"),
                e.count
            ),
            (Some(e), t) => format!(
                "{t} ({} file{})",
                e.count,
                if e.count == 1 { "" } else { "s" }
            ),
        }
    }

    /// The id as people see it: `L42`.
    pub fn label(&self) -> String {
        label(self.id)
    }
}

/// `L42` for 42.
pub fn label(id: i64) -> String {
    format!("L{id}")
}

/// Parse `L42`, `l42` or `42` into 42.
pub fn parse_label(text: &str) -> Option<i64> {
    let t = text.trim();
    let digits = t
        .strip_prefix('L')
        .or_else(|| t.strip_prefix('l'))
        .unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|&n: &i64| n > 0)
}

/// A learning about to be stored.
#[derive(Debug, Clone, PartialEq)]
pub struct NewLearning {
    pub section: String,
    pub text: String,
    pub insight: Option<String>,
    pub example: Option<String>,
    pub keywords: Vec<String>,
    pub applies_when: Vec<String>,
    pub kind: String,
    pub triggers: Triggers,
    pub checklist: Vec<String>,
    pub confidence: f64,
    pub priority: Priority,
    pub origin: Origin,
    /// Active, or a draft awaiting review.
    pub status: Status,
    /// Why the extraction model judged it risky, when it did (it is then held for review).
    pub model_risk: Option<String>,
    /// Why its nearest labelled examples judged it hostile (quarantine layer g), when they did.
    pub neighbour_risk: Option<String>,
}

/// Every text field of a learning with its secrets redacted: a learning reaches every later
/// prompt, learnings.md and exports, whichever path wrote it (extraction, an agent's list, a
/// hook, an import, `learnings add`, a person's edit of learnings.md).
fn redact_all(texts: &[String]) -> Vec<String> {
    texts
        .iter()
        .map(|t| crate::redact::redact_secrets(t))
        .collect()
}

impl Triggers {
    /// The triggers as they are stored: secrets redacted, a tool list written as one entry
    /// (`Edit|Write`, Claude Code's matcher, or `Edit, Write`) split into its tools, and each
    /// glob in the form it is matched in ([`normal_glob`]).
    pub fn redacted(&self) -> Triggers {
        let mut tools: Vec<String> = Vec::new();
        for t in redact_all(&self.tools) {
            for name in tool_names(&t) {
                if !tools.iter().any(|k| k == name) {
                    tools.push(name.to_string());
                }
            }
        }
        Triggers {
            tools,
            files: redact_all(&self.files)
                .iter()
                .map(|g| normal_glob(g).into_owned())
                .collect(),
            actions: redact_all(&self.actions),
            contexts: redact_all(&self.contexts),
        }
    }
}

/// The tool names in one trigger entry: `Edit|Write` (Claude Code's matcher) and `Edit, Write`
/// name two tools, as two entries would.
pub fn tool_names(entry: &str) -> impl Iterator<Item = &str> {
    entry
        .split(|c: char| c == '|' || c == ',' || c.is_whitespace())
        .filter(|t| !t.is_empty())
}

/// A file glob as a person or an agent writes one, in the form it is matched in: `./x` is `x`
/// (from the project's root, as `/x` is), and a folder (`src/`) stands for everything in it
/// (`src/**`).
pub fn normal_glob(pattern: &str) -> std::borrow::Cow<'_, str> {
    let rooted = pattern.trim();
    let rooted = rooted.strip_prefix("./").unwrap_or(rooted);
    match rooted.strip_suffix('/') {
        Some(dir) if !dir.is_empty() && dir != "." => format!("{dir}/**").into(),
        _ if rooted.len() != pattern.len() => rooted.to_string().into(),
        _ => pattern.into(),
    }
}

impl NewLearning {
    /// The learning with the secrets of every text field redacted.
    pub fn redacted(&self) -> NewLearning {
        let redact = |t: &str| crate::redact::redact_secrets(t);
        NewLearning {
            section: redact(&self.section),
            text: redact(&self.text),
            insight: self.insight.as_deref().map(redact),
            example: self.example.as_deref().map(redact),
            keywords: redact_all(&self.keywords),
            applies_when: redact_all(&self.applies_when),
            triggers: self.triggers.redacted(),
            checklist: redact_all(&self.checklist),
            ..self.clone()
        }
    }

    /// A learning with default confidence and priority.
    pub fn new(section: &str, text: &str, origin: Origin) -> NewLearning {
        NewLearning {
            section: section.into(),
            text: text.into(),
            insight: None,
            example: None,
            keywords: Vec::new(),
            applies_when: Vec::new(),
            kind: "learning".into(),
            triggers: Triggers::default(),
            checklist: Vec::new(),
            confidence: DEFAULT_CONFIDENCE,
            priority: Priority::Medium,
            origin,
            status: Status::Active,
            model_risk: None,
            neighbour_risk: None,
        }
    }
}

/// Confidence of a learning nobody has rated.
pub const DEFAULT_CONFIDENCE: f64 = 0.7;

/// Seed 000's rule: each re-confirmation moves confidence a fifth of the way to 1.
pub fn confirmed_confidence(confidence: f64) -> f64 {
    (confidence + (1.0 - confidence) * 0.2).clamp(0.0, 1.0)
}

/// Seed 000's decay: an unvalidated learning's confidence halves every this many days since a
/// task last taught or re-confirmed it.
pub const DECAY_HALF_LIFE_DAYS: f64 = 90.0;

/// Below this decayed confidence a learning is no longer injected.
pub const DECAY_FLOOR: f64 = 0.3;

/// Most validated (tier 2) and most other learnings the file holds (seed 002), not counting
/// people's and CRITICAL ones, which always stay.
pub const TIER2_CAP: usize = 20;
pub const TIER1_CAP: usize = 20;

impl Learning {
    /// Confidence after decay at `now`: validated learnings and people's do not decay.
    pub fn decayed_confidence(&self, now: chrono::DateTime<chrono::Utc>) -> f64 {
        if self.lifecycle.tier == 2 || self.origin == Origin::User {
            return self.confidence;
        }
        let Ok(at) = chrono::DateTime::parse_from_rfc3339(&self.confirmed_at) else {
            return self.confidence;
        };
        let days = (now - at.with_timezone(&chrono::Utc)).num_seconds().max(0) as f64 / 86_400.0;
        self.confidence * 0.5f64.powf(days / DECAY_HALF_LIFE_DAYS)
    }

    /// Whether it may be given to an agent at all: active, or a draft the quarantine did not
    /// hold (what ranking reads; checked again where a ranked id becomes text).
    pub fn is_in_use(&self) -> bool {
        match self.status {
            Status::Active => true,
            Status::Draft => self.lifecycle.quarantine_reason.is_none(),
            Status::Archived => false,
        }
    }

    /// Whether it has decayed out of use (CRITICAL learnings never do).
    pub fn is_decayed(&self, now: chrono::DateTime<chrono::Utc>) -> bool {
        self.priority != Priority::Critical && self.decayed_confidence(now) < DECAY_FLOOR
    }

    /// When it decays out of use, as Unix seconds ([`Learning::is_decayed`] from then on);
    /// `None` for a learning that never does. What the hooks keep, so that a snapshot taken
    /// before that moment stops giving it after.
    pub fn decays_at(&self) -> Option<i64> {
        decays_at(
            self.priority,
            self.origin,
            i64::from(self.lifecycle.tier),
            self.confidence,
            &self.confirmed_at,
        )
    }
}

/// [`Learning::decays_at`] from the columns it reads (the hooks' snapshot reads no whole
/// learning): the moment `confidence × ½^(days / half-life)` falls under [`DECAY_FLOOR`].
pub fn decays_at(
    priority: Priority,
    origin: Origin,
    tier: i64,
    confidence: f64,
    confirmed_at: &str,
) -> Option<i64> {
    if priority == Priority::Critical {
        return None;
    }
    // Validated learnings and people's keep their confidence, as does one whose time is not
    // readable: under the floor they are out of use from the start, else never.
    let at = chrono::DateTime::parse_from_rfc3339(confirmed_at).ok();
    let (false, Some(at)) = (tier == 2 || origin == Origin::User, at) else {
        return (confidence < DECAY_FLOOR).then_some(i64::MIN);
    };
    if confidence <= 0.0 || !confidence.is_finite() {
        return Some(at.timestamp());
    }
    let days = DECAY_HALF_LIFE_DAYS * (confidence / DECAY_FLOOR).log2();
    Some(at.timestamp() + (days.max(0.0) * 86_400.0).floor() as i64)
}

/// The file an agent may append rules to in its working tree (seed 002's Tier 1).
pub const AGENT_RULES_FILE: &str = "LEARNINGS.md";

/// Larger agent rule files are not read.
pub const AGENT_RULES_MAX_BYTES: u64 = 1024 * 1024;

/// The rules in an agent's LEARNINGS.md (seed 002): blocks separated by `---` lines, the header
/// before the first `---` skipped, whitespace normalised, blocks under 10 characters dropped,
/// secrets redacted; at most 20 rules of at most 400 characters.
pub fn agent_rules(text: &str) -> Vec<String> {
    let mut blocks: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut seen_separator = false;
    for line in text.lines() {
        if line.trim() == "---" {
            if seen_separator {
                blocks.push(std::mem::take(&mut current));
            }
            current.clear();
            seen_separator = true;
            continue;
        }
        current.push_str(line);
        current.push('\n');
    }
    if seen_separator {
        blocks.push(current);
    }
    let mut rules: Vec<String> = Vec::new();
    for b in blocks {
        let clean = crate::redact::one_clean_line(&crate::redact::redact_secrets(&b));
        let clean = crate::text::head(&clean, 400).to_string();
        if clean.chars().count() >= 10 && !rules.contains(&clean) {
            rules.push(clean);
        }
    }
    rules.truncate(20);
    rules
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_rules_skip_the_header_and_short_blocks() {
        let text = "# Learnings\nheader text\n---\nFilter all database queries\n  by userId.\n---\nshort\n---\n\n---\nUse `pnpm` not npm in this repo\n";
        assert_eq!(
            agent_rules(text),
            [
                "Filter all database queries by userId.",
                "Use `pnpm` not npm in this repo"
            ]
        );
        assert!(agent_rules("# Only a header\nno rules yet\n").is_empty());
    }

    /// The moment the hooks keep says what `is_decayed` says, at any time around it.
    #[test]
    fn decays_at_is_when_is_decayed_turns_true() {
        let now = chrono::Utc::now();
        for origin in [Origin::Agent, Origin::User] {
            for (priority, tier) in [
                (Priority::Medium, 1u8),
                (Priority::Critical, 1),
                (Priority::Low, 2),
            ] {
                for confidence in [0.0, 0.2, 0.3, 0.31, 0.5, 0.9, 1.0] {
                    for days in [0i64, 30, 89, 150, 400, 2000] {
                        let l = Learning {
                            id: 1,
                            section: "General".into(),
                            text: "x".into(),
                            insight: None,
                            example: None,
                            keywords: vec![],
                            applies_when: vec![],
                            kind: "fact".into(),
                            triggers: Triggers::default(),
                            checklist: vec![],
                            confidence,
                            priority,
                            status: Status::Active,
                            status_reason: None,
                            status_changed_at: None,
                            origin,
                            created_at: String::new(),
                            updated_at: String::new(),
                            confirmed_at: (now - chrono::Duration::days(days)).to_rfc3339(),
                            support: 1,
                            injected: 0,
                            lifecycle: Lifecycle {
                                tier,
                                ..Default::default()
                            },
                        };
                        let at = l.decays_at();
                        let case = format!(
                            "{origin:?} {priority:?} tier {tier} {confidence} {days}d: {at:?}"
                        );
                        // A second either side of now: clocks and rounding aside, they agree.
                        for shift in [-1i64, 1] {
                            let t = now + chrono::Duration::seconds(shift * 2);
                            let by_moment = at.is_some_and(|at| t.timestamp() >= at);
                            if at.is_none_or(|at| at.abs_diff(now.timestamp()) > 2) {
                                assert_eq!(l.is_decayed(t), by_moment, "{case}");
                            }
                        }
                        if priority == Priority::Critical
                            || ((origin == Origin::User || tier == 2) && confidence >= DECAY_FLOOR)
                        {
                            assert_eq!(at, None, "{case}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn labels_round_trip() {
        assert_eq!(parse_label("L42"), Some(42));
        assert_eq!(parse_label("l7"), Some(7));
        assert_eq!(parse_label("12"), Some(12));
        for bad in [
            "",
            "L",
            "L-1",
            "L0",
            "x1",
            "L1a",
            "L99999999999999999999999",
        ] {
            assert_eq!(parse_label(bad), None, "{bad}");
        }
        assert_eq!(label(3), "L3");
    }

    #[test]
    fn confirmation_raises_confidence_towards_one() {
        let c = confirmed_confidence(0.7);
        assert!((c - 0.76).abs() < 1e-9);
        assert!(confirmed_confidence(1.0) <= 1.0);
    }
}
