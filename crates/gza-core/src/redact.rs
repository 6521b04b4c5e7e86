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
//!   Shopify, Mailgun, Heroku, Vault, Grafana, Doppler, Databricks, Docker Hub, Telegram bots,
//!   Alibaba Cloud and others (the
//!   provider patterns follow gitleaks' rule set, widened where gitleaks pins an exact length);
//!   JWTs; PEM private keys, over several lines, and a block whose END line was cut off;
//! - credentials in a URL (`scheme://user:password@`), `Authorization:` headers, `Bearer` and
//!   `Basic` credentials, signed-URL signatures, Slack and Discord webhook paths;
//! - the value of a key whose name ends in TOKEN, SECRET, PASSWORD, PASSWD, PASSPHRASE,
//!   API_KEY, ACCESS_KEY, PRIVATE_KEY, SECRET_KEY, ACCOUNT_KEY, CREDENTIAL(S) or AUTH, or is
//!   (or ends in `_`) PWD or PASS, or ends in `_PAT`, in any case and in env, shell, YAML, TOML, JSON, INI,
//!   connection-string and command-line (`--password x`) form, and wherever a name is given its
//!   value: `KEY ?= x`, Dockerfile `ENV KEY x`, fish `set -x KEY x`, `a.b.password x`
//!   properties, `f("KEY", "x")` and `env["KEY"] = "x"`, `<password>x</password>`, a YAML block
//!   scalar's next line, a k8s `name: KEY` and its `value:`, `${KEY:-x}`; the value is all of it
//!   up to a blank or its closing quote (`;`, `&`, `,` and brackets inside it included, unless
//!   another `name=` follows). Command lines: `mysql -pX`, `sshpass -p X`, `redis-cli -a X`,
//!   `curl -u user:X`, `docker`/`az`/`oc login -p X`, mongo tools' `-p`, `sqlcmd -P`,
//!   `ldapsearch -w`, `smbclient -U user%X`, `htpasswd -b`, Oracle's `user/X@db`; SQL `WITH
//!   PASSWORD 'x'` and `IDENTIFIED BY 'x'`; `.netrc` and `.pgpass` passwords; "the token is X"
//!   in prose.
//!
//! What is not, even under such a key: an empty value, a number (except for a password), a
//! boolean or status word (`true`, `none`, `required`), a path (`pwd=/path`), a URL without
//! credentials, a placeholder or reference (`${DB_PASSWORD}`, `$TOKEN`, `<your-token>`,
//! `changeme`, `xxxx`, `your_api_key_here`), code (`os.environ["X"]`, `self.password`,
//! `password: String`), prose (`Password: must be at least 8 characters`), and a mode word under
//! an `auth` key (`auth: oidc`). Hashes, UUIDs, git SHAs and addresses (`0x` and 40 hex digits)
//! match no rule.

use std::borrow::Cow;

use crate::lazy_regex::LazyRegex;
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{LazyLock, OnceLock};

use aho_corasick::AhoCorasick;
use regex::Captures;

/// What replaces a secret.
pub const MARK: &str = "[REDACTED]";
/// What replaces a private key block.
const KEY_MARK: &str = "[REDACTED PRIVATE KEY]";

/// Key names whose value is a secret, whatever precedes them in the name.
const SECRET_NAMES: &str = r"password|passwd|passphrase|secret|token|api[_.-]?key|access[_.-]?key|private[_.-]?key|secret[_.-]?key|account[_.-]?key|shared[_.-]?access[_.-]?key|encryption[_.-]?key|signing[_.-]?key|master[_.-]?key|credentials?|auth|auth[_.-]?key|client[_.-]?key[_.-]?data|sharedaccesssignature|secret[_.-]?key[_.-]?base";
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
/// The line of a PuTTY key file after which its private part comes.
const PUTTY_PRIVATE: &str = r"Private-Lines:[ \t]*[0-9]{1,4}";
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
    /// A PuTTY key file's private part (`Private-Lines: N`, then base64 lines and the MAC): the
    /// span runs over the lines that look like a key's body. There is no END line to look for,
    /// and a PEM END further on must not stretch the span to it.
    PuttyKey,
    /// A password in a URL: anything but a placeholder or a port (`host:8080/x?e=a@b`).
    UrlPassword,
    /// A literal given as a password (SQL `PASSWORD '…'`): what a password key's value must be.
    Password,
    /// `htpasswd -b [file] user password`: the password is the last argument, the second with
    /// `-n` (no file).
    Htpasswd,
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
    /// A closing quote, blanks, `,` (or `]`/`)` and `=`), blanks, then a quote: a name and a
    /// literal as a call's arguments, or an index and the literal it is set to.
    QuotedArg,
    /// A key's separator `:`, then blanks and `|` or `>`: a YAML block scalar.
    BlockScalar,
    /// `>`: an XML element's name.
    Gt,
    /// A quote maybe, blanks, a line break or `,`, blanks (and `-`), a quote maybe, then
    /// `value`: a k8s `name:` whose `value:` follows.
    NameEnd,
    /// Blanks, then one word, then the end of the line: a `.properties` key's value.
    LastWord,
    /// Blanks, then a quote.
    BlankQuote,
    /// Blanks, then `-`: a command's flag.
    BlankDash,
    /// `:port:` of a `.pgpass` line: digits, `:`, two fields each ending in `:`, then more.
    PgPass,
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
                let i = blanks(i);
                matches!(rest.get(i), Some(b':' | b'='))
                    || rest.get(i) == Some(&b'?') && rest.get(i + 1) == Some(&b'=')
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
            Follow::QuotedArg => {
                if !matches!(rest.first(), Some(b'"' | b'\'')) {
                    return false;
                }
                let mut i = blanks(1);
                match rest.get(i) {
                    Some(b',') => i += 1,
                    Some(b']' | b')') => {
                        i = blanks(i + 1);
                        if rest.get(i) != Some(&b'=') {
                            return false;
                        }
                        i += 1;
                    }
                    _ => return false,
                }
                matches!(rest.get(blanks(i)), Some(b'"' | b'\''))
            }
            Follow::BlockScalar => {
                let i = blanks(usize::from(matches!(rest.first(), Some(b'"' | b'\''))));
                rest.get(i) == Some(&b':') && matches!(rest.get(blanks(i + 1)), Some(b'|' | b'>'))
            }
            Follow::Gt => rest.first() == Some(&b'>'),
            Follow::LastWord => {
                let i = blanks(0);
                let word = rest[i..]
                    .iter()
                    .take_while(|b| !b.is_ascii_whitespace())
                    .count();
                i > 0
                    && word > 0
                    && matches!(rest.get(blanks(i + word)), None | Some(b'\r' | b'\n'))
            }
            Follow::BlankDash => {
                let i = blanks(0);
                i > 0 && rest.get(i) == Some(&b'-')
            }
            Follow::BlankQuote => {
                let i = blanks(0);
                i > 0 && matches!(rest.get(i), Some(b'\'' | b'"'))
            }
            Follow::NameEnd => {
                let mut i = blanks(usize::from(matches!(rest.first(), Some(b'"' | b'\''))));
                match rest.get(i) {
                    Some(b',') => i += 1,
                    Some(b'\r') if rest.get(i + 1) == Some(&b'\n') => i += 2,
                    Some(b'\n') => i += 1,
                    _ => return false,
                }
                i = blanks(i);
                if rest.get(i) == Some(&b'-') {
                    i = blanks(i + 1);
                }
                i += usize::from(matches!(rest.get(i), Some(b'"' | b'\'')));
                rest.len() >= i + 5 && rest[i..i + 5].eq_ignore_ascii_case(b"value")
            }
            Follow::PgPass => {
                let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
                let mut i = digits;
                if rest.get(i) != Some(&b':') {
                    return false;
                }
                for _ in 0..2 {
                    let field = rest[i + 1..]
                        .iter()
                        .take_while(|b| !b.is_ascii_whitespace() && **b != b':')
                        .count();
                    i += 1 + field;
                    if field == 0 || rest.get(i) != Some(&b':') {
                        return false;
                    }
                }
                rest.get(i + 1).is_some_and(|b| !b.is_ascii_whitespace())
            }
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
    "key-data",
    "key_data",
    "key.data",
    "keydata",
];

/// The rules. A rule's secret is its group `s` when it has one (its `v` for key-value rules),
/// otherwise the whole match.
fn rules() -> Vec<Rule> {
    let key = format!("(?P<k>{})", key_name("[A-Za-z0-9_.-]"));
    let yaml_key = key_name("[a-z0-9_.-]");
    let key_any = key_name("[A-Za-z0-9_.-]");
    let key_dotted = key_name("[a-z0-9_-]");
    let value = r#"(?P<v>\\"(?:[^"\\\n]|\\[^"\n])*\\"|"(?:[^"\\\n]|\\.)*"|'[^'\n]*'|`[^`\n]*`|[^\s"'`,;&)\]}|\\]+)"#;
    vec![
        // Tokens whose shape alone says what they are (gitleaks' provider rules).
        rule(
            r"(?-u:\b)(?:(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,}|gl(?:pat|dt|ptt|rt|soat|cbt|oas|ft|imt|agent|ffct|wt)-[A-Za-z0-9_-]{16,}|GR1348941[A-Za-z0-9_-]{20,}|npm_[A-Za-z0-9]{30,}|pypi-[A-Za-z0-9_-]{40,}|hf_[A-Za-z0-9]{30,}|api_org_[A-Za-z0-9]{30,}|xox[abposre]-[0-9A-Za-z-]{10,}|xapp-[0-9]-[A-Z0-9]+-[0-9]+-[a-z0-9]+|(?:sk|rk)_(?:test|live|prod)_[0-9A-Za-z]{10,}|whsec_[A-Za-z0-9+/=]{20,}|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}|do[opr]_v1_[a-f0-9]{32,}|AIza[0-9A-Za-z_-]{35}|ya29\.[0-9A-Za-z_-]{20,}|1//0[0-9A-Za-z_-]{30,}|GOCSPX-[A-Za-z0-9_-]{20,}|(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?-u:\b)|sk-ant-[A-Za-z0-9_-]{20,}|shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}|HRKU-[A-Za-z0-9_-]{20,}|lin_api_[A-Za-z0-9]{40}|dp\.(?:pt|st|ct|sa|scim|audit)\.(?:[a-z0-9_-]{1,40}\.)?[A-Za-z0-9]{40,}|AAAAAAAAAAAAAAAAAAAAA[A-Za-z0-9%]{30,}|LS0tLS1CRUdJTiB(?:SU0EgUFJJVkFURSBLRVk|QUklWQVRFIEtFWS0t|FQyBQUklWQVRFIEtFWS0t|PUEVOU1NIIFBSSVZBVEUgS0VZ|FTkNSWVBURUQgUFJJVkFURSBLRVk|EU0EgUFJJVkFURSBLRVk|QR1AgUFJJVkFURSBLRVkgQkxPQ0s)[A-Za-z0-9+/=]{16,}|hv[sb]\.[A-Za-z0-9_-]{24,}|dapi[a-f0-9]{32}(?:-[0-9])?|PMAK-[a-f0-9]{24}-[a-f0-9]{34}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2}|NRAK-[A-Z0-9]{27}|sntr[ysu]s?_[A-Za-z0-9+/=_]{40,}|AGE-SECRET-KEY-1[0-9A-Z]{58}|pul-[a-f0-9]{40}|dckr_pat_[A-Za-z0-9_-]{27,}|sbp_[a-f0-9]{40}|r8_[A-Za-z0-9]{37}|gsk_[A-Za-z0-9]{48,}|xai-[A-Za-z0-9]{60,}|pplx-[A-Za-z0-9]{40,}|ntn_[A-Za-z0-9]{40,}|ATATT3[A-Za-z0-9_=-]{100,}|fo1_[A-Za-z0-9_-]{40,}|sq0(?:atp|csp)-[0-9A-Za-z_-]{22,}|oy2[a-z0-9]{43}|rubygems_[a-f0-9]{48}|tskey-[a-z]+-[A-Za-z0-9]{10,}-[A-Za-z0-9]{10,}|ops_eyJ[A-Za-z0-9+/=]{100,}|LTAI[A-Za-z0-9]{12,24}(?-u:\b))",
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
                "tskey-", "ops_ey", "ltai", "aaaaaaaaaaaaaaaaaaaaa", "ls0tls1crudjtib",
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
            r"(?-u:\b)(?:[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}|[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34})",
            Check::Shape,
            &[".atlasv1.", "q~"],
        ),
        // OpenAI (sk-, sk-proj-, sk-svcacct-, sk-admin-); gitleaks openai-api-key, widened.
        rule(r"(?-u:\b)sk-[A-Za-z0-9_-]{20,}", Check::HasDigit, &["sk-"]),
        // Mailgun private API key.
        rule(r"(?-u:\b)key-[0-9a-zA-Z]{32}(?-u:\b)", Check::NotHex, &["key-"]),
        // gitleaks private-key, over as many lines as the block takes.
        rule(PEM_BEGIN, Check::PrivateKey, &["private key"]),
        // PuTTY's .ppk (versions 2 and 3): the lines after `Private-Lines: N` are the key
        // (unencrypted when `Encryption: none`, and worth guessing at when not).
        rule(PUTTY_PRIVATE, Check::PuttyKey, &["private-lines:"]),
        // Credentials in a URL: scheme://user:password@host keeps the user and host.
        // The password may hold `/` and `@`: the host is what follows the last `@` before a
        // path, a query, a port or the end.
        rule(
            r#"(?i)(?-u:\b)[a-z][a-z0-9+.-]{1,20}://[^\s:/@"'<>]*:(?P<s>[^\s"'<>]+?)@(?:[a-z0-9._~%-]+|\[[0-9a-f:.]+\])(?::[0-9]+)?(?:[/?#\s"'<>,;)\]}]|$)"#,
            Check::UrlPassword,
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
            format!(
                r#"(?i)(?-u:\b){key}\\?["']?(?P<sp>[ \t]*)(?P<sep>::=|:=|\?=|=>|==?|:)[ \t]*{value}"#
            ),
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
        // A YAML block scalar: `db_password: |` and the value on the next line.
        rule(
            format!(
                r#"(?im)^[ \t]*(?:-[ \t]+)?["']?(?P<k>{key_any})["']?[ \t]*(?P<sep>:)[ \t]*[|>][+-]?[0-9]?[+-]?[ \t]*\r?\n[ \t]+(?P<v>[^\s#][^\n]*?)[ \t]*\r?$"#
            ),
            Check::KeyValue,
            KEY_WORDS,
        )
        .after(Follow::BlockScalar),
        // A k8s env entry: `- name: DB_PASSWORD` and `value: …` on the next line (or after a
        // comma, in flow or JSON form).
        rule(
            format!(
                r#"(?im)(?-u:\b)name["']?[ \t]*:[ \t]*["']?(?P<k>{key_any})["']?[ \t]*(?:,[ \t]*|\r?\n[ \t]*)["']?(?P<sep>value)["']?[ \t]*:[ \t]*(?P<v>"(?:[^"\\\n]|\\.)*"|'[^'\n]*'|[^\s"'#{{\[&*!|>][^\n,}}]*?)[ \t]*(?:[,}}]|\r?$)"#
            ),
            Check::KeyValue,
            KEY_WORDS,
        )
        .after(Follow::NameEnd),
        // A name and its value as a call's arguments or an index and what it is set to:
        // `define('DB_PASSWORD', 'x')`, `os.getenv("TOKEN", "x")`, `os.environ["TOKEN"] = "x"`.
        // Only a quoted literal without blanks (`_("password", "Your password")` is a label).
        rule(
            format!(
                r#"(?i)["'](?P<k>{key_any})["'][ \t]*(?P<sep>,|[\])][ \t]*=)[ \t]*(?P<v>"[^"\s\\]+"|'[^'\s\\]+')"#
            ),
            Check::KeyValue,
            KEY_WORDS,
        )
        .after(Follow::QuotedArg),
        // An XML element: `<password>x</password>`.
        rule(
            format!(r#"(?i)<(?P<k>{key_any})>(?P<sep>)(?P<v>[^<\n]+)</"#),
            Check::KeyValue,
            KEY_WORDS,
        )
        .after(Follow::Gt),
        // A name and its value after a blank: Dockerfile `ENV DB_PASSWORD x`, fish
        // `set -x API_TOKEN x`, and a `.properties` line `spring.datasource.password x`.
        rule(
            format!(
                r#"(?im)^[ \t]*ENV[ \t]+(?P<k>{key_any})(?P<sep>[ \t]+){value}"#
            ),
            Check::KeyValue,
            &["env"],
        )
        .after(Follow::Blank),
        rule(
            format!(
                r#"(?i)(?-u:\b)set(?:[ \t]+-[a-z]+)+[ \t]+(?P<k>{key_any})(?P<sep>[ \t]+){value}"#
            ),
            Check::KeyValue,
            &["set"],
        )
        .after(Follow::BlankDash),
        rule(
            format!(
                r#"(?im)^[ \t]*(?P<k>(?:[a-z0-9_-]+\.)+{key_dotted})(?P<sep>[ \t]+)(?P<v>[^\s=:#!"'][^\s]*)[ \t]*\r?$"#
            ),
            Check::KeyValue,
            KEY_WORDS,
        )
        .after(Follow::LastWord),
        // A shell default: `${DB_PASSWORD:-x}`, `${TOKEN:=x}`.
        rule(
            format!(r#"(?i)\$\{{(?P<k>{key_any})(?P<sep>:-|:=|=)(?P<v>[^}}\s"'`$]+)\}}"#),
            Check::KeyValue,
            &["${"],
        ),
        // SQL: `CREATE USER … PASSWORD 'x'`, `IDENTIFIED [WITH plugin] BY 'x'` (or bare).
        rule(
            r#"(?i)(?-u:\b)(?:with|login|encrypted|unencrypted|(?:user|role)[ \t]+[^\s;]+)[ \t]+password[ \t]+(?P<s>'(?:[^'\n]|'')+'|"[^"\n]+")"#,
            Check::Password,
            &["password"],
        )
        .after(Follow::BlankQuote),
        rule(
            r#"(?i)(?-u:\b)identified(?:[ \t]+with[ \t]+[a-z0-9_]+)?[ \t]+by[ \t]+(?P<s>'(?:[^'\n]|'')+'|"[^"\n]+"|[^\s'";]+)"#,
            Check::Password,
            &["identified"],
        )
        .after(Follow::Blank),
        // Command-line flags: --password hunter2, --api-key X.
        rule(
            format!(
                r#"(?i)(?:^|[ \t])--?(?P<k>[a-z0-9-]*?(?:password|passwd|passphrase|token|secret|api-?key|access-?key|secret-?key)|(?:[a-z0-9-]*-|store|key|srcstore|deststore|srckey|destkey|new)?pass)[ \t]+{value}"#
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
        // A key's passphrase (`ssh-keygen -N`, the old one `-P`) and an archive's password
        // (`zip -P`, `unzip -P`, `7z -pX`), in the same command.
        rule(
            r#"(?-u:\b)ssh-keygen(?-u:\b)[^\n;|&]*?[ \t]-[NP][ \t]*(?P<s>'[^'\n]*'|"[^"\n]*"|[^\s'"-][^\s'"]*)"#,
            Check::NotPlaceholder,
            &["ssh-keygen"],
        ),
        rule(
            r#"(?-u:\b)(?:zip|unzip|zipcloak|funzip)(?-u:\b)[^\n;|&]*?[ \t](?:-P|--password)[ \t]*(?P<s>'[^'\n]*'|"[^"\n]*"|[^\s'"-][^\s'"]*)"#,
            Check::NotPlaceholder,
            &["zip"],
        ),
        rule(
            r#"(?-u:\b)7z[az]?r?(?-u:\b)[^\n;|&]*?[ \t]-p(?P<s>'[^'\n]*'|"[^"\n]*"|[^\s'"]+)"#,
            Check::NotPlaceholder,
            &["7z"],
        ),
        rule(
            r#"(?-u:\b)redis-cli(?-u:\b)[^\n]*?[ \t]-a[ \t]+(?P<s>'[^'\n]*'|"[^"\n]*"|[^\s'"]+)"#,
            Check::NotPlaceholder,
            &["redis-cli"],
        ),
        // `docker login -p`, `az login -p`, `oc login -p`, mongo tools' `-p` (in the same
        // command: not past `;`, `|` or `&`).
        rule(
            r#"(?-u:\b)(?:(?:docker|podman|buildah|nerdctl|skopeo|helm|az|oc|cf)(?:[ \t]+registry)?[ \t]+login|mongosh|mongo|mongodump|mongorestore|mongoimport|mongoexport|mongostat|mongotop|mongofiles)(?-u:\b)[^\n;|&]*?[ \t]-p[ \t]*(?P<s>'[^'\n]*'|"[^"\n]*"|[^\s'"-][^\s'"]*)"#,
            Check::NotPlaceholder,
            &["login", "mongo"],
        ),
        // SQL Server tools' `-P`, OpenLDAP tools' `-w`, Samba's `-U user%password`.
        rule(
            r#"(?-u:\b)(?:sqlcmd|bcp|osql|isql)(?-u:\b)[^\n;|&]*?[ \t]-P[ \t]*(?P<s>'[^'\n]*'|"[^"\n]*"|[^\s'"-][^\s'"]*)"#,
            Check::NotPlaceholder,
            &["sqlcmd", "bcp", "osql", "isql"],
        ),
        rule(
            r#"(?-u:\b)ldap(?:search|modify|add|delete|passwd|whoami|compare|modrdn|exop|url)(?-u:\b)[^\n;|&]*?[ \t]-w[ \t]*(?P<s>'[^'\n]*'|"[^"\n]*"|[^\s'"-][^\s'"]*)"#,
            Check::NotPlaceholder,
            &["ldap"],
        ),
        rule(
            r#"(?-u:\b)(?:smbclient|rpcclient|smbcacls|smbget|smbmap)(?-u:\b)[^\n;|&]*?(?:[ \t]-U[ \t]*|[ \t]--user(?:name)?[ \t=]+)["']?[^\s%"']+%(?P<s>[^\s"']+)"#,
            Check::NotPlaceholder,
            &["smbclient", "rpcclient", "smbcacls", "smbget", "smbmap"],
        ),
        rule(
            r"(?-u:\b)htpasswd(?P<f>(?:[ \t]+-[A-Za-z]+)+)[ \t]+(?P<a>[^\s;|&]+)[ \t]+(?P<b>[^\s;|&]+)(?:[ \t]+(?P<c>[^\s;|&]+))?",
            Check::Htpasswd,
            &["htpasswd"],
        ),
        // Oracle's `user/password@db`: `sqlplus scott/tiger@orcl`, `userid=system/x`.
        rule(
            r#"(?i)(?:(?-u:\b)(?:sqlplus|rman|dgmgrl)(?:[ \t]+-[a-z]+)*[ \t]+(?:target[ \t]+)?|(?-u:\b)userid[ \t]*=[ \t]*)["']?[a-z0-9_$#]+/(?P<s>[^\s@/"']+)"#,
            Check::NotPlaceholder,
            &["sqlplus", "rman", "dgmgrl", "userid"],
        ),
        // A `.pgpass` line: `host:port:database:user:password`.
        rule(
            r"(?m)^[ \t]*(?:[A-Za-z0-9._-]*[A-Za-z.][A-Za-z0-9._-]*|\*|\[[0-9A-Fa-f:.]+\]):(?:[0-9]{1,5}|\*):(?:[^:\s]*[A-Za-z_][^:\s]*|\*):(?:[^:\s]*[A-Za-z_][^:\s]*|\*):(?P<s>\S+)[ \t]*\r?$",
            Check::NotPlaceholder,
            &[":0", ":1", ":2", ":3", ":4", ":5", ":6", ":7", ":8", ":9", ":*"],
        )
        .after(Follow::PgPass),
        // A Telegram bot token: the bot's id, `:`, and 35 characters starting `AA`.
        rule(
            r"(?:(?-u:\b)|bot)[0-9]{5,16}:(?P<s>AA[A-Za-z0-9_-]{33})(?:[^A-Za-z0-9_-]|$)",
            Check::Shape,
            &[":aa"],
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
    /// Every rule's anchors in one automaton; a match names the rule to try. A contiguous NFA:
    /// quick to build, which is what a process that redacts a few short texts pays (every hook
    /// redacts its session id; a DFA of these anchors took 5 of a hook's 24 M instructions).
    anchors: AhoCorasick,
    /// The same anchors as a DFA, faster to scan, built once this process has scanned
    /// [`DFA_AFTER_BYTES`] (`gza work` writing an agent's raw log): same matches either way.
    anchors_dfa: OnceLock<AhoCorasick>,
    /// Bytes scanned with the NFA so far.
    scanned: AtomicUsize,
    /// Each anchor's length, its rules and what must follow it for each.
    words: Vec<Vec<u8>>,
    entries: Vec<Vec<(usize, Follow)>>,
    /// For each anchor, the anchors that may start inside it (itself at 0 among them) and where.
    hidden: Vec<Vec<(usize, usize)>>,
    /// Rules tried whatever the text holds.
    always: u64,
    /// Compiled when a text first needs the rule (most texts need none).
    regexes: Vec<LazyRegex>,
    checks: Vec<Check>,
    /// A whole key name that is a secret's (for JSON keys, checked on their own).
    secret_key: LazyRegex,
    pem_begin: LazyRegex,
    putty_private: LazyRegex,
    pem_end: LazyRegex,
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
    let hidden = hidden_anchors(&words);
    Redactor {
        anchors: anchor_automaton(&words, aho_corasick::AhoCorasickKind::ContiguousNFA),
        anchors_dfa: OnceLock::new(),
        scanned: AtomicUsize::new(0),
        words: words.iter().map(|w| w.as_bytes().to_vec()).collect(),
        entries,
        hidden,
        always,
        regexes: patterns.iter().map(|p| LazyRegex::new(*p)).collect(),
        checks: rules.iter().map(|r| r.check).collect(),
        secret_key: LazyRegex::new(format!("(?i)^{}$", key_name("[A-Za-z0-9_.-]"))),
        pem_begin: LazyRegex::new(PEM_BEGIN),
        putty_private: LazyRegex::new(PUTTY_PRIVATE),
        pem_end: LazyRegex::new(r"-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----"),
    }
});

/// Bytes a process scans with the anchors' NFA before it builds their DFA: a hook (a session id,
/// a few learnings) never gets there; a raw log does within its first lines.
const DFA_AFTER_BYTES: usize = 256 * 1024;

fn anchor_automaton<W: AsRef<[u8]>>(
    words: &[W],
    kind: aho_corasick::AhoCorasickKind,
) -> AhoCorasick {
    AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .match_kind(aho_corasick::MatchKind::LeftmostLongest)
        .kind(Some(kind))
        .build(words)
        .expect("valid anchors")
}

/// For each anchor `a` (lower case), the anchors `b` that may start inside it, with where: each
/// `(k, j)` such that `a[k..]` and `words[j]` agree as far as both go (`a[k..]` starts with
/// `b`, or `b` with `a[k..]`). Only the anchors whose first byte is `a[k]` are compared there
/// (a table by first byte): every process that redacts builds this once, and comparing every
/// pair at every offset took 5 M instructions of a hook, hashing every prefix 2 M.
fn hidden_anchors(words: &[String]) -> Vec<Vec<(usize, usize)>> {
    let mut by_first: Vec<Vec<usize>> = vec![Vec::new(); 256];
    for (j, b) in words.iter().enumerate() {
        if let Some(&first) = b.as_bytes().first() {
            by_first[usize::from(first)].push(j);
        }
    }
    words
        .iter()
        .map(|a| {
            let a = a.as_bytes();
            let mut inside = Vec::new();
            for k in 0..a.len() {
                let rest = &a[k..];
                for &j in &by_first[usize::from(rest[0])] {
                    let b = words[j].as_bytes();
                    let common = rest.len().min(b.len());
                    if rest[..common] == b[..common] {
                        inside.push((k, j));
                    }
                }
            }
            inside.sort_unstable_by_key(|&(k, j)| (j, k));
            inside
        })
        .collect()
}

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
    // A session id (Claude Code, Codex and Gemini CLI send UUIDs), which every hook redacts: a
    // UUID is never a secret (see the look-alikes), so it is answered without building the
    // redactor, 5 M of a hook's 16 M instructions.
    if is_canonical_uuid(text) {
        return Cow::Borrowed(text);
    }
    redact_candidates(text, REDACTOR.candidates(text))
}

/// Whether `text` is exactly a UUID in its canonical form (8-4-4-4-12 hexadecimal digits, in
/// either case; any version), which no rule redacts: hex digits and four hyphens hold no
/// anchor but `acca` (whose rule wants `ACCA` and 16 letters or digits after it), and no run
/// of hex digits reaches the 32 the Twilio rule, tried always, needs. The test
/// `a_uuid_is_never_redacted_and_is_answered_without_the_redactor` checks this against the
/// redactor's own anchors and rules, so a rule added later that could match one fails it.
pub fn is_canonical_uuid(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, &c)| match i {
            8 | 13 | 18 | 23 => c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
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
        for caps in r.regexes[i].captures_iter(text) {
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
        self.candidates_with(self.automaton(text.len()), text)
    }

    /// The anchors' NFA, or their DFA once this process has scanned enough to be worth it.
    fn automaton(&self, len: usize) -> &AhoCorasick {
        if let Some(dfa) = self.anchors_dfa.get() {
            return dfa;
        }
        if self.scanned.fetch_add(len, Ordering::Relaxed) + len < DFA_AFTER_BYTES {
            return &self.anchors;
        }
        self.anchors_dfa
            .get_or_init(|| anchor_automaton(&self.words, aho_corasick::AhoCorasickKind::DFA))
    }

    fn candidates_with(&self, anchors: &AhoCorasick, text: &str) -> u64 {
        let mut found = self.always;
        let all = (1u64 << self.regexes.len()) - 1;
        let bytes = text.as_bytes();
        for m in anchors.find_iter(text) {
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
        Check::PuttyKey => Some(Span {
            start: whole.start(),
            end: key_body_end(text, whole.end()),
            private_key: true,
        }),
        Check::KeyValue => {
            let key_at = caps.name("k")?;
            let key = key_at.as_str();
            let value = caps.name("v")?;
            let sep = caps.name("sep").map_or("=", |m| m.as_str());
            // `urn:ietf:params:oauth:grant-type`: a name among names (but `$env:TOKEN` is a key,
            // and so is one given a value with `=`: `//registry/:_authToken=x`, `host:TOKEN=x`).
            let before = &text.as_bytes()[..key_at.start()];
            let env = before.len() >= 4 && before[before.len() - 4..].eq_ignore_ascii_case(b"env:");
            if before.ends_with(b":") && !env && sep == ":" {
                return None;
            }
            let (inner, from) = unquote(value.as_str());
            let quoted = inner.len() != value.as_str().len();
            // An unquoted value runs to a blank: `;`, `&`, `,` and closing brackets inside it are
            // its characters, unless another `name=` follows them (a connection string, a query).
            let end = if quoted {
                value.end()
            } else {
                value_end(text, value.start(), value.end())
            };
            let inner = if quoted {
                inner
            } else {
                &text[value.start()..end]
            };
            let rest = text[end..].lines().next().unwrap_or("");
            let spaced = caps.name("sp").is_some_and(|m| !m.as_str().is_empty());
            // `DB_PASSWORD=x` in a shell or an env file: the value is a literal string, whatever
            // it looks like (`SuperSecretPassword`, `correct.horse.battery`).
            let env_literal = !quoted
                && sep == "="
                && !spaced
                && key.bytes().any(|b| b.is_ascii_uppercase())
                && !key.bytes().any(|b| b.is_ascii_lowercase());
            // A quoted value is a literal: `(`, `[` or `*` in it are characters of the secret
            // (Django's generated keys have them), not a call or an index.
            if !(value_is_secret_as(key, inner, env_literal)
                || quoted && literal_is_secret(key, inner))
            {
                return None;
            }
            // `f("password", "x")` is also a list of words (`["pass", "green"]`): a plain word
            // there is not taken for a secret.
            // So is one after a blank in a `.properties` line (`logging.level.token DEBUG`).
            let properties = sep.trim().is_empty() && !sep.is_empty() && key.contains('.');
            if (sep == "," || properties)
                && inner.bytes().all(|b| b.is_ascii_alphabetic())
                && !is_random_word(inner)
                && (inner.bytes().all(|b| b.is_ascii_lowercase())
                    || inner.bytes().all(|b| b.is_ascii_uppercase())
                    || is_type_name(inner)
                    || inner[1..].bytes().all(|b| b.is_ascii_lowercase()))
            {
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
                Check::UrlPassword => {
                    // `host:8080/path?email=a@b`: a port and a path, not a password.
                    let port = inner
                        .split_once('/')
                        .is_some_and(|(p, _)| p.bytes().all(|b| b.is_ascii_digit()));
                    !is_placeholder(inner) && !port
                }
                // Bare (`IDENTIFIED BY tiger9`), only when it looks random: "identified by PID".
                Check::Password => {
                    !is_placeholder(inner)
                        && value_is_secret("password", inner)
                        && (from > 0 || looks_random(inner))
                }
                Check::Htpasswd => {
                    let flags = caps.name("f").map_or("", |f| f.as_str());
                    let batch = flags.split_whitespace().any(|f| f.contains('b'));
                    let no_file = flags.split_whitespace().any(|f| f.contains('n'));
                    let password = if no_file {
                        caps.name("b")
                    } else {
                        caps.name("c")
                    };
                    return match password {
                        Some(p) if batch && !is_placeholder(p.as_str()) => Some(Span {
                            start: p.start(),
                            end: p.end(),
                            private_key: false,
                        }),
                        _ => None,
                    };
                }
                Check::LooksRandom => {
                    let key = caps.name("k").map_or("", |k| k.as_str());
                    // `--password word`: a password need not look random, only not be a word
                    // of the sentence around the flag (`--password is required`).
                    let password = ["password", "passwd", "passphrase"]
                        .iter()
                        .any(|p| key.to_ascii_lowercase().ends_with(p));
                    !is_placeholder(inner)
                        && value_is_secret(if key.is_empty() { "secret" } else { key }, inner)
                        && if password {
                            !reads_as_prose(inner, "") && !FLAG_WORDS.contains(&inner)
                        } else {
                            looks_random(inner)
                        }
                }
                Check::Basic => is_basic_credentials(inner),
                Check::KeyValue | Check::PrivateKey | Check::PuttyKey => {
                    unreachable!("handled above")
                }
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

/// Words that follow a flag in a sentence about it (`--password flag`), not its value.
const FLAG_WORDS: &[&str] = &[
    "flag",
    "flags",
    "option",
    "options",
    "argument",
    "arguments",
    "arg",
    "args",
    "parameter",
    "param",
    "switch",
    "value",
    "field",
    "instead",
    "too",
    "also",
    "only",
];

/// The characters an unquoted value is made of (what the key-value rules' value group takes).
fn is_value_char(c: u8) -> bool {
    !(c.is_ascii_whitespace() || b"\"'`,;&)]}|\\".contains(&c))
}

/// Where an unquoted value that starts at `start` and was matched up to `end` really ends: past
/// a `;`, `&` or `,` that another `name=` (or `name:`) does not follow, and past a closing
/// bracket that one in the value opened, so no tail of the secret is left (`Xk9;q8Z`,
/// `Pa(5w0rd)Zx`) while `Password=x;Encrypt=true` and `?token=x&user=y` end at the delimiter.
fn value_end(text: &str, start: usize, mut end: usize) -> usize {
    let b = text.as_bytes();
    let run = |from: usize| b[from..].iter().take_while(|&&c| is_value_char(c)).count();
    while let Some(&c) = b.get(end) {
        let taken = &b[start..end];
        let open = |o: u8, cl: u8| {
            taken.iter().filter(|&&x| x == o).count() > taken.iter().filter(|&&x| x == cl).count()
        };
        let next = match c {
            b';' | b'&' | b',' => {
                let n = run(end + 1);
                let seg = &b[end + 1..end + 1 + n];
                let names_a_key = seg.contains(&b'=')
                    || seg.iter().position(|&x| x == b':').is_some_and(|i| {
                        i > 0
                            && seg[..i]
                                .iter()
                                .all(|x| x.is_ascii_alphanumeric() || b"_.-".contains(x))
                    });
                if n == 0 || names_a_key {
                    break;
                }
                end + 1 + n
            }
            b')' if open(b'(', b')') => end + 1 + run(end + 1),
            b']' if open(b'[', b']') => end + 1 + run(end + 1),
            b'}' if open(b'{', b'}') => end + 1 + run(end + 1),
            _ => break,
        };
        end = next;
    }
    end
}

/// Where a private key that starts before `from` ends: its END line, or the last line of its
/// body when the END line was cut off (so the text after a cut key survives).
fn private_key_end(text: &str, from: usize) -> usize {
    let limit = text.floor_char_boundary(from + 64 * 1024);
    if let Some(end) = REDACTOR.pem_end.find(&text[from..limit]) {
        return from + end.end();
    }
    key_body_end(text, from)
}

/// Where a key's body that starts at `from` ends: it runs while lines (real ones, or `\n`
/// escapes) look like a key's (base64, `Name: value` headers, blank).
fn key_body_end(text: &str, from: usize) -> usize {
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
    value_is_secret_as(key, value, false)
}

/// [`value_is_secret`]; `literal`: the value is a string whatever it looks like (a shell's or an
/// env file's `KEY=value`), so a dotted or a name-like value is not taken for code or a name.
fn value_is_secret_as(key: &str, value: &str, literal: bool) -> bool {
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
    // A hex number or an address (`TOKEN_ADDRESS`-like `0x` + 40 digits), but not 32 bytes or
    // more of it: that is a private key (`PRIVATE_KEY=0x` + 64 digits).
    if v.len() > 2
        && v[..2].eq_ignore_ascii_case("0x")
        && v[2..].bytes().all(|b| b.is_ascii_hexdigit())
        && v.len() - 2 < 64
    {
        return false;
    }
    // `auth: oidc`, `AUTH=local`: a short lower-case word under an `auth` key names a mode.
    if key_lower.ends_with("auth")
        && v.len() <= 16
        && v.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
        && v.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
        && v.bytes().filter(u8::is_ascii_digit).count() <= 2
    {
        return false;
    }
    if is_path(v) || (key_lower.ends_with("pwd") && (v.starts_with('/') || v.starts_with('~'))) {
        return false;
    }
    if (lower.starts_with("http://") || lower.starts_with("https://")) && !v.contains('@') {
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
    // A literal's dots are characters (`correct.horse.battery`), unless its last part names
    // what the key holds (`API_TOKEN=config.api_token`).
    let dotted_literal = literal && is_dotted_name(v) && {
        let last = squash(v.rsplit('.').next().unwrap_or(v));
        !last.contains(word) && !last.contains(&name)
    };
    if is_code(v) && !dotted_literal {
        return false;
    }
    let identifier = v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && v.bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
    if lower == key_lower
        || lower == word
        || squash(v) == name
        || (identifier && !literal && v.bytes().filter(u8::is_ascii_digit).count() == 0 && {
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
    // `{Xk9mP2vL}` is a value in braces, not a name.
    let braced_name = |v: &str| !is_random_word(v.trim_matches(['{', '}', '#']));
    if v.starts_with('$')
        || (v.starts_with("#{") || v.starts_with('{')) && braced_name(v)
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
    // The word alone or before another (`enter_token`, `yourpassword`), not the start of one
    // in a value with digits (`Enterprise2024!`).
    let digits = v.bytes().any(|b| b.is_ascii_digit());
    STARTS.iter().any(|h| {
        lower.starts_with(h)
            && (!digits || !lower[h.len()..].starts_with(|c: char| c.is_ascii_alphabetic()))
    }) || HOLDS.iter().any(|h| lower.contains(h))
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
    if v.contains("::") || v.contains("->") {
        return true;
    }
    // A call or an index ends at its closing bracket, or goes on with a member (`f().x`);
    // `Pa(5w0rd)Zx` goes on with characters, so it is a value.
    if v.contains(['(', '[']) {
        let tail = v.rfind([')', ']']).map_or("", |i| &v[i + 1..]);
        let tail = tail.trim_end_matches(['?', ';', ',', '!']);
        if tail.is_empty() || tail.starts_with('.') && is_dotted_name(&format!("x{tail}")) {
            return true;
        }
    }
    // A type, a reference or a dereference (`&str`, `*self.token`), not `*Xk9mP2vL`.
    if v.contains('<') && v.ends_with('>') || v.starts_with(['&', '*']) && !is_random_word(&v[1..])
    {
        return true;
    }
    is_dotted_name(v)
}

/// A word of letters and digits that mixes upper case, lower case and digits, as generated
/// secrets do and names rarely do.
fn is_random_word(v: &str) -> bool {
    v.bytes().all(|b| b.is_ascii_alphanumeric())
        && v.bytes().any(|b| b.is_ascii_digit())
        && v.bytes().any(|b| b.is_ascii_uppercase())
        && v.bytes().any(|b| b.is_ascii_lowercase())
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
    // `Tk4m,Pq8w`: the delimiter is inside the value (nothing named follows it), not code's.
    if v[name_end..].starts_with([',', ';', '&']) {
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
        .any(|i| r.regexes[i].is_match(line));
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
                    REDACTOR.secret_key.is_match(&k) && value_is_secret(&k, &text)
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
                    && REDACTOR.secret_key.is_match(k)
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
            if let Some(end) = REDACTOR.pem_end.find(text) {
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
            && let Some(begin) = REDACTOR.pem_begin.find(text)
            && REDACTOR.pem_end.find(&text[begin.end()..]).is_none()
            && !text[begin.end()..].contains("\\n")
        {
            self.in_key = true;
        }
        // A PuTTY key's private lines follow this one: dropped until a line that is not a
        // key's (it has no END line).
        if text.contains("Private-Lines:")
            && let Some(at) = REDACTOR.putty_private.find(text)
            && !text[at.end()..].contains("\\n")
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
        // A second probe's shapes (session 8).
        (
            "keytool -genkey -alias k -storepass Ks7pK2mQ8vX -keystore k.jks",
            "Ks7pK2mQ8vX",
        ),
        (
            "jarsigner -storepass Js4pK2mQ8vX -keypass Jk5pK2mQ8vX app.jar k",
            "Js4pK2mQ8vX",
        ),
        (
            "jarsigner -storepass Js4pK2mQ8vX -keypass Jk5pK2mQ8vX app.jar k",
            "Jk5pK2mQ8vX",
        ),
        (
            "    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVB",
            "BLRVktLS0tLQpNSUlFb3dJQk",
        ),
        (
            "key=LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUV2UUlCQURBTkJna3Fo",
            "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUV2UUlCQURBTkJna3Fo",
        ),
        (
            "ssh-keygen -t ed25519 -N 'KeygenPassphr4se' -f k",
            "KeygenPassphr4se",
        ),
        ("zip -P ZipPassw0rd77 out.zip a.txt", "ZipPassw0rd77"),
        ("unzip -P UnzipPw2024 out.zip", "UnzipPw2024"),
        ("7z x -pSevenZipPw99 a.7z", "SevenZipPw99"),
        (
            "X-Auth-Key: 1234567890abcdef1234567890abcdef12345",
            "1234567890abcdef1234567890abcdef12345",
        ),
        (
            "TFE_TOKEN=abcdefghijklmn.atlasv1.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKlMnOpQrStUvWxYz012345",
            "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        ),
        (
            "bearer AAAAAAAAAAAAAAAAAAAAAMLheAAAAAAA0%2BuSeid%2BULvsea4JtiGRiSDSJSI%3DEUifiRBkKG5E2XzMDjRfl76ZC9Ub0wnz4XsNiRVBChTYbJcE3F",
            "MLheAAAAAAA0%2BuSeid",
        ),
        (
            "DOPPLER_TOKEN dp.st.dev.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEf",
            "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        ),
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
        // Passwords given to common clients on their command line (the whole value goes).
        (
            "docker login -u deploy -p Dl6gK2mQ8vX registry.local",
            "Dl6gK2mQ8vX",
        ),
        (
            "podman login -u me -p 'Pd4mK2 mQ8vX' quay.io",
            "Pd4mK2 mQ8vX",
        ),
        ("az login -u ops@corp.example -p Az7pK2mQ8vX", "Az7pK2mQ8vX"),
        (
            "mongosh -u admin -p Mg5sK2mQ8vX mongodb://db/app",
            "Mg5sK2mQ8vX",
        ),
        (
            "mongodump --host db -u app -p Md3pK2mQ8vX --out /tmp",
            "Md3pK2mQ8vX",
        ),
        (
            "sqlcmd -S db -U sa -P Sq9cK2mQ8vX -Q \"select 1\"",
            "Sq9cK2mQ8vX",
        ),
        (
            "ldapsearch -x -D cn=admin,dc=x -w Ld4pK2mQ8vX -b dc=x",
            "Ld4pK2mQ8vX",
        ),
        ("smbclient //srv/share -U user%Sm3bK2mQ8vX", "Sm3bK2mQ8vX"),
        (
            "htpasswd -b /etc/nginx/.htpasswd admin Ht7pK2mQ8vX",
            "Ht7pK2mQ8vX",
        ),
        ("htpasswd -nbB admin Hn8pK2mQ8vX > creds", "Hn8pK2mQ8vX"),
        ("sqlplus scott/Tg8rK2mQ8vX@orcl @run.sql", "Tg8rK2mQ8vX"),
        (
            "expdp userid=system/Ex5pK2mQ8vX@db dumpfile=x.dmp",
            "Ex5pK2mQ8vX",
        ),
        ("psql --password hunterword --host db", "hunterword"),
        // Config and code forms: every syntax that gives a name its value.
        (
            "//registry.npmjs.org/:_authToken=Nr7cK3mQ9vX2wL5",
            "Nr7cK3mQ9vX2wL5",
        ),
        ("worker-1:API_TOKEN=Wk1tK3mQ9vX2", "Wk1tK3mQ9vX2"),
        ("<password>Xm3lK7mQ5v</password>", "Xm3lK7mQ5v"),
        (
            "<add key=\"x\"/><DbPassword>Xd4lK7mQ5v</DbPassword>",
            "Xd4lK7mQ5v",
        ),
        ("define('DB_PASSWORD','Dp2fK7mQ5v');", "Dp2fK7mQ5v"),
        ("os.environ[\"API_TOKEN\"] = \"Oe3nK7mQ5v\"", "Oe3nK7mQ5v"),
        ("os.getenv(\"DB_PASSWORD\",\"Og4eK7mQ5v\")", "Og4eK7mQ5v"),
        (
            "[Environment]::SetEnvironmentVariable(\"API_TOKEN\",\"Ps5eK7mQ5v\")",
            "Ps5eK7mQ5v",
        ),
        ("ENV DB_PASSWORD Df6eK2mQ8v", "Df6eK2mQ8v"),
        ("set -x API_TOKEN Fs7hK2mQ8v", "Fs7hK2mQ8v"),
        ("DB_PASSWORD ?= Mk8fK2mQ8v", "Mk8fK2mQ8v"),
        ("spring.datasource.password Sp9dK2mQ8v", "Sp9dK2mQ8v"),
        (
            "env:\n  - name: DB_PASSWORD\n    value: K8sV4lK2mQ8v\n  - name: MODE",
            "K8sV4lK2mQ8v",
        ),
        ("db_password: |\n  Yb1kK2mQ8v\nuser: app", "Yb1kK2mQ8v"),
        ("CREATE USER app WITH PASSWORD 'Sq1cU5vL6x';", "Sq1cU5vL6x"),
        ("ALTER USER app IDENTIFIED BY 'Ib2dU5vL6x';", "Ib2dU5vL6x"),
        (
            "POSTGRES_PASSWORD=${POSTGRES_PASSWORD:-Sd7fD1vL2x}",
            "Sd7fD1vL2x",
        ),
        // Shapes that had no rule.
        ("db.internal:5432:app:appuser:Pg7pK2mQ8vX", "Pg7pK2mQ8vX"),
        ("*:*:*:replicator:Pg8pK2mQ8vX", "Pg8pK2mQ8vX"),
        (
            "https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1/getMe",
            "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1",
        ),
        (
            "alibaba LTAI5tGq8sXk2mQ9vW4rLb7z",
            "LTAI5tGq8sXk2mQ9vW4rLb7z",
        ),
        (
            "PRIVATE_KEY=0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318",
            "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318",
        ),
        // The whole value, whatever punctuation it holds.
        ("SMTP_PASSWORD=Xk9mP2v;q8Zr", "Xk9mP2v;q8Zr"),
        ("DB_PASSWORD=Xk9&Lq8w", "Xk9&Lq8w"),
        ("API_TOKEN=Tk4m,Pq8w", "Tk4m,Pq8w"),
        ("postgres://app:p/Xk9mQ@db/app", "p/Xk9mQ"),
        ("postgres://app:Ua8tA2@x@db/app", "Ua8tA2@x"),
        ("DB_PASSWORD=Pa(5w0rd)Zx", "Pa(5w0rd)Zx"),
        ("DB_PASSWORD={Xk9mP2vL}", "Xk9mP2vL"),
        ("DB_PASSWORD=*Xk9mP2vL", "Xk9mP2vL"),
        ("ADMIN_PASSWORD=Enterprise2024!", "Enterprise2024!"),
        ("ADMIN_PASSWORD=SuperSecretPassword", "SuperSecretPassword"),
        ("DB_PASSWORD=correct.horse.battery", "correct.horse.battery"),
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
        // A mode word under an `auth` key is configuration.
        "auth: oidc",
        "auth: sigv4",
        "AUTH=local",
        "auth: keycloak",
        "auth: github",
        "auth: mtls",
        "\"auth\": \"anonymous\"",
        // Neighbours of the new forms.
        "urn:ietf:params:oauth:grant-type:jwt-bearer",
        "DB_PASSWORD_FILE=/run/secrets/db_password",
        "MAX_TOKENS=4096",
        "docker login --username deploy --password-stdin registry.local",
        "docker login -u deploy registry.local && ssh host",
        "mongosh -u admin -p --authenticationDatabase admin",
        "ldapsearch -x -W -b dc=x",
        "sqlplus / as sysdba @setup.sql",
        "os.getenv(\"DB_PASSWORD\", \"\")",
        "os.environ[\"API_TOKEN\"] = os.getenv(\"OTHER\")",
        "_(\"password\", \"Password\")",
        "<password>${db.password}</password>",
        "- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef:",
        "POSTGRES_PASSWORD=${POSTGRES_PASSWORD:-}",
        "POSTGRES_PASSWORD=${POSTGRES_PASSWORD:?must be set}",
        "12:30:45:67:89 and 2026-11-27T17:31:20Z",
        "USDC_TOKEN=0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
        "http://localhost:8080/users/@me and https://x.example:443/path?email=a@b.co",
        "--password is required; pass --password flag or --token to the CLI",
        "set token expiry to an hour",
        "login(password=pw, user=u)",
        "Server=db;Password=${DB_PASS};Encrypt=true",
        "&[\"approve\", \"pass\", \"green\", \"successful\"]",
        "A worker is identified by PID and start time",
        "logging.level.token DEBUG",
        "the password 'field' is required",
        "--pass through",
        "set -x PATH /usr/bin $PATH",
        "ENV NODE_ENV production",
        "time 12:00:00:00:01 frames; aa:11:22:33:44",
        "docker login -u ci --password-stdin < token.txt; mkdir -p /tmp/x",
        "smbclient -L //srv -N; htpasswd -c /etc/htpasswd admin; sqlplus /nolog",
        "parser.add_argument(\"--password\", \"-p\", help=\"password\")",
        "API_TOKEN=config.api_token",
        "ALTER ROLE app PASSWORD NULL;",
    ];

    /// A piece of `secret` (any four characters of it in a row, or all of it when shorter) that
    /// is still in `out` (more often than the rest of `case` has it: `deploy:D3ployPw`): a
    /// secret cut short at punctuation leaks its tail.
    fn surviving_piece<'a>(case: &str, out: &str, secret: &'a str) -> Option<&'a str> {
        let around = case.replacen(secret, "\0", 1);
        let at: Vec<usize> = secret
            .char_indices()
            .map(|(i, _)| i)
            .chain([secret.len()])
            .collect();
        let n = 4.min(at.len() - 1);
        (0..at.len() - n)
            .map(|i| &secret[at[i]..at[i + n]])
            .find(|piece| out.matches(piece).count() > around.matches(piece).count())
    }

    #[test]
    fn every_secret_shape_is_redacted_and_none_of_it_survives() {
        assert!(SECRETS.len() >= 40, "{} shapes", SECRETS.len());
        let mut failed = Vec::new();
        for (case, secret) in SECRETS {
            let out = redact_secrets(case);
            let piece = surviving_piece(case, &out, secret);
            if !out.contains("[REDACTED") || piece.is_some() {
                failed.push(format!("{case}\n  -> {out}  ({piece:?} survives)"));
            }
        }
        assert!(failed.is_empty(), "not redacted:\n{}", failed.join("\n"));
    }

    /// [`redact`] without its UUID shortcut: the rules alone.
    fn redact_by_rules(text: &str) -> Cow<'_, str> {
        redact_candidates(text, REDACTOR.candidates(text))
    }

    #[test]
    fn a_uuid_is_never_redacted_and_is_answered_without_the_redactor() {
        for uuid in [
            "123e4567-e89b-12d3-a456-426614174000",
            "0193A8C2-7B3E-7C4D-9E5F-ACCA00000000",
        ] {
            assert!(is_canonical_uuid(uuid), "{uuid}");
        }
        for not in [
            "123e4567e89b12d3a456426614174000",
            "123e4567-e89b-12d3-a456-42661417400",
            "123e4567-e89b-12d3-a456-4266141740000",
            "123e4567-e89b-12d3-a456_426614174000",
            "g23e4567-e89b-12d3-a456-426614174000",
            " 23e4567-e89b-12d3-a456-426614174000",
            "ghp_0123456789abcdefghijABCDEFGHIJ01",
            "",
        ] {
            assert!(!is_canonical_uuid(not), "{not}");
        }
        // What the shortcut relies on, checked against the rules as they are now: UUIDs filled
        // with every hex digit in both cases, random ones (a fixed seed), and, for every anchor
        // made of hex digits and hyphens alone, UUIDs holding it at every place it fits, in
        // both cases, the rest filled each of those ways.
        const HYPHENS: [usize; 4] = [8, 13, 18, 23];
        let shape = |fill: &mut dyn FnMut(usize) -> u8| -> Vec<u8> {
            (0..36)
                .map(|i| if HYPHENS.contains(&i) { b'-' } else { fill(i) })
                .collect()
        };
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut random_hex = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            b"0123456789abcdefABCDEF"[(seed % 22) as usize]
        };
        let mut fills: Vec<Vec<u8>> = b"0123456789abcdefABCDEF"
            .iter()
            .map(|&d| shape(&mut |_| d))
            .collect();
        fills.extend((0..2000).map(|_| shape(&mut |_| random_hex())));
        let r = &*REDACTOR;
        let hexy: Vec<&Vec<u8>> = r
            .words
            .iter()
            .filter(|w| w.iter().all(|c| c.is_ascii_hexdigit() || *c == b'-'))
            .collect();
        let mut uuids: Vec<Vec<u8>> = fills.clone();
        for word in hexy {
            for case in [word.to_ascii_lowercase(), word.to_ascii_uppercase()] {
                for at in 0..=36usize.saturating_sub(case.len()) {
                    let fits = case
                        .iter()
                        .enumerate()
                        .all(|(k, &c)| (c == b'-') == HYPHENS.contains(&(at + k)));
                    if !fits {
                        continue;
                    }
                    for fill in fills.iter().take(200) {
                        let mut u = fill.clone();
                        u[at..at + case.len()].copy_from_slice(&case);
                        uuids.push(u);
                    }
                }
            }
        }
        assert!(uuids.len() > 2022, "the anchors that fit were tried too");
        for uuid in uuids {
            let uuid = String::from_utf8(uuid).unwrap();
            assert!(is_canonical_uuid(&uuid), "{uuid}");
            assert_eq!(redact_by_rules(&uuid), uuid, "a rule redacts a UUID");
            assert!(matches!(redact(&uuid), Cow::Borrowed(_)));
        }
        // Anything else still goes through the rules: a session id that is a secret.
        let token = "ghp_0123456789abcdefghijABCDEFGHIJ0123";
        assert_eq!(redact(token), MARK);
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

    /// A PuTTY key file (version 3, unencrypted): its private lines and MAC go, its public
    /// part and what follows stay; the same when the file's lines arrive as `\n` escapes
    /// (JSON) and through the line writer of raw logs.
    #[test]
    fn a_putty_keys_private_lines_go_and_what_follows_stays() {
        let ppk = "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy\n\
                   Public-Lines: 2\nAAAAC3NzaC1lZDI1NTE5AAAAIJ3x\nQm9vayBvZiBr\n\
                   Private-Lines: 1\nAAAAIBfYwq3rS1xZk8Yc0pQd9sLmN2vR7tUeWj4oHbGa5nXy\n\
                   Private-MAC: 6f8c1f0b4f7b2a9e3d1c5a7b9e0f2d4c6a8b0e2f4d6c8a0b2e4f6a8c0e2d4f6a\n\
                   \nThe deploy key is in keys/deploy.ppk.";
        let out = redact_secrets(ppk);
        assert!(!out.contains("AAAAIBfYwq3r"), "{out}");
        assert!(!out.contains("6f8c1f0b"), "{out}");
        assert!(out.contains("[REDACTED PRIVATE KEY]"), "{out}");
        assert!(out.contains("Public-Lines: 2\nAAAAC3Nza"), "{out}");
        assert!(
            out.ends_with("The deploy key is in keys/deploy.ppk."),
            "{out}"
        );

        let escaped = ppk.replace('\n', "\\n");
        let out = redact_secrets(&format!("{{\"key\": \"{escaped}\"}}"));
        assert!(
            !out.contains("AAAAIBfYwq3r") && !out.contains("6f8c1f0b"),
            "{out}"
        );
        assert!(out.contains("keys/deploy.ppk."), "{out}");

        let out = String::from_utf8(through_writer(&[ppk.as_bytes(), b"\n"])).unwrap();
        assert!(
            !out.contains("AAAAIBfYwq3r") && !out.contains("6f8c1f0b"),
            "{out}"
        );
        assert!(out.contains("Public-Lines: 2\nAAAAC3Nza"), "{out}");
        assert!(
            out.contains("The deploy key is in keys/deploy.ppk."),
            "{out}"
        );

        // A mention in prose takes nothing with it.
        assert_eq!(
            redact_secrets("PuTTY writes Private-Lines: before the key's base64"),
            "PuTTY writes Private-Lines: before the key's base64"
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

    /// The prefix tables find what comparing every pair of anchors at every offset finds.
    #[test]
    fn hidden_anchors_are_those_every_pair_compared_finds() {
        let mut words: Vec<String> = rules()
            .iter()
            .flat_map(|r| r.anchors.iter().map(|w| w.to_ascii_lowercase()))
            .collect();
        words.sort();
        words.dedup();
        words.extend(["pass", "passw", "sec", "secretx", "x"].map(String::from));
        words.sort();
        words.dedup();
        let naive: Vec<Vec<(usize, usize)>> = words
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
        assert_eq!(hidden_anchors(&words), naive);
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
        let dfa = anchor_automaton(&r.words, aho_corasick::AhoCorasickKind::DFA);
        for text in &texts {
            let candidates = r.candidates_with(&r.anchors, text);
            // The DFA a long-running process switches to finds the same.
            assert_eq!(candidates, r.candidates_with(&dfa, text), "{text:?}");
            for (i, re) in r.regexes.iter().enumerate() {
                if re.is_match(text) {
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
