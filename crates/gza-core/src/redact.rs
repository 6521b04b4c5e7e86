//! Text that came from an agent is data: secrets are redacted before it is stored in the
//! database, shown, sent for extraction or written to a file (learnings.md, reports, raw logs),
//! and control characters are stripped from anything injected into a later prompt.
//!
//! One pass finds candidates: the rules' anchor words (`ghp_`, `://`, `password`, `token`…) are
//! one Aho-Corasick automaton, and an anchor counts only when what follows it fits its rule (a
//! key's `=` or `:`), so text without any (most of it) costs one scan. Only the candidate rules
//! are then run for their spans (a `RegexSet` of all rules was measured far slower: its
//! combined DFA does not fit its cache), each span is checked (a key's value that is a path, a
//! number, a boolean, a placeholder or code is not a secret), and the spans are replaced in one
//! copy.
//!
//! What is a secret (see the tables in the tests):
//! - tokens with a known shape, whatever surrounds them: GitHub, GitLab, npm, PyPI, Hugging Face,
//!   Slack, Stripe, SendGrid, Twilio, DigitalOcean, Google, AWS, Azure AD, Anthropic, OpenAI,
//!   Shopify, Mailgun, Heroku, Vault, Grafana, Doppler, Databricks, Docker Hub and others (the
//!   provider patterns follow gitleaks' rule set, widened where gitleaks pins an exact length);
//!   JWTs; PEM private keys, over several lines, and a block whose END line was cut off;
//! - credentials in a URL (`scheme://user:password@`), `Authorization:` headers, `Bearer` and
//!   `Basic` credentials, signed-URL signatures, Slack and Discord webhook paths;
//! - the value of a key whose name ends in TOKEN, SECRET, PASSWORD, PASSWD, PASSPHRASE,
//!   API_KEY, ACCESS_KEY, PRIVATE_KEY, SECRET_KEY, ACCOUNT_KEY, CREDENTIAL(S) or AUTH, or is
//!   (or ends in `_`) PWD or PASS, or ends in `_PAT`, in any case and in env, shell, YAML, TOML, JSON, INI,
//!   connection-string and command-line (`--password x`) form; `mysql -pX`, `sshpass -p X`,
//!   `redis-cli -a X`, `curl -u user:X`, `.netrc` passwords; "the token is X" in prose.
//!
//! What is not, even under such a key: an empty value, a number (except for a password), a
//! boolean or status word (`true`, `none`, `required`), a path (`pwd=/path`), a URL without
//! credentials, a placeholder or reference (`${DB_PASSWORD}`, `$TOKEN`, `<your-token>`,
//! `changeme`, `xxxx`, `your_api_key_here`), code (`os.environ["X"]`, `self.password`,
//! `password: String`), and prose (`Password: must be at least 8 characters`). Hashes, UUIDs
//! and git SHAs match no rule.

use std::borrow::Cow;
use std::io::Write;
use std::sync::LazyLock;

use aho_corasick::AhoCorasick;
use regex::{Captures, Regex};

/// What replaces a secret.
pub const MARK: &str = "[REDACTED]";
/// What replaces a private key block.
const KEY_MARK: &str = "[REDACTED PRIVATE KEY]";

/// Key names whose value is a secret, whatever precedes them in the name.
const SECRET_NAMES: &str = r"password|passwd|passphrase|secret|token|api[_.-]?key|access[_.-]?key|private[_.-]?key|secret[_.-]?key|account[_.-]?key|shared[_.-]?access[_.-]?key|encryption[_.-]?key|signing[_.-]?key|master[_.-]?key|credentials?|auth|sharedaccesssignature|secret[_.-]?key[_.-]?base";
/// Short names that are secrets only as a whole name or after a separator (`DB_PASS`, not
/// `bypass`).
const SHORT_NAMES: &str = r"pwd|pass";

/// A key name that names a secret, its characters drawn from `class` (a regex class): one of
/// [`SECRET_NAMES`] at its end, one of [`SHORT_NAMES`] alone or after a separator, or `PAT`
/// after one (`GH_PAT`; a lone `pat` is a pattern).
fn key_name(class: &str) -> String {
    format!(r"(?:{class}*?(?:{SECRET_NAMES})|(?:{class}*[_.-])?(?:{SHORT_NAMES})|{class}*[_.-]pat)")
}

/// The first line of a PEM private key.
const PEM_BEGIN: &str = r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----";

/// How a rule's candidate is confirmed.
#[derive(Clone, Copy, PartialEq)]
enum Check {
    /// The shape alone says it.
    Shape,
    /// OpenAI-style `sk-…`: only with a digit in it (`sk-learn-…` is a word).
    HasDigit,
    /// Mailgun `key-…`: base-36, so not a hex digest (`cache-key-<md5>`).
    NotHex,
    /// A key and its value (groups `k`, `v`, `sep`): the value must look like a secret.
    KeyValue,
    /// A password on a command line or in a URL: anything but a placeholder.
    NotPlaceholder,
    /// In prose or after a space-separated flag: it must look random.
    LooksRandom,
    /// `Basic` credentials: base64 of `user:password`.
    Basic,
    /// A PEM private key: the span runs to its END line, or over its body when that was cut.
    PrivateKey,
}

struct Rule {
    pattern: String,
    check: Check,
    /// Words one of which the text must hold (ASCII case ignored) for the rule to be tried;
    /// empty: always tried.
    anchors: &'static [&'static str],
    /// What must follow an anchor for the rule to be tried.
    follow: Follow,
}

fn rule(pattern: impl Into<String>, check: Check, anchors: &'static [&'static str]) -> Rule {
    Rule {
        pattern: pattern.into(),
        check,
        anchors,
        follow: Follow::Any,
    }
}

impl Rule {
    fn after(self, follow: Follow) -> Rule {
        Rule { follow, ..self }
    }
}

/// What follows an anchor when its rule can match: most text that says `token` (`"input_tokens":
/// 12`, "the token expired") is passed over without running a regex.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Follow {
    Any,
    /// A key's separator: `s`, a backslash, a quote, blanks, then `:` or `=`.
    KeySep,
    /// Blanks, then `is` or `was`.
    IsWas,
    /// A blank.
    Blank,
}

impl Follow {
    fn holds(self, rest: &[u8]) -> bool {
        let blanks = |mut i: usize| {
            while matches!(rest.get(i), Some(b' ' | b'\t')) {
                i += 1;
            }
            i
        };
        match self {
            Follow::Any => true,
            Follow::KeySep => {
                let mut i = 0;
                for optional in [b"sS".as_slice(), b"\\", b"\"'"] {
                    if rest.get(i).is_some_and(|c| optional.contains(c)) {
                        i += 1;
                    }
                }
                matches!(rest.get(blanks(i)), Some(b':' | b'='))
            }
            Follow::IsWas => {
                let i = blanks(0);
                let word = &rest[i.min(rest.len())..];
                i > 0
                    && [b"is ".as_slice(), b"was ", b"is\t", b"was\t"]
                        .iter()
                        .any(|w| word.len() >= w.len() && word[..w.len()].eq_ignore_ascii_case(w))
            }
            Follow::Blank => matches!(rest.first(), Some(b' ' | b'\t')),
        }
    }
}

/// The words of key names that name a secret: the anchors of the key-value rules.
const KEY_WORDS: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "key",
    "credential",
    "auth",
    "pwd",
    "pass",
    "_pat",
    "-pat",
    ".pat",
    "sharedaccesssignature",
    "key_base",
    "key-base",
    "key.base",
    "keybase",
];

/// The rules. A rule's secret is its group `s` when it has one (its `v` for key-value rules),
/// otherwise the whole match.
fn rules() -> Vec<Rule> {
    let key = format!("(?P<k>{})", key_name("[A-Za-z0-9_.-]"));
    let yaml_key = key_name("[a-z0-9_.-]");
    let value = r#"(?P<v>\\"(?:[^"\\\n]|\\[^"\n])*\\"|"(?:[^"\\\n]|\\.)*"|'[^'\n]*'|`[^`\n]*`|[^\s"'`,;&)\]}|\\]+)"#;
    vec![
        // Tokens whose shape alone says what they are (gitleaks' provider rules).
        rule(
            r"(?-u:\b)(?:(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,}|gl(?:pat|dt|ptt|rt|soat|cbt|oas|ft|imt|agent|ffct|wt)-[A-Za-z0-9_-]{16,}|GR1348941[A-Za-z0-9_-]{20,}|npm_[A-Za-z0-9]{30,}|pypi-[A-Za-z0-9_-]{40,}|hf_[A-Za-z0-9]{30,}|api_org_[A-Za-z0-9]{30,}|xox[abposre]-[0-9A-Za-z-]{10,}|xapp-[0-9]-[A-Z0-9]+-[0-9]+-[a-z0-9]+|(?:sk|rk)_(?:test|live|prod)_[0-9A-Za-z]{10,}|whsec_[A-Za-z0-9+/=]{20,}|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}|do[opr]_v1_[a-f0-9]{32,}|AIza[0-9A-Za-z_-]{35}|ya29\.[0-9A-Za-z_-]{20,}|1//0[0-9A-Za-z_-]{30,}|GOCSPX-[A-Za-z0-9_-]{20,}|(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?-u:\b)|sk-ant-[A-Za-z0-9_-]{20,}|shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}|HRKU-[A-Za-z0-9_-]{20,}|lin_api_[A-Za-z0-9]{40}|dp\.(?:pt|st|ct|sa|scim|audit)\.[A-Za-z0-9]{40,}|hv[sb]\.[A-Za-z0-9_-]{24,}|dapi[a-f0-9]{32}(?:-[0-9])?|PMAK-[a-f0-9]{24}-[a-f0-9]{34}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2}|NRAK-[A-Z0-9]{27}|sntr[ysu]s?_[A-Za-z0-9+/=_]{40,}|AGE-SECRET-KEY-1[0-9A-Z]{58}|pul-[a-f0-9]{40}|dckr_pat_[A-Za-z0-9_-]{27,}|sbp_[a-f0-9]{40}|r8_[A-Za-z0-9]{37}|gsk_[A-Za-z0-9]{48,}|xai-[A-Za-z0-9]{60,}|pplx-[A-Za-z0-9]{40,}|ntn_[A-Za-z0-9]{40,}|ATATT3[A-Za-z0-9_=-]{100,}|fo1_[A-Za-z0-9_-]{40,}|sq0(?:atp|csp)-[0-9A-Za-z_-]{22,}|oy2[a-z0-9]{43}|rubygems_[a-f0-9]{48}|tskey-[a-z]+-[A-Za-z0-9]{10,}-[A-Za-z0-9]{10,}|ops_eyJ[A-Za-z0-9+/=]{100,})",
            Check::Shape,
            &[
                "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "gldt-", "glptt-",
                "glrt-", "glsoat-", "glcbt-", "gloas-", "glft-", "glimt-", "glagent-", "glffct-",
                "glwt-", "gr1348941", "npm_", "pypi-", "hf_", "api_org_", "xox", "xapp-", "_test_",
                "_live_", "_prod_", "whsec_", "sg.", "_v1_", "aiza", "ya29.", "1//0", "gocspx-",
                "a3t", "akia", "asia", "abia", "acca", "sk-ant-", "shpat_", "shpca_", "shppa_",
                "shpss_", "hrku-", "lin_api_", "dp.", "hvs.", "hvb.", "dapi", "pmak-", "glsa_",
                "glc_", "nrak-", "sntr", "age-secret-key-", "pul-", "dckr_pat_", "sbp_", "r8_",
                "gsk_", "xai-", "pplx-", "ntn_", "atatt3", "fo1_", "sq0", "oy2", "rubygems_",
                "tskey-", "ops_ey",
            ],
        ),
        // Twilio API key and account SIDs (tried always: their only literal is two letters).
        rule(r"(?-u:\b)(?:SK|AC)[0-9a-fA-F]{32}(?-u:\b)", Check::Shape, &[]),
        // gitleaks jwt.
        rule(
            r"(?-u:\b)ey[A-Za-z0-9_-]{15,}\.ey[A-Za-z0-9/_-]{15,}\.(?:[A-Za-z0-9/_-]{10,}={0,2})?",
            Check::Shape,
            &[".ey"],
        ),
        // Terraform Cloud, Azure AD client secret.
        rule(
            r"(?-u:\b)(?:[a-z0-9]{14}\.atlasv1\.[a-z0-9_=-]{60,}|[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34})",
            Check::Shape,
            &[".atlasv1.", "q~"],
        ),
        // OpenAI (sk-, sk-proj-, sk-svcacct-, sk-admin-); gitleaks openai-api-key, widened.
        rule(r"(?-u:\b)sk-[A-Za-z0-9_-]{20,}", Check::HasDigit, &["sk-"]),
        // Mailgun private API key.
        rule(r"(?-u:\b)key-[0-9a-zA-Z]{32}(?-u:\b)", Check::NotHex, &["key-"]),
        // gitleaks private-key, over as many lines as the block takes.
        rule(PEM_BEGIN, Check::PrivateKey, &["private key"]),
        // Credentials in a URL: scheme://user:password@host keeps the user and host.
        rule(
            r#"(?i)(?-u:\b)[a-z][a-z0-9+.-]{1,20}://[^\s:/@"'<>]*:(?P<s>[^\s@/"'<>]+)@"#,
            Check::NotPlaceholder,
            &["://"],
        ),
        // An HTTP Authorization header, whatever its scheme.
        rule(
            r#"(?i)(?-u:\b)(?:proxy-)?authorization\\?["']?[ \t]*[:=][ \t]*\\?["']?(?:(?:bearer|basic|token|bot|digest|negotiate|apikey|sso-key|key)[ \t]+)?(?P<s>[^\s"'`\\,<>=:{][^\s"'`\\,]{5,})"#,
            Check::LooksRandom,
            &["authorization"],
        ),
        rule(
            r"(?i)(?-u:\b)bearer[ \t]+(?P<s>[A-Za-z0-9._~+/-]{16,}=*)",
            Check::HasDigit,
            &["bearer"],
        ),
        rule(
            r"(?i)(?-u:\b)basic[ \t]+(?P<s>[A-Za-z0-9+/]{8,}={0,2})",
            Check::Basic,
            &["basic"],
        ),
        // Signed URLs (Azure SAS, S3 and GCS presigned) and webhook URLs.
        rule(
            r#"[?&](?:sig|X-Amz-Signature|X-Amz-Credential|X-Goog-Signature|X-Goog-Credential|Signature)=(?P<s>[^\s&"'#<>]{16,})"#,
            Check::Shape,
            &["sig=", "signature=", "credential="],
        ),
        rule(
            r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9_/+-]{20,})",
            Check::Shape,
            &["hooks.slack.com"],
        ),
        rule(
            r"discord(?:app)?\.com/api/webhooks/(?P<s>[0-9]+/[A-Za-z0-9_-]{20,})",
            Check::Shape,
            &["/api/webhooks/"],
        ),
        // KEY=value, KEY: value, "key": "value", key = 'value', KEY := value, key => value.
        rule(
            format!(r#"(?i)(?-u:\b){key}\\?["']?(?P<sp>[ \t]*)(?P<sep>:=|=>|==?|:)[ \t]*{value}"#),
            Check::KeyValue,
            KEY_WORDS,
        )
        .after(Follow::KeySep),
        // An unquoted YAML value runs to the end of its line: `db_password: two words`.
        rule(
            format!(
                r#"(?m)^[ \t]*(?:-[ \t]+)?["']?(?P<k>{yaml_key})["']?[ \t]*(?P<sep>:)[ \t]+(?P<v>[^\s"'`|>&*!\[{{#][^\n]*?)[ \t]*(?:[ \t]#[^\n]*)?\r?$"#
            ),
            Check::KeyValue,
            KEY_WORDS,
        )
        .after(Follow::KeySep),
        // Command-line flags: --password hunter2, --api-key X.
        rule(
            format!(
                r#"(?i)(?:^|[ \t])--?(?P<k>[a-z0-9-]*?(?:password|passwd|passphrase|token|secret|api-?key|access-?key|secret-?key)|(?:[a-z0-9-]*-)?pass)[ \t]+{value}"#
            ),
            Check::LooksRandom,
            &[
                "password", "passwd", "passphrase", "token", "secret", "api-key", "apikey",
                "access-key", "accesskey", "secret-key", "secretkey", "pass",
            ],
        )
        .after(Follow::Blank),
        // Database and cache clients given a password on the command line.
        rule(
            r#"(?-u:\b)(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlsh|mariadb|mariadb-dump)(?-u:\b)[^\n]*?[ \t]-p(?P<s>'[^'\n]*'|"[^"\n]*"|[^\s'"]+)"#,
            Check::NotPlaceholder,
            &["mysql", "mariadb"],
        ),
        rule(
            r#"(?-u:\b)sshpass[ \t]+-p[ \t]*(?P<s>'[^'\n]*'|"[^"\n]*"|[^\s'"]+)"#,
            Check::NotPlaceholder,
            &["sshpass"],
        ),
        rule(
            r#"(?-u:\b)redis-cli(?-u:\b)[^\n]*?[ \t]-a[ \t]+(?P<s>'[^'\n]*'|"[^"\n]*"|[^\s'"]+)"#,
            Check::NotPlaceholder,
            &["redis-cli"],
        ),
        rule(
            r#"(?-u:\b)(?:curl|wget|http|https)(?-u:\b)[^\n]*?[ \t](?:-u|--user|--proxy-user)[ \t=]+["']?[^\s:"']*:(?P<s>[^\s"']+)"#,
            Check::NotPlaceholder,
            &[" -u", "--user", "--proxy-user"],
        ),
        // .netrc: `machine h login u password p`, or a `password p` line of its own.
        rule(
            r"(?i)(?-u:\b)machine[ \t]+\S+(?:[ \t]+login[ \t]+\S+)?[ \t]+password[ \t]+(?P<s>\S+)",
            Check::NotPlaceholder,
            &["machine"],
        ),
        rule(
            r"(?m)^[ \t]*password[ \t]+(?P<s>\S+)[ \t]*\r?$",
            Check::LooksRandom,
            &["password"],
        )
        .after(Follow::Blank),
        // A session cookie's value (`Cookie: session=…`, `Set-Cookie: sid=…`).
        rule(
            r#"(?i)(?-u:\b)(?:set-)?cookie[ \t]*:[^\n]*?(?-u:\b)(?:[a-z0-9_.-]*sess(?:ion)?[a-z0-9_.-]*|sid|connect\.sid|remember_token|auth[a-z0-9_.-]*)=(?P<s>[^;\s"'`]{8,})"#,
            Check::LooksRandom,
            &["cookie"],
        ),
        // An AWS secret access key standing alone near "secret" or "aws": 40 characters of
        // base64's alphabet, not all hex (a git SHA is 40 hex digits).
        rule(
            r"(?i)(?-u:\b)(?:aws|secret)(?-u:\b)[^\n]{0,60}?(?:^|[^A-Za-z0-9/+])(?P<s>[A-Za-z0-9/+]{40})(?:$|[^A-Za-z0-9/+=])",
            Check::NotHex,
            &["aws", "secret"],
        ),
        // "the token is abc123…" in prose: only when the value looks random, so "the token is
        // expired" stays.
        rule(
            r#"(?i)(?-u:\b)(?:password|passwd|secret|api[_ -]?key|token)[ \t]+(?:is|was)[ \t]+["'`]?(?P<s>[A-Za-z0-9_\-./+=!@#$%^&*]{6,})"#,
            Check::LooksRandom,
            &["password", "passwd", "secret", "key", "token"],
        )
        .after(Follow::IsWas),
    ]
}

struct Redactor {
    /// Every rule's anchors in one automaton; a match names the rule to try.
    anchors: AhoCorasick,
    /// Each anchor's length, its rules and what must follow it for each.
    words: Vec<Vec<u8>>,
    entries: Vec<Vec<(usize, Follow)>>,
    /// For each anchor, the anchors that may start inside it (itself at 0 among them) and where.
    hidden: Vec<Vec<(usize, usize)>>,
    /// Rules tried whatever the text holds.
    always: u64,
    regexes: Vec<LazyRegex>,
    checks: Vec<Check>,
    /// A whole key name that is a secret's (for JSON keys, checked on their own).
    secret_key: LazyRegex,
    pem_begin: LazyRegex,
    pem_end: LazyRegex,
}

/// A pattern compiled the first time it is tried: most text holds no rule's anchor, and a
/// process that redacts a little (`gza history`, `gza work`'s records) tries few rules, so
/// compiling all of them at the first redaction was most of its cost (~7 ms of CPU per
/// process, issue 21).
struct LazyRegex {
    pattern: String,
    compiled: std::sync::OnceLock<Regex>,
}

impl LazyRegex {
    fn new(pattern: impl Into<String>) -> LazyRegex {
        LazyRegex {
            pattern: pattern.into(),
            compiled: std::sync::OnceLock::new(),
        }
    }

    fn get(&self) -> &Regex {
        self.compiled
            .get_or_init(|| Regex::new(&self.pattern).expect("valid secret pattern"))
    }
}

static REDACTOR: LazyLock<Redactor> = LazyLock::new(|| {
    let rules = rules();
    assert!(rules.len() <= 64, "rules are a u64 bit set");
    let patterns: Vec<&str> = rules.iter().map(|r| r.pattern.as_str()).collect();
    // Each anchor word once, with the rules it starts and what must follow it for each.
    let mut words: Vec<String> = Vec::new();
    let mut entries: Vec<Vec<(usize, Follow)>> = Vec::new();
    let mut always = 0u64;
    for (r, rule) in rules.iter().enumerate() {
        if rule.anchors.is_empty() {
            always |= 1 << r;
        }
        for w in rule.anchors {
            let w = w.to_ascii_lowercase();
            let i = words.iter().position(|x| *x == w).unwrap_or_else(|| {
                words.push(w);
                entries.push(Vec::new());
                words.len() - 1
            });
            entries[i].push((r, rule.follow));
        }
    }
    // A leftmost-longest scan reports one of overlapping anchors (`password`, not the `pass` in
    // it; `pass`, not a `secret` that starts with its last `s`): each word knows which others may
    // start inside it, so they are checked where they would be.
    let hidden: Vec<Vec<(usize, usize)>> = words
        .iter()
        .map(|a| {
            let a = a.as_bytes();
            let mut inside = Vec::new();
            for (j, b) in words.iter().enumerate() {
                let b = b.as_bytes();
                for k in 0..a.len() {
                    let common = (a.len() - k).min(b.len());
                    if a[k..k + common] == b[..common] {
                        inside.push((k, j));
                    }
                }
            }
            inside
        })
        .collect();
    Redactor {
        anchors: AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .match_kind(aho_corasick::MatchKind::LeftmostLongest)
            .kind(Some(aho_corasick::AhoCorasickKind::DFA))
            .build(&words)
            .expect("valid anchors"),
        words: words.iter().map(|w| w.as_bytes().to_vec()).collect(),
        entries,
        hidden,
        always,
        regexes: patterns.iter().map(|p| LazyRegex::new(*p)).collect(),
        checks: rules.iter().map(|r| r.check).collect(),
        secret_key: LazyRegex::new(format!("(?i)^{}$", key_name("[A-Za-z0-9_.-]"))),
        pem_begin: LazyRegex::new(PEM_BEGIN),
        pem_end: LazyRegex::new(r"-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----"),
    }
});

/// A stretch of text to replace.
struct Span {
    start: usize,
    end: usize,
    private_key: bool,
}

/// `text` with every secret replaced by a marker.
pub fn redact_secrets(text: &str) -> String {
    redact(text).into_owned()
}

/// `text` with every secret replaced by a marker; borrowed when there was none.
pub fn redact(text: &str) -> Cow<'_, str> {
    redact_candidates(text, REDACTOR.candidates(text))
}

/// [`redact`] with the candidate rules already found.
fn redact_candidates(text: &str, candidates: u64) -> Cow<'_, str> {
    let r = &*REDACTOR;
    if candidates == 0 {
        return Cow::Borrowed(text);
    }
    let mut spans: Vec<Span> = Vec::new();
    for i in (0..r.regexes.len()).filter(|i| candidates & (1 << i) != 0) {
        let check = r.checks[i];
        for caps in r.regexes[i].get().captures_iter(text) {
            if let Some(span) = confirm(check, &caps, text) {
                spans.push(span);
            }
        }
    }
    if spans.is_empty() {
        return Cow::Borrowed(text);
    }
    spans.sort_by_key(|s| (s.start, std::cmp::Reverse(s.end)));
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    let mut i = 0;
    while i < spans.len() {
        let (start, mut end, mut key) = (spans[i].start, spans[i].end, spans[i].private_key);
        i += 1;
        while i < spans.len() && spans[i].start < end {
            end = end.max(spans[i].end);
            key |= spans[i].private_key;
            i += 1;
        }
        if start < at {
            continue;
        }
        out.push_str(&text[at..start]);
        out.push_str(if key { KEY_MARK } else { MARK });
        at = end;
    }
    out.push_str(&text[at..]);
    Cow::Owned(out)
}

impl Redactor {
    /// The rules worth trying on `text`: those whose anchor it holds (one scan), and those
    /// tried always.
    fn candidates(&self, text: &str) -> u64 {
        let mut found = self.always;
        let all = (1u64 << self.regexes.len()) - 1;
        let bytes = text.as_bytes();
        for m in self.anchors.find_iter(text) {
            for &(k, j) in &self.hidden[m.pattern().as_usize()] {
                let word = &self.words[j];
                let (start, end) = (m.start() + k, m.start() + k + word.len());
                if end > m.end()
                    && (end > bytes.len() || !word.eq_ignore_ascii_case(&bytes[start..end]))
                {
                    continue;
                }
                for &(r, follow) in &self.entries[j] {
                    if found & (1 << r) == 0 && follow.holds(&bytes[end..]) {
                        found |= 1 << r;
                    }
                }
            }
            if found == all {
                break;
            }
        }
        found
    }
}

/// The span to replace for one candidate, if it is a secret.
fn confirm(check: Check, caps: &Captures, text: &str) -> Option<Span> {
    let whole = caps.get(0).expect("group 0");
    match check {
        Check::PrivateKey => Some(Span {
            start: whole.start(),
            end: private_key_end(text, whole.end()),
            private_key: true,
        }),
        Check::KeyValue => {
            let key_at = caps.name("k")?;
            let key = key_at.as_str();
            // `urn:ietf:params:oauth:grant-type`: a name among names (but `$env:TOKEN` is a key).
            let before = &text.as_bytes()[..key_at.start()];
            let env = before.len() >= 4 && before[before.len() - 4..].eq_ignore_ascii_case(b"env:");
            if before.ends_with(b":") && !env {
                return None;
            }
            let value = caps.name("v")?;
            let sep = caps.name("sep").map_or("=", |m| m.as_str());
            let rest = text[value.end()..].lines().next().unwrap_or("");
            let (inner, from) = unquote(value.as_str());
            let quoted = inner.len() != value.as_str().len();
            // A quoted value is a literal: `(`, `[` or `*` in it are characters of the secret
            // (Django's generated keys have them), not a call or an index.
            if !(value_is_secret(key, inner) || quoted && literal_is_secret(key, inner)) {
                return None;
            }
            // `token == expected`, `Token => …`: code, unless a literal is compared.
            if matches!(sep, "==" | "=>") && !quoted {
                return None;
            }
            // `auth: AuthConfig,`: a field and its type.
            if sep == ":" && !quoted && is_type_name(inner.trim_end_matches([',', ';'])) {
                return None;
            }
            if sep == ":" && !quoted && reads_as_prose(inner, rest) {
                return None;
            }
            // A YAML value of several words with code in it: `token: match &conn.side {`.
            if sep == ":"
                && inner.contains(' ')
                && inner.contains(['{', '}', '(', ')', ';', '&', '*', '='])
            {
                return None;
            }
            let spaced = caps.name("sp").is_some_and(|m| !m.as_str().is_empty());
            if !quoted && is_code_statement(inner, rest, sep, spaced) {
                return None;
            }
            let start = value.start() + from;
            Some(Span {
                start,
                end: start + inner.len(),
                private_key: false,
            })
        }
        _ => {
            let m = caps.name("s").or_else(|| caps.name("v")).unwrap_or(whole);
            let (inner, from) = unquote(m.as_str());
            let ok = match check {
                Check::Shape => true,
                Check::HasDigit => inner.bytes().any(|b| b.is_ascii_digit()),
                Check::NotHex => !inner
                    .trim_start_matches("key-")
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit()),
                Check::NotPlaceholder => !is_placeholder(inner),
                Check::LooksRandom => {
                    let key = caps.name("k").map_or("", |k| k.as_str());
                    !is_placeholder(inner)
                        && value_is_secret(if key.is_empty() { "secret" } else { key }, inner)
                        && looks_random(inner)
                }
                Check::Basic => is_basic_credentials(inner),
                Check::KeyValue | Check::PrivateKey => unreachable!("handled above"),
            };
            if !ok || inner.starts_with("[REDACTED") {
                return None;
            }
            let start = m.start() + from;
            Some(Span {
                start,
                end: start + inner.len(),
                private_key: false,
            })
        }
    }
}

/// `value` without its quotes (`"x"`, `'x'`, `` `x` ``, `\"x\"`), and where the inside starts.
fn unquote(value: &str) -> (&str, usize) {
    for q in ["\\\"", "\"", "'", "`"] {
        if value.len() >= 2 * q.len() && value.starts_with(q) && value.ends_with(q) {
            return (&value[q.len()..value.len() - q.len()], q.len());
        }
    }
    (value, 0)
}

/// Where a private key that starts before `from` ends: its END line, or the last line of its
/// body when the END line was cut off (so the text after a cut key survives).
fn private_key_end(text: &str, from: usize) -> usize {
    let limit = text.floor_char_boundary(from + 64 * 1024);
    if let Some(end) = REDACTOR.pem_end.get().find(&text[from..limit]) {
        return from + end.end();
    }
    // No END line: the body runs while lines (real ones, or `\n` escapes) look like PEM.
    let rest = &text[from..];
    let mut offset = 0;
    let mut end = from;
    loop {
        let (line, brk) = next_line(&rest[offset..]);
        if !is_pem_body_line(line) {
            break;
        }
        end = from + offset + line.len();
        offset += line.len() + brk;
        if brk == 0 {
            break;
        }
    }
    end
}

/// The first line of `text` (up to a newline or a `\n` escape) and the length of the break.
fn next_line(text: &str) -> (&str, usize) {
    let nl = text.find('\n');
    let esc = text.find("\\n");
    match (nl, esc) {
        (Some(a), Some(b)) if b < a => (&text[..b], 2),
        (Some(a), _) => (&text[..a], 1),
        (None, Some(b)) => (&text[..b], 2),
        (None, None) => (text, 0),
    }
}

/// A line that belongs to a PEM body: base64, a header such as `Proc-Type: 4,ENCRYPTED`, or
/// blank.
fn is_pem_body_line(line: &str) -> bool {
    let line = line.trim_end_matches("\\r").trim();
    if line.is_empty() {
        return true;
    }
    if line
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
    {
        return true;
    }
    match line.split_once(": ") {
        Some((name, _)) => {
            name.len() <= 20 && name.bytes().all(|b| b.is_ascii_alphabetic() || b == b'-')
        }
        None => false,
    }
}

/// Whether the value of a key named `key` is a secret: not empty, a placeholder, a reference, a
/// path, a URL without credentials, code, a type, or (but for passwords) a number.
fn value_is_secret(key: &str, value: &str) -> bool {
    let v = value.trim().trim_end_matches([',', ';']);
    // Too short to guard anything (`password: U` is a type parameter), a path in code
    // (`auth::hash`), or an arrow (`token => …`).
    // `otpauth://…` is a scheme; `"EXPORTER_SECRET"` and `SERVER_TRAFFIC_SECRET_0` are names.
    if v.chars().count() < 3
        || v.starts_with([':', '=', '>', '-'])
        || v.starts_with("//")
        || is_placeholder(v)
        || is_constant_name(v)
    {
        return false;
    }
    let lower = v.to_ascii_lowercase();
    let key_lower = key.to_ascii_lowercase();
    let password = ["password", "passwd", "pwd", "pass", "passphrase"]
        .iter()
        .any(|p| key_lower.ends_with(p));
    if v.bytes()
        .all(|b| b.is_ascii_digit() || b == b'.' || b == b'_' || b == b'-')
        && v.bytes().any(|b| b.is_ascii_digit())
        && !(password && v.len() >= 4)
    {
        return false;
    }
    if v.len() > 2
        && v[..2].eq_ignore_ascii_case("0x")
        && v[2..].bytes().all(|b| b.is_ascii_hexdigit())
    {
        return false;
    }
    if is_path(v) || (key_lower.ends_with("pwd") && (v.starts_with('/') || v.starts_with('~'))) {
        return false;
    }
    if (lower.starts_with("http://") || lower.starts_with("https://")) && !v.contains('@') {
        return false;
    }
    if is_code(v) {
        return false;
    }
    // `password=password`, `self.pre_auth = pre_auth`, `password = user_password`,
    // `CLIENT_AUTH: "clientAuth"`, `private_key: "_RSAPrivateKey"`: a name, not a value.
    let squash = |t: &str| t.to_ascii_lowercase().replace(['_', '-', '.'], "");
    let name = squash(key.rsplit('.').next().unwrap_or(key));
    let word = key_lower
        .rsplit(['_', '.', '-'])
        .next()
        .unwrap_or(&key_lower);
    let identifier = v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && v.bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
    if lower == key_lower
        || lower == word
        || squash(v) == name
        || (identifier && v.bytes().filter(u8::is_ascii_digit).count() == 0 && {
            let s = squash(v);
            s.ends_with(&name) || s.contains(word)
        })
    {
        return false;
    }
    // A colour (`Token: '#ffffff'`).
    if let Some(hex) = v.strip_prefix('#')
        && (3..=8).contains(&hex.len())
        && hex.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return false;
    }
    // Nothing but punctuation (`password = = "x"` leaves `=`).
    v.bytes().any(|b| b.is_ascii_alphanumeric()) || !v.is_ascii()
}

/// Words that stand where a secret would, but say something else.
const NOT_SECRETS: &[&str] = &[
    "true",
    "false",
    "yes",
    "no",
    "on",
    "off",
    "null",
    "nil",
    "none",
    "undefined",
    "empty",
    "ok",
    "enabled",
    "disabled",
    "required",
    "optional",
    "set",
    "unset",
    "missing",
    "invalid",
    "expired",
    "valid",
    "n/a",
    "na",
    "default",
    "hidden",
    "masked",
    "redacted",
    "changeme",
    "change_me",
    "change-me",
    "changeit",
    "placeholder",
    "example",
    "dummy",
    "fake",
    "test",
    "testing",
    "sample",
    "secret",
    "secrets",
    "password",
    "passwd",
    "pass",
    "pwd",
    "token",
    "tokens",
    "todo",
    "tbd",
    "fixme",
    "replaceme",
    "replace_me",
    "replace-me",
    "include",
    "same-origin",
    "omit",
    "basic",
    "bearer",
    "digest",
    "oauth",
    "oauth2",
    "jwt",
    "sso",
    "saml",
    "ldap",
    "kerberos",
    "ntlm",
    "api_key",
    "apikey",
    "api-key",
    "str",
    "string",
    "&str",
    "bytes",
    "int",
    "integer",
    "bool",
    "boolean",
    "number",
    "any",
    "object",
    "char",
    "secretstring",
    "unknown",
    "auto",
    "env",
    "file",
    "stdin",
    "prompt",
    "keychain",
    "vault",
    "usize",
    "isize",
    "u8",
    "u16",
    "u32",
    "u64",
    "u128",
    "i8",
    "i16",
    "i32",
    "i64",
    "i128",
    "f32",
    "f64",
    "float",
    "double",
    "long",
    "short",
    "byte",
    "void",
    "text",
    "varchar",
    "uuid",
    "date",
    "datetime",
    "timestamp",
    "json",
    "dict",
    "list",
    "map",
    "hash",
    "hashed",
    "encrypted",
    "match",
    "loop",
    "if",
    "unsafe",
    "async",
    "await",
    "move",
    "new",
    "function",
    "lambda",
    "yield",
    "return",
    "self",
    "this",
];

/// An upper-case constant or variable name that says what it holds: `GITHUB_TOKEN`,
/// `SERVER_TRAFFIC_SECRET_0`.
fn is_constant_name(v: &str) -> bool {
    const SAYS: &[&str] = &[
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "KEY",
        "AUTH",
        "CREDENTIAL",
    ];
    v.contains('_')
        && v.bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        && v.bytes().filter(u8::is_ascii_digit).count() <= 2
        && SAYS.iter().any(|w| v.contains(w))
}

/// A placeholder or a reference to where the secret really is.
fn is_placeholder(v: &str) -> bool {
    let v = v.trim();
    if v.is_empty() || v.starts_with("[REDACTED") {
        return true;
    }
    let lower = v.to_ascii_lowercase();
    if lower
        .split(['/', '|'])
        .all(|part| NOT_SECRETS.contains(&part.trim()))
    {
        return true;
    }
    // $VAR, ${VAR}, $(cmd), ${{ secrets.X }}, %VAR%, {{ var }}, {var}, <your-token>, #{var}.
    if v.starts_with('$')
        || v.starts_with("#{")
        || v.starts_with('{')
        || v.starts_with('[')
        || (v.starts_with('%') && v.ends_with('%') && v.len() > 2)
        || (v.starts_with('<') && v.contains('>'))
    {
        return true;
    }
    // ****, xxxx, ...., ••••, abc... (cut in documentation).
    let first = v.chars().next().expect("not empty");
    if v.chars().count() >= 3 && v.chars().all(|c| c == first) {
        return true;
    }
    if v.contains("...") || v.contains('…') || v.contains("****") || lower.contains("xxxx") {
        return true;
    }
    const STARTS: &[&str] = &[
        "your",
        "example",
        "replace",
        "insert",
        "enter",
        "placeholder",
        "changeme",
        "dummy",
    ];
    const HOLDS: &[&str] = &["_here", "-here", "redacted", "placeholder"];
    STARTS.iter().any(|h| lower.starts_with(h)) || HOLDS.iter().any(|h| lower.contains(h))
}

/// A filesystem path (`/path`, `~/x`, `./x`, `../x`, `C:\x`), not base64 that starts with `/`.
fn is_path(v: &str) -> bool {
    let b = v.as_bytes();
    let rooted = v.starts_with('/')
        || v.starts_with("~/")
        || v == "~"
        || v.starts_with("./")
        || v.starts_with("../")
        || (b.len() > 2 && b[0].is_ascii_alphabetic() && b[1] == b':' && b[2] == b'\\');
    rooted
        && v.bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"._/~@:-\\ ".contains(&c))
        && !v.contains("//")
}

/// A quoted literal's value is a secret when it would be without the code checks (a literal
/// cannot be a call or an index): long enough, not a placeholder, a name, a path or a URL.
fn literal_is_secret(key: &str, value: &str) -> bool {
    let v = value.trim();
    is_code(v)
        && v.chars().count() >= 8
        && !v.contains(char::is_whitespace)
        && !is_placeholder(v)
        && !is_path(v)
        && !v.starts_with("${")
        && !v.to_ascii_lowercase().starts_with("http")
        && value_is_secret(
            key,
            &v.replace(['(', ')', '[', ']', ':', '<', '>', '&', '*'], "x"),
        )
}

/// Code rather than a value: a call, an index, a path expression, a type, or a member
/// (`self.password`, `config.db.password`, `process.env.TOKEN`).
fn is_code(v: &str) -> bool {
    if v.contains('(') || v.contains('[') || v.contains("::") || v.contains("->") {
        return true;
    }
    if v.contains('<') && v.ends_with('>') || v.starts_with(['&', '*']) {
        return true;
    }
    is_dotted_name(v)
}

/// `Name.Function`, `self.password`, `node.colon2_token`: identifiers joined by dots, each a
/// word rather than random (at most two digits in all).
fn is_dotted_name(v: &str) -> bool {
    let v = v.trim_end_matches([',', ';']);
    v.contains('.')
        && v.split('.').all(|p| {
            p.bytes()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
                && p.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
        })
        && v.bytes().filter(u8::is_ascii_digit).count() <= 2
}

/// An identifier in code rather than a literal: `token: Literal,`, `fn f(token: Ident)`,
/// `x.token = other;`, `login(password=pw)`. Code writes a literal secret in quotes; config
/// (env files, YAML, connection strings) writes it bare and never follows it with these.
fn is_code_statement(value: &str, rest: &str, sep: &str, spaced: bool) -> bool {
    let v = value.trim();
    let start = v.len() - v.trim_start_matches(['*', '&']).len();
    let name_end = v[start..]
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .map_or(v.len(), |i| start + i);
    let name = &v[start..name_end];
    if name.is_empty() || !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        return false;
    }
    let after = if name_end < v.len() {
        &v[name_end..]
    } else {
        rest
    };
    let after = after.trim_start();
    let Some(next) = after.chars().next() else {
        return false;
    };
    match sep {
        ":" => matches!(
            next,
            ',' | ')' | ';' | '=' | '{' | '}' | '<' | '>' | ']' | '?'
        ),
        "=" | ":=" => {
            matches!(next, ')' | ',' | '}' | '>') || (spaced && matches!(next, ';' | '{'))
        }
        _ => false,
    }
}

/// A CamelCase name of two or more words, as types are written (`AuthConfig`).
fn is_type_name(v: &str) -> bool {
    let b = v.as_bytes();
    b.first().is_some_and(u8::is_ascii_uppercase)
        && b.iter().all(u8::is_ascii_alphabetic)
        && b.iter().skip(1).any(u8::is_ascii_uppercase)
        && b.iter().any(u8::is_ascii_lowercase)
}

/// A sentence, not a value: `Token: the value you get…`, `:param token: The access token.`,
/// `- password: password to use with username` (a word first, and words such as "the", "to").
fn reads_as_prose(value: &str, rest: &str) -> bool {
    const FUNCTION_WORDS: &[&str] = &[
        "the", "a", "an", "to", "of", "for", "with", "is", "are", "be", "used", "use", "and", "or",
        "in", "on", "if", "this", "that", "will", "can", "not", "when", "from", "by", "as", "you",
        "your", "it", "must", "should", "which", "at", "was",
    ];
    let word = |w: &str| {
        let w = w.trim_end_matches(['.', ',', ';', ':']);
        !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphabetic())
    };
    let mut words = value.split_whitespace();
    let first = words.next().unwrap_or("");
    if !word(first) {
        return false;
    }
    if words.next().is_none() {
        // One word, as the general rule takes it: prose when words follow on its line.
        return rest
            .split_whitespace()
            .filter(|w| w.chars().any(char::is_alphabetic))
            .count()
            >= 2;
    }
    // Several words, as a YAML value: prose when it has words a passphrase would not.
    value
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_ascii_lowercase()
        })
        .any(|w| FUNCTION_WORDS.contains(&w.as_str()))
}

/// Random-looking: letters and digits mixed, or long; not a dotted name.
fn looks_random(v: &str) -> bool {
    let v = v.trim_end_matches(['.', ',', ';', ':', '!', '?', ')']);
    let digits = v.bytes().any(|b| b.is_ascii_digit());
    let letters = v.bytes().any(|b| b.is_ascii_alphabetic());
    ((digits && letters) || v.len() >= 24) && !is_dotted_name(v)
}

/// `Basic` credentials: base64 that decodes to printable `user:password`.
fn is_basic_credentials(v: &str) -> bool {
    decode_base64(v).is_some_and(|bytes| {
        bytes.contains(&b':') && bytes.iter().all(|b| b.is_ascii_graphic() || *b == b' ')
    })
}

fn decode_base64(v: &str) -> Option<Vec<u8>> {
    let v = v.trim_end_matches('=');
    let mut out = Vec::with_capacity(v.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for c in v.bytes() {
        let d = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(d);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

/// One line of a raw log with its secrets redacted. A JSON line stays valid JSON: its string
/// values are redacted one by one (the rest of the line is kept byte for byte), and a string
/// under a key such as `"password"` is redacted whole.
pub fn redact_log_line(line: &str) -> Cow<'_, str> {
    let r = &*REDACTOR;
    let candidates = r.candidates(line);
    // A JSON writer may escape `/` (`https:\/\/u:p@host`), which no rule sees undecoded.
    let escaped_slash = line.contains("\\/");
    if candidates == 0 && !escaped_slash {
        return Cow::Borrowed(line);
    }
    let t = line.trim_start();
    if !(t.starts_with('{') || t.starts_with('[')) {
        return redact_candidates(line, candidates);
    }
    let matches = (0..r.regexes.len())
        .filter(|i| candidates & (1 << i) != 0)
        .any(|i| r.regexes[i].get().is_match(line));
    if !matches && !escaped_slash {
        return Cow::Borrowed(line);
    }
    if serde_json::from_str::<serde::de::IgnoredAny>(line).is_ok() {
        return redact_json_text(line);
    }
    redact_candidates(line, candidates)
}

/// Redact the string literals of one valid JSON text.
fn redact_json_text(json: &str) -> Cow<'_, str> {
    let b = json.as_bytes();
    let mut out = String::new();
    let mut copied = 0;
    let mut key: Option<String> = None;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let start = i;
                i += 1;
                let mut escaped = false;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        escaped = true;
                        i += 1;
                    }
                    i += 1;
                }
                let end = (i + 1).min(b.len());
                i = end;
                let literal = &json[start..end];
                let text: Cow<str> = if escaped {
                    match serde_json::from_str::<String>(literal) {
                        Ok(s) => Cow::Owned(s),
                        Err(_) => continue,
                    }
                } else {
                    Cow::Borrowed(&literal[1..literal.len() - 1])
                };
                let next = json[end..].trim_start().as_bytes().first().copied();
                if next == Some(b':') {
                    key = Some(text.into_owned());
                    continue;
                }
                let under_secret_key = key.take().is_some_and(|k| {
                    REDACTOR.secret_key.get().is_match(&k) && value_is_secret(&k, &text)
                });
                let replaced: Option<Cow<str>> = if under_secret_key {
                    Some(Cow::Borrowed(MARK))
                } else {
                    match redact(&text) {
                        Cow::Owned(r) => Some(Cow::Owned(r)),
                        Cow::Borrowed(_) => None,
                    }
                };
                if let Some(r) = replaced {
                    out.push_str(&json[copied..start]);
                    out.push_str(&serde_json::to_string(r.as_ref()).expect("a string serialises"));
                    copied = end;
                }
            }
            b',' | b'{' | b'[' | b'}' | b']' => {
                key = None;
                i += 1;
            }
            _ => i += 1,
        }
    }
    if copied == 0 {
        return Cow::Borrowed(json);
    }
    out.push_str(&json[copied..]);
    Cow::Owned(out)
}

/// Redact every string in a JSON value (what `show --json` prints); a string under a key such as
/// `"password"` is redacted whole.
pub fn redact_json_value(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::String(s) => {
            if let Cow::Owned(r) = redact(s) {
                *s = r;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_json_value),
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if let Value::String(s) = v
                    && REDACTOR.secret_key.get().is_match(k)
                    && value_is_secret(k, s)
                {
                    *s = MARK.to_string();
                } else {
                    redact_json_value(v);
                }
            }
        }
        _ => {}
    }
}

/// Longest line a [`RedactingWriter`] holds before it writes part of it: a secret that straddles
/// the cut is cut at a space or quote, where tokens do not run on.
const MAX_HELD_LINE: usize = 4 * 1024 * 1024;

/// A writer that redacts what passes through it line by line, for raw logs: a line with no
/// secret is written byte for byte (invalid UTF-8 and `\r` included), a JSON line stays valid
/// JSON, and a PEM key over several lines goes whole. A partial line is held until its newline
/// (or [`RedactingWriter::finish`]).
pub struct RedactingWriter<W: Write> {
    inner: Option<W>,
    line: Vec<u8>,
    /// Inside a private key whose END line has not come yet.
    in_key: bool,
}

impl<W: Write> RedactingWriter<W> {
    pub fn new(inner: W) -> RedactingWriter<W> {
        RedactingWriter {
            inner: Some(inner),
            line: Vec::new(),
            in_key: false,
        }
    }

    /// Write the held partial line and flush; returns the inner writer.
    pub fn finish(mut self) -> std::io::Result<W> {
        self.write_held()?;
        let mut inner = self.inner.take().expect("inner writer");
        inner.flush()?;
        Ok(inner)
    }

    fn write_held(&mut self) -> std::io::Result<()> {
        if self.line.is_empty() {
            return Ok(());
        }
        let line = std::mem::take(&mut self.line);
        self.write_line(&line)
    }

    /// Redact and write one line (with its newline, when it has one).
    fn write_line(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let inner = self.inner.as_mut().expect("inner writer");
        let (body, eol): (&[u8], &[u8]) = match bytes.strip_suffix(b"\n") {
            Some(body) => (body, b"\n"),
            None => (bytes, b""),
        };
        let text = String::from_utf8_lossy(body);
        let text: &str = &text;
        if self.in_key {
            if let Some(end) = REDACTOR.pem_end.get().find(text) {
                self.in_key = false;
                let rest = &text[end.end()..];
                if !rest.trim().is_empty() {
                    inner.write_all(redact(rest).as_bytes())?;
                    inner.write_all(eol)?;
                }
                return Ok(());
            }
            if is_pem_body_line(text) {
                return Ok(());
            }
            self.in_key = false;
        }
        let redacted = redact_log_line(text);
        if text.contains("PRIVATE KEY")
            && let Some(begin) = REDACTOR.pem_begin.get().find(text)
            && REDACTOR.pem_end.get().find(&text[begin.end()..]).is_none()
            && !text[begin.end()..].contains("\\n")
        {
            self.in_key = true;
        }
        match redacted {
            Cow::Borrowed(_) => inner.write_all(bytes),
            Cow::Owned(r) => {
                inner.write_all(r.as_bytes())?;
                inner.write_all(eol)
            }
        }
    }
}

impl<W: Write> Write for RedactingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut rest = buf;
        while let Some(nl) = rest.iter().position(|&b| b == b'\n') {
            let (line, after) = rest.split_at(nl + 1);
            if self.line.is_empty() {
                self.write_line(line)?;
            } else {
                self.line.extend_from_slice(line);
                let held = std::mem::take(&mut self.line);
                self.write_line(&held)?;
            }
            rest = after;
        }
        self.line.extend_from_slice(rest);
        if self.line.len() > MAX_HELD_LINE {
            // Cut at the last space or quote in the final 4 KiB, so no token is split.
            let floor = self.line.len().saturating_sub(4096);
            let cut = self.line[floor..]
                .iter()
                .rposition(|b| matches!(b, b' ' | b'"' | b'\t' | b','))
                .map_or(self.line.len(), |p| floor + p + 1);
            let tail = self.line.split_off(cut);
            let head = std::mem::replace(&mut self.line, tail);
            self.write_line(&head)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.as_mut().expect("inner writer").flush()
    }
}

impl<W: Write> Drop for RedactingWriter<W> {
    fn drop(&mut self) {
        if self.inner.is_some() {
            let _ = self.write_held();
            if let Some(inner) = self.inner.as_mut() {
                let _ = inner.flush();
            }
        }
    }
}

/// `text` without control characters (newlines and tabs become spaces), whitespace collapsed.
pub fn one_clean_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Secret shapes: the text, and a fragment of the secret that must not survive.
    const SECRETS: &[(&str, &str)] = &[
        // Names ending in PASSWORD / TOKEN / SECRET, after an underscore too.
        ("DB_PASSWORD=hunter2hunter2", "hunter2"),
        (
            "GITHUB_TOKEN=ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
            "AbCdEfGh",
        ),
        (
            "TWILIO_AUTH_TOKEN=0123456789abcdef0123456789abcdef",
            "456789abcdef01",
        ),
        ("MY_APP_SECRET=s3cr3t-value", "s3cr3t"),
        ("PGPASSWORD=pg_Pa55word psql -h db", "Pa55word"),
        ("MYSQL_PASSWD=myS3cretPw", "myS3cretPw"),
        ("db_pwd=Qwerty123", "Qwerty123"),
        ("SMTP_PASS=mailPa55", "mailPa55"),
        ("AZURE_DEVOPS_PAT=a1b2c3d4e5f6g7h8", "a1b2c3d4e5"),
        ("STRIPE_API_KEY=abcdEFGH12345678", "abcdEFGH1234"),
        ("MINIO_ACCESS_KEY=minio0admin0key", "minio0admin"),
        ("JWT_PRIVATE_KEY=MIIEvQIBADANBgkq", "MIIEvQIBADAN"),
        ("GCP_CREDENTIALS=eyJ0eXBlIjoic2VydmljZSJ9", "eyJ0eXBlIjoic"),
        ("BASIC_AUTH=admin:Adm1nPw", "Adm1nPw"),
        ("DJANGO_SECRET_KEY='d+8=#x9k!q2@m3l'", "d+8=#x9k"),
        // Shell, env, YAML, TOML, JSON, INI, PowerShell, Python forms; mixed case.
        ("export STRIPE_SECRET=\"rk_some_Secret99\"", "some_Secret99"),
        ("password: hunter2hunter2", "hunter2"),
        (
            "  db_password: correct horse battery staple",
            "horse battery",
        ),
        ("api_key = \"abcd1234efgh5678\"", "abcd1234efgh"),
        ("{\"password\": \"Tr0ub4dor&3\"}", "Tr0ub4dor"),
        (
            "printed {\\\"api_key\\\": \\\"abc123def456ghi789\\\"}",
            "abc123def456",
        ),
        ("accessToken: \"aB3dE5gH7jK9\"", "aB3dE5gH7jK9"),
        ("clientSecret=Cl13ntS3cr3t", "Cl13ntS3cr3t"),
        ("config = {'secret': 'PyS3cretV4l'}", "PyS3cretV4l"),
        (
            "$env:GITHUB_TOKEN = \"tok3nFromPowerShell\"",
            "tok3nFromPowerShell",
        ),
        ("X-API-Key: k3y-for-the-api-123", "k3y-for-the-api"),
        (
            "Server=db;User Id=sa;Password=P@ssw0rd!;Encrypt=true",
            "P@ssw0rd",
        ),
        (
            "HEROKU_API_KEY=01234567-89ab-cdef-0123-456789abcdef",
            "89ab-cdef",
        ),
        // Quoted literals with the characters code has.
        ("export API_TOKEN=\"a1b2c3(d4)e5*f6\"", "a1b2c3(d4)e5"),
        (
            "DJANGO_SECRET_KEY='django-insecure-k3(w)e*r9#x!m2[p]q7z'",
            "insecure-k3(w)e",
        ),
        (
            "Cookie: theme=dark; session=9f8e7d6c5b4a39281706abcdef",
            "9f8e7d6c5b4a",
        ),
        (
            "the secret for the CI user is wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "wJalrXUtnFEMI",
        ),
        // Cloud credentials.
        ("aws AKIAIOSFODNN7EXAMPLE", "IOSFODNN7"),
        ("session ASIAY34FZKBOKMUTVV7A", "Y34FZKBOKM"),
        (
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "wJalrXUt",
        ),
        (
            "aws_session_token = FwoGZXIvYXdzEJr//////////wEaDHx3yZ9Ex4mpLe",
            "FwoGZXIvYXdz",
        ),
        (
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA==;EndpointSuffix=core.windows.net",
            "Zm9vYmFy",
        ),
        (
            "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=c2VydmljZWJ1c2tleTEyMzQ1Ng=",
            "c2VydmljZWJ1c2tl",
        ),
        (
            "https://acct.blob.core.windows.net/c/f?sv=2022-11-02&se=2025&sig=AbCdEf0123456789%2BxYz%3D",
            "AbCdEf0123456789",
        ),
        (
            "azure client secret abc8Q~AbCdEfGhIjKlMnOpQrStUvWxYz0123456",
            "AbCdEfGhIjKlMn",
        ),
        ("maps AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW", "SyA1b2C3"),
        ("oauth ya29.a0AfH6SMBxYz0123456789abcdefghij", "a0AfH6SMBx"),
        ("client GOCSPX-AbCdEfGhIjKlMnOpQrStUvWx", "AbCdEfGhIjKl"),
        (
            "do dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "0123456789abcdef0123",
        ),
        (
            "doo_v1_fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210",
            "fedcba98765432",
        ),
        // SaaS and developer tokens.
        ("token ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "AbCdEfGh"),
        ("oauth gho_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "AbCdEfGh"),
        ("app ghs_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "AbCdEfGh"),
        (
            "pat github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
            "abcdefghij",
        ),
        ("gitlab glpat-AbCdEfGhIjKlMnOpQrSt", "AbCdEfGhIjKl"),
        (
            "npm npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
            "AbCdEfGhIjKl",
        ),
        (
            "pypi pypi-AgEIcHlwaS5vcmcCJGE4ZjY3YjQ1LTBhMjQtNDk5Yi1hMzQ2",
            "AgEIcHlwaS5v",
        ),
        ("hf hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh", "AbCdEfGhIjKl"),
        (
            "slack xoxb-1234567890123-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
            "AbCdEfGh",
        ),
        (
            "slack xoxp-1234567890123-1234567890123-1234567890123-abcdef0123456789abcdef0123456789",
            "abcdef0123",
        ),
        (
            "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX1234",
            "B00000000",
        ),
        ("stripe sk_live_51AbCdEfGhIjKlMnOpQrStUv", "51AbCdEf"),
        ("stripe rk_live_51AbCdEfGhIjKlMnOpQrStUv", "51AbCdEf"),
        ("stripe sk_test_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqL"),
        (
            "sendgrid SG.AbCdEfGhIjKlMnOpQrStUv.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefg",
            "AbCdEfGhIjKlMnOp",
        ),
        (
            "twilio SK0123456789abcdef0123456789abcdef",
            "0123456789abcdef",
        ),
        (
            "twilio AC0123456789abcdef0123456789abcdef",
            "0123456789abcdef",
        ),
        (
            "shopify shpat_0123456789abcdef0123456789abcdef",
            "0123456789abcdef",
        ),
        ("mailgun key-3ax6xnjp29jd6fds4gc373sgvjxteol0", "3ax6xnjp29"),
        ("heroku HRKU-AbCdEfGhIjKlMnOpQrStUvWx0123", "AbCdEfGhIjKl"),
        ("vault hvs.CAESIAbCdEfGhIjKlMnOpQrStUvWx", "CAESIAbCdEf"),
        (
            "docker dckr_pat_AbCdEfGhIjKlMnOpQrStUvWxYz0",
            "AbCdEfGhIjKl",
        ),
        (
            "key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv_wx-yz here",
            "AbCdEfGh",
        ),
        ("OPENAI sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123", "AbCdEfGh"),
        (
            "jwt eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
            "SflKxwRJ",
        ),
        // Private keys, over several lines, also cut off before their END line.
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nabcDEF0123+/==\n-----END RSA PRIVATE KEY-----\nafter",
            "MIIEow",
        ),
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA",
            "b3BlbnNz",
        ),
        (
            "\"private_key\": \"-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkq\\n-----END PRIVATE KEY-----\\n\"",
            "MIIEvQIB",
        ),
        // URLs, headers, command lines, .netrc, prose.
        (
            "export DATABASE_URL=postgres://admin:s3cr3tP4ss@db.internal:5432/app",
            "s3cr3tP4ss",
        ),
        ("redis://:r3disPa55@cache:6379/0", "r3disPa55"),
        (
            "curl -H 'Authorization: Bearer abc123def456ghi789jkl'",
            "abc123def",
        ),
        ("Authorization: token 0123456789abcdef", "0123456789"),
        ("Authorization: Basic YWRtaW46czNjcjN0UHc=", "YWRtaW46czNj"),
        ("mysql -u root -pS3cr3t mydb", "S3cr3t"),
        ("mysqldump -h db -u app -p'Qu0ted Pw' app", "Qu0ted"),
        ("sshpass -p Ssh9Pass ssh host", "Ssh9Pass"),
        ("redis-cli -h cache -a R3disAuth ping", "R3disAuth"),
        ("curl -u deploy:D3ployPw https://x", "D3ployPw"),
        ("deploy --password Hunt3r2x --yes", "Hunt3r2x"),
        (
            "machine api.example.com login me password N3trcPw",
            "N3trcPw",
        ),
        ("the token is f9a8b7c6d5e4", "f9a8b7c6"),
        ("my password is hunter22", "hunter22"),
    ];

    /// Look-alikes that must stay exactly as they are.
    const NOT_SECRETS_TEXT: &[&str] = &[
        "plain text stays",
        // Quoted code and calls stay; so does a git SHA after "secret" or "aws".
        "token = \"get_token()\"",
        "password: \"${DB_PASSWORD}\"",
        "the secret commit was 3f786850e387550fdab836ed7e6dc881de23001b",
        "aws region us-east-1, bucket logs, commit 0123456789abcdef0123456789abcdef01234567",
        "Cookie: theme=dark; lang=en",
        "Set-Cookie: session=expired",
        // Paths under password-ish names: `pwd` is the working directory.
        "pwd=/path",
        "PWD=/home/x",
        "OLDPWD=/tmp/build cd \"$PWD\"",
        "GOOGLE_APPLICATION_CREDENTIALS=/path/to/key.json",
        "SSH_AUTH_SOCK=/tmp/ssh-XXXX/agent.123",
        // Hashes, SHAs, UUIDs, base64 of nothing secret.
        "commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 (HEAD -> main)",
        "Merge: 3f2a9c1 8b7d6a5",
        "request 123e4567-e89b-12d3-a456-426614174000 finished",
        "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08  file.tar",
        "md5 d41d8cd98f00b204e9800998ecf8427e",
        "echo aGVsbG8gd29ybGQ= | base64 -d",
        "cache-key-0123456789abcdef0123456789abcdef",
        // Names that only contain a keyword, and numbers.
        "password_min_length=8",
        "token_count=5",
        "TOKEN_LIMIT=4096",
        "max_tokens: 2000",
        "input_tokens=1234 output_tokens=56",
        "\"cache_read_input_tokens\":1200,\"output_tokens\":3",
        "token: 4096",
        "bypass=true compass=north passthrough=1",
        "the tokenizer splits words, and a bearer of bad news",
        // Placeholders and references.
        "DB_PASSWORD=${DB_PASSWORD}",
        "token: <your-token>",
        "PASSWORD=changeme",
        "API_KEY=your_api_key_here",
        "SECRET_KEY=\"\"",
        "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
        "token=$GITHUB_TOKEN",
        "PASSWORD=********",
        "api_key: xxxxxxxxxxxx",
        "AUTH_TOKEN=...",
        "password: %DB_PASSWORD%",
        "postgres://app:${DB_PASS}@db/app",
        "Authorization: Bearer $TOKEN",
        "Authorization: Bearer <token>",
        "mysql -u root -p mydb",
        "mysql -u root -P 3306 -h db",
        // Code.
        "password = os.environ[\"DB_PASSWORD\"]",
        "token = get_token()",
        "self.password = password",
        "fn login(password: &str) -> bool",
        "pub token: String,",
        "token: Option<String>,",
        "auth: AuthConfig,",
        "if token == expected {",
        "let secret = Secret::new(bytes);",
        "token=args.token",
        "npm_config_cache=/tmp/npm hf_hub_download(repo) SG.setApiKey(key)",
        // Booleans, status words, prose.
        "secret=true",
        "auth: none",
        "credentials: 'include'",
        "Password: must be at least 8 characters long",
        "Token: the value you get from the settings page",
        "the token is expired; refresh the token before retrying",
        "the password is stored in the keychain",
        "pip install scikit-learn; disk-usage-monitor-service-long-name",
        // URLs without a password.
        "see https://github.com/owner/repo/pull/12 and git@github.com:owner/repo.git",
        "connect to postgres://localhost:5432/app as user@example.com",
        "TOKEN_URL=https://auth.example.com/oauth/token",
    ];

    #[test]
    fn every_secret_shape_is_redacted_and_none_of_it_survives() {
        assert!(SECRETS.len() >= 40, "{} shapes", SECRETS.len());
        let mut failed = Vec::new();
        for (case, fragment) in SECRETS {
            let out = redact_secrets(case);
            if !out.contains("[REDACTED") || out.contains(fragment) {
                failed.push(format!("{case}\n  -> {out}"));
            }
        }
        assert!(failed.is_empty(), "not redacted:\n{}", failed.join("\n"));
    }

    #[test]
    fn look_alikes_are_left_alone() {
        let mut failed = Vec::new();
        for text in NOT_SECRETS_TEXT {
            let out = redact_secrets(text);
            if out != *text {
                failed.push(format!("{text}\n  -> {out}"));
            }
        }
        assert!(
            failed.is_empty(),
            "wrongly redacted:\n{}",
            failed.join("\n")
        );
    }

    #[test]
    fn redacting_twice_changes_nothing_more() {
        for (case, _) in SECRETS {
            let once = redact_secrets(case);
            assert_eq!(redact_secrets(&once), once, "{case}");
        }
    }

    #[test]
    fn a_url_keeps_its_user_and_host_and_a_key_its_name() {
        assert_eq!(
            redact_secrets("postgres://user:pass1@host/db"),
            "postgres://user:[REDACTED]@host/db"
        );
        assert_eq!(
            redact_secrets("export DB_PASSWORD='hunter2' && run"),
            "export DB_PASSWORD='[REDACTED]' && run"
        );
        assert_eq!(
            redact_secrets("{\"password\": \"hunter2\", \"user\": \"bob\"}"),
            "{\"password\": \"[REDACTED]\", \"user\": \"bob\"}"
        );
    }

    #[test]
    fn a_private_key_goes_whole_and_what_follows_stays() {
        let text = "before\n-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIIrYSSNQFaA\nAwEHoUQDQgAE\n-----END EC PRIVATE KEY-----\nafter";
        assert_eq!(
            redact_secrets(text),
            "before\n[REDACTED PRIVATE KEY]\nafter"
        );
        let cut = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkq\nhkiG9w0BAQEFAASC\nDone, the key was printed.";
        assert_eq!(
            redact_secrets(cut),
            "[REDACTED PRIVATE KEY]\nDone, the key was printed."
        );
    }

    fn json_line(text: &str) -> String {
        serde_json::json!({"type": "assistant", "message": {"content": [{"type": "text", "text": text}]}})
            .to_string()
    }

    #[test]
    fn a_json_log_line_stays_valid_json_with_escaped_quotes_inside() {
        let line = json_line(
            "ran \"DB_PASSWORD=\\\"hunter2x\\\"\" and {\"api_key\": \"abc123def456\"} with ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        );
        let out = redact_log_line(&line);
        let parsed: serde_json::Value = serde_json::from_str(&out).expect("still JSON");
        let text = parsed["message"]["content"][0]["text"].as_str().unwrap();
        for fragment in ["hunter2x", "abc123def456", "AbCdEfGhIj"] {
            assert!(!out.contains(fragment), "{out}");
        }
        assert!(text.starts_with("ran \"DB_PASSWORD="), "{text}");
        assert!(text.contains("[REDACTED]"), "{text}");
    }

    #[test]
    fn a_json_key_that_names_a_secret_has_its_value_redacted() {
        let line = r#"{"type":"tool_use","input":{"password":"hunter","token":"t0k","note":"pwd=/srv"},"n":3}"#;
        let out = redact_log_line(line);
        assert_eq!(
            out,
            r#"{"type":"tool_use","input":{"password":"[REDACTED]","token":"[REDACTED]","note":"pwd=/srv"},"n":3}"#
        );
        let mut value: serde_json::Value = serde_json::from_str(line).unwrap();
        redact_json_value(&mut value);
        assert_eq!(value.to_string(), out);
    }

    #[test]
    fn a_log_line_without_a_secret_is_the_same_string() {
        let line = json_line("all fine, 3 tests passed");
        assert!(matches!(redact_log_line(&line), Cow::Borrowed(_)));
    }

    fn through_writer(chunks: &[&[u8]]) -> Vec<u8> {
        let mut w = RedactingWriter::new(Vec::new());
        for c in chunks {
            w.write_all(c).unwrap();
        }
        w.finish().unwrap()
    }

    #[test]
    fn the_writer_keeps_clean_bytes_and_redacts_across_chunks() {
        let raw: &[u8] = b"line one\r\nbad \xff\xfe bytes\n\x1b[31mred\x1b[0m\nno newline";
        assert_eq!(through_writer(&[raw]), raw);
        let out = through_writer(&[
            b"export GITHUB_TO",
            b"KEN=ghp_AbCdEfGhIjKlMn",
            b"OpQrStUvWxYz0123456789\nok\n",
        ]);
        assert_eq!(out, b"export GITHUB_TOKEN=[REDACTED]\nok\n");
        let out = through_writer(&[b"bad \xff password=hunter2x\n"]);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "bad \u{fffd} password=[REDACTED]\n"
        );
    }

    #[test]
    fn the_writer_drops_a_private_key_over_its_lines() {
        let out = through_writer(&[
            b"key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n",
            b"abcDEF0123+/==\n-----END RSA PRIVATE KEY-----\nafter\n",
        ]);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "key:\n[REDACTED PRIVATE KEY]\nafter\n"
        );
        // Cut off before its END line: the body goes, the next line of text stays.
        let out = through_writer(&[b"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkq\nDone.\n"]);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "[REDACTED PRIVATE KEY]\nDone.\n"
        );
    }

    #[test]
    fn the_anchor_scan_never_skips_a_rule_that_matches() {
        // Every text the tests know, each line of the code and docs here, and pieces of them
        // glued (anchors overlapping across the seam): a rule whose regex matches must have been
        // a candidate.
        let r = &*REDACTOR;
        let mut texts: Vec<String> = SECRETS.iter().map(|(t, _)| t.to_string()).collect();
        texts.extend(NOT_SECRETS_TEXT.iter().map(|t| t.to_string()));
        for source in [
            include_str!("redact.rs"),
            include_str!("../../../README.md"),
        ] {
            texts.extend(source.lines().map(str::to_string));
        }
        let glued: Vec<String> = texts
            .windows(2)
            .map(|w| {
                let half = |t: &str| (t.len() / 2..).find(|&i| t.is_char_boundary(i)).unwrap();
                format!("{}{}", &w[0][half(&w[0])..], &w[1][..half(&w[1])])
            })
            .filter(|t| !t.is_empty())
            .collect();
        texts.extend(glued);
        for extra in [
            "passecret=x1y2z3",
            "xpasswordx: hunter22",
            "dckr_pat_: abc",
            "TOKEN  =  v4lue",
        ] {
            texts.push(extra.to_string());
        }
        for text in &texts {
            let candidates = r.candidates(text);
            for (i, re) in r.regexes.iter().enumerate() {
                if re.get().is_match(text) {
                    assert!(candidates & (1 << i) != 0, "rule {i} skipped on {text:?}");
                }
            }
        }
    }

    #[test]
    fn control_characters_do_not_survive() {
        assert_eq!(one_clean_line("a\u{1b}[31mb\nc\r\td"), "a [31mb c d");
    }
}
