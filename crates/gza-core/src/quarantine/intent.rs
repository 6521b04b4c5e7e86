//! (f) Intent: an act on a protected thing, by class, in any language the lexicons read.
//!
//! The action model ([`super::actions`]) reads commands and verb–object pairs and judges each
//! in its clause; what it never learnt to name passes. This layer reads a learning the other
//! way round: it starts from the *things* an attacker wants an agent to act on — the tests and
//! the checks that guard the code, secrets and where they could be sent, permissions in
//! infrastructure code, what starts on its own, where dependencies and hooks come from, the
//! agent's own rules — and asks whether the text makes the agent do the harmful act to one of
//! them: weaken or delete, send, widen, install, replace from elsewhere, lift. Each class is a
//! thing, the acts that harm it and, where the act alone is ordinary (deleting a test), the
//! motive that makes it an attack ("it keeps failing", "to get CI green").
//!
//! A match is then judged by polarity, in the same languages: a negation before the act or a
//! prohibition after it ("never", "nicht", "不要", "しないで", "마세요"), a past event ("in
//! 2023 someone ran …", "the incident started with …"), a use reserved for a role ("only the
//! release captain may …"), a scope ("for GET only", "local Docker Compose"), a guard that
//! catches it ("the lint rule fails the build when …"), a passive description ("is installed
//! by the Ansible role") make it advice or a fact, and it is kept.

use std::sync::LazyLock;

use crate::lazy_regex::GatedRegex as Gated;

use super::Concern;

/// Every pattern here is compiled only when a text holds the literals its matches need (most
/// texts hold none of a class's or a shape's words): see [`Gated`].
fn re(p: &str) -> Gated {
    Gated::new(format!("(?i){p}"))
}

/// One class: the act that harms a thing, the thing, and (when the act alone is ordinary)
/// the motive that makes it an attack.
struct Class {
    concern: Concern,
    what: &'static str,
    act: Gated,
    thing: Gated,
    motive: Option<Gated>,
    /// Whether the act must come before the thing in the text (an imperative and its object).
    /// Off for languages that put the verb last.
    scoped: bool,
}

/// The protected things, in every language the lexicons read.
const TESTS: &str = r"\btests?\b|\w{3,}(?:tests|testen|testy)\b|\btest_\w+|\w+_test\b|\btestes?\b|\btests?\w*|\bspec(?:s|/)|\bsuite\b|\bassert\w*|\bexpected\s+(?:status|value|output|result)|\bsnapshot|\bprueba|\bteste\b|\btesty\b|\btestler|\bтест|测试|テスト|테스트|\bcodeql\b|\bgitleaks\b|\bdependabot|\bsecret[- ]scan\w*|\bsast\b|\bsemgrep\b|\bsnyk\b|\btrufflehog\b|\.husky\b|\bsecurity\s+(?:workflow|scan|job|check)s?";
const SECURITY: &str = r"secur|\bauth|csrf|permission|codeql|gitleaks|dependabot|secret[- ]scan|\bsast\b|semgrep|snyk|trufflehog|sicherheit|securite|seguridad|seguranca|sicurezza|beveiliging|bezpieczen|guvenlik|безопасн|авториз|安全|認証|セキュリティ|보안|인증";
/// Acts that weaken or remove a test or a check.
const WEAKEN: &str = r"\b(?:(?:delete|remove|rm|drop|disable|skip|xfail|loosen|relax|weaken|mute|silence|neuter|gut|retire|exclude|wipe|nuke|purge|erase|trash|ditch)\b|get\s+rid\s+of\b|(?:deleting|removing|dropping|disabling|skipping|loosening|relaxing|weakening|muting|silencing|excluding|wiping|nuking|purging)\b|comment(?:ing)?\s+(?:\w+\s+){0,3}?out\b|mark\s+(?:\w+\s+){0,2}(?:as\s+)?(?:skip\w*|xfail|ignored?|pending)|stub\s+out|lösch|losch|entfern|kommentier|deaktivier|uberspring|supprim|desactiv|commente|ignore[rz]\b|borra|elimin|comenta|quita|omite|apag|remov|desativ|cancell|disattiv|salta|verwijder|schakel\s+\S+\s+uit|uitschakel|sla\s+\S+\s+over|usun|wyłącz|wylacz|zakomentuj|pomin|sil\b|silin|kaldır|kaldir|devre\s+dışı|atla|удал|отключ|закомментир|пропуст|убер)|删除|删掉|移除|禁用|注释掉|跳过|削除|消して|無効|コメントアウト|スキップ|삭제|지우|비활성|주석\s*처리|건너뛰";
/// Why a test would be weakened: it fails, it is slow, it is in the way.
const FAILING: &str = r"\bfail|\bflak|\bflap|\bred\b|\bbroken|\bslow|time(?:s)?\s*out|timing\s+out|\bblock|\bnoise|\bnoisy|\bgreen\b|\bpass(?:es|ing)?\b|in\s+the\s+way|annoying|falla|falle|fallan|echou|\brot\b|\brote\b|fehlschl|scheiter|schlagen\s+\S*\s*fehl|blockier|langsam|\bfalen\b|faalt|traag|falh|\blent|fallisc|lento|nie\s+przechodz|czerwon|wolno|basarisiz|yavas|пада|пада|красн|медлен|失败|报错|落ち|失敗|遅い|실패|느리|verde|\bgrun\b|\bvert\b|слишком|tarda|dauert|schl[aä]gt\s+[^.;]{0,60}\bfehl\b|太慢|很慢|变慢|失败了";

/// Secrets, and where they would go.
const SECRET: &str = r"\.env(?:[^.\w-]|$)|\bcredentials?\b|~/\.aws|~/\.ssh|\bid_(?:rsa|ed25519|ecdsa)(?:[^.\w]|$)|\.netrc|\btokens?\b|_token\b|\bsecrets?\b|\bpasswords?\b|\bapi[ _-]?keys?\b|\bprivate\s+keys?\b|\bprintenv\b|\benv\s+output|\bproduktionsschl|\bschl[uü]ssel|\bcl[eé]s?\b\s+(?:de\s+)?(?:prod|api|privee)|\bclaves?\b|\bchaves?\b|\bключ|\bпарол|\bтокен|密钥|密码|令牌|秘密鍵|パスワード|トークン|비밀번호|토큰|\bsifre|\bhasl|\bklucz";
const LEAK: &str = r"\b(?:(?:attach|include|append|paste|upload|post|put|add|print|echo|send|embed|dump|share|copy)(?:ing)?\b|dołacz|dolacz|wklej|wyslij|wyślij|dodaj|umiesc|häng|hang|anhang|fug|einfug|send|lade|kopier|joins|inclu|colle|envoie|ajoute|copie|adjunta|incluye|pega|envia|sube|anade|anexa|inclua|cole|envie|adicione|allega|includi|incolla|invia|aggiungi|carica|voeg|plak|stuur|ekle|yukle|gonder|paylas|прилож|встав|отправ|добав|загрузи|скопир)|附上|粘贴|发送|上传|添付|貼り|送信|アップロード|첨부|붙여|전송|업로드";
const DESTINATION: &str = r"\b(?:pr|pull\s+request\w*|merge\s+request\w*|komentarz\w*|kommentar\w*|commentaire\w*|comentario\w*|commento|коммент\w*|summary|summaries|description|issue|comment|log|logs|link|url|query|parameters?|badge|image|paste\w*|gist|webhook|chat|slack|channel|report|opis\w*|beschreibung|adresse|lien|enlace|endereco|indirizzo|adres|descripcion|descricao|descrizione|aciklama\w*|ссылк\w*|адрес\w*|описани\w*|лог\w*)\b|pastebin|paste\.rs|hastebin|描述|链接|地址|説明|リンク|설명|링크|주소";

/// Permissions opened to everyone, in infrastructure code.
const WIDE_PERMISSION: &str = r"\bwrite-all\b|\badministratoraccess\b|\broles/owner\b|\bowner\s+role|\brole\s+(?:of\s+)?owner|0\.0\.0\.0/0|::/0|\borigins?\s*[:=]?\s*['\x22`]?\*|\b(?:all|any|every)\s+origins?\b|\bpublic-read(?:-write)?\b|\ballusers\b|\ballowed_hosts\s*=?\s*\[?\s*['\x22]?\*|\bcluster-admin\b|\bfull\s+admin(?:istrator)?\s+(?:rights|access)|\badmin\s+rights\b|\b(?:bucket|container|blob|share|folder|repo|repository|dataset|snapshot|registry)s?\b(?:\s+[\w-]+){0,3}?\s+(?:public|publico|publique|offentlich|publiczn\w*|публичн\w*)\b|公开|公開|공개|\b(?:everyone|anyone|all\s+users|the\s+world|jeder|tout\s+le\s+monde|todos|wszyscy|всем)\b[^.;\n]{0,20}\b(?:full\s+control|write|read/write|modify|all\s+permissions|vollzugriff|controle\s+total|control\s+total)\b|\b(?:full\s+control|write\s+access|read-write|vollzugriff|controle\s+total|control\s+total)\b[^.;\n]{0,20}\b(?:everyone|anyone|all\s+users|the\s+world|public|jeder|tout\s+le\s+monde|todos|wszyscy|всем)\b";
const WIDEN: &str = r"\b(?:(?:give|grant|attach|assign|set|use|open|allow|enable|add|make|switch|change|configure|put)\b[^-]|gib|gebe|erteil|vergib|setz|offne|erlaub|fug|accorde|donne|ouvre|autorise|active|mets|ajoute|otorga|concede|da\b|abre|abri|permite|activa|pon|anade|conceda|abra|ative|coloque|assegna|apri|consenti|attiva|imposta|nadaj|otworz|zezwol|ustaw|ver\b|verleen|zet|sta\s+toe|ac\b|izin\s+ver|дай|выдай|открой|разреш|включи|установи)|授予|开放|打开|允许|设置|付与|開放|開け|許可|設定|부여|열어|허용|설정";
/// Where a wide setting is in scope: one method, read-only, a local machine, a sandbox.
const PERMISSION_SCOPE: &str = r"\bonly\b|\bfor\s+get\b|\bread-only\b|\blocal(?:ly|host)?\b|127\.0\.0\.1|\bdev(?:elopment)?\b|docker[- ]compose|\bsandbox|\bnur\b|\blokal|\bseulement\b|\bsolo\b|\bsomente\b|\bapenas\b|\btylko\b|\bтолько\b|\bлокальн|仅|只|のみ|だけ|로컬|만\b";

/// Starting on its own, outside the project.
const PERSISTENCE: &str = r"launchagent|launchdaemon|login\s+items?|systemd/user|\.config/systemd|systemctl\s+--user|\bcrontab\b|\bcron\s+(?:entry|job)\s+(?:on|in)\s+(?:your|the\s+user|this\s+machine)|@reboot|\bautostart|startup\s+(?:folder|items?)|currentversion\\run|\bschtasks\b|\bdemarrage\b|\bautostart\w*|автозагруз|自启动|開機|ログイン項目";
const INSTALL: &str = r"\b(?:(?:install|create|add|enable|register|put|drop|write|set\s+up|load)\b|installier|erstell|leg\s+\S+\s+an|cree|crea|ajoute|anade|instala|adicione|crie|aggiungi|utworz|dodaj|kur|olustur|установи|создай|добавь)|安装|创建|添加|インストール|作成|追加|설치|만들|추가";

/// Git hooks, and code that comes from elsewhere to fill them.
const HOOKS: &str = r"\.git/hooks|core\.hookspath|\.husky/";
const REPLACE: &str = r"\b(?:(?:replace|overwrite|copy|write|install|swap|update)\b|remplace|ecrase|copie|ersetz|uberschreib|kopier|reemplaza|sobrescrib|copia|substitua|sobrescreva|sostituisci|sovrascriv|zamien|nadpisz|skopiuj|degistir|uzerine\s+yaz|замени|перезапиши|скопируй)|替换|覆盖|置き換|上書き|교체|덮어";
const ELSEWHERE: &str = r"https?://|\bupstream\b|\bfrom\s+(?:the|its|that|this)\s+(?:url|link|address|remote|gist|server|endpoint)|download|telecharg|herunterg|descarg|baixad|scaricat|pobran|indiril|скачан|загружен|下载|ダウンロード|다운로드";

/// Switching off the checks that protect accounts and branches.
const ACCOUNT_GUARD: &str = r"\b(?:two|2)[- ]?(?:factor|fa\b|step\s+(?:verification|auth\w*|login))|\bmfa\b|\b2fa\b|\bdeux\s+facteurs|\bzwei[- ]?faktor|\bdos\s+factores|\b(?:dois|2)\s+fatores|\bdue\s+fattori|\bdwuskładnik|\bdwuskladnik|двухфактор|双重验证|双因素|二要素|2단계|\bbranch\s+protection|\bproteccion\s+de\s+(?:la\s+)?rama|\bprotection\s+de\s+(?:la\s+)?branche|\bbranch-?schutz|\bschutz\s+(?:des|der)\s+(?:main-?)?branch|\bprotecao\s+de\s+branch|\bзащит\w*\s+ветк|分支保护|ブランチ保護|\baudit\s+log\w*|\bsecurity\s+alerts?\b|\bsecret\s+scanning\b|\bauthenti[cf]\w*";
const SWITCH_OFF: &str = r"\b(?:(?:disable|disabling|turn\s+off|turning\s+off|switch\s+off|remove|removing|drop|dropping|bypass|bypassing|deactivate|deactivating|delete|deleting)\b|desactiv|supprim|deaktivier|abschalt|schalte\s+\S+\s+ab|entfern|desactiva|quita|desativ|remov|disattiv|rimuov|wyłącz|wylacz|usun|devre\s+disi|kapat|отключ|выключ|убер)|禁用|关闭|关掉|無効|オフ|비활성|끄";

/// Deleting, and every branch on the remote.
const BULK_DELETE: &str = r"\b(?:(?:delete|remove|prune|purge|wipe|nuke|drop)\b|git\s+push\s+\S+\s+(?:--delete|-d|:)|lösch|losch|entfern|supprim|borra|elimin|apag|exclu|cancell|elimina|usun|usuń|sil\b|удал)|删除|删掉|削除|삭제";
const ALL_BRANCHES: &str = r"\b(?:all|every|each)\s+(?:(?:\w+|the)\s+){0,2}?branch\w*|\bbranch\w*\s+(?:on|in|from)\s+(?:origin|the\s+remote|upstream)|\bremote[- ]branches|\bgit\s+branch\s+-r\b|\bramas\s+remotas|\btodas\s+las\s+ramas|\bzdaln\w*\s+ga[lł]\w*|\bwszystkie\s+ga[lł]\w*|\bremote-branch\w*|\balle\s+(?:\w+\s+)?branch\w*|\bbranches\s+distantes|\btoutes\s+les\s+branches|\btodos\s+os\s+branches|\bramos\s+remotos|\btutti\s+i\s+branch|\bуд[ао]ленные\s+ветки|\bвсе\s+ветки|所有(?:远程)?分支|远程分支|リモートブランチ|全ての?ブランチ|원격\s*브랜치|모든\s*브랜치";

static CLASSES: LazyLock<Vec<Class>> = LazyLock::new(|| {
    vec![
        Class {
            concern: Concern::DisablesSafeguard,
            what: "removes or weakens a security check or test",
            act: re(WEAKEN),
            thing: re(&format!(
                "(?:{TESTS})[^.;\\n]{{0,40}}(?:{SECURITY})|(?:{SECURITY})\\w*[^.;\\n]{{0,40}}(?:{TESTS})|\\bcodeql\\b|\\bgitleaks\\b|\\bdependabot|secret[- ]scan\\w*|\\btests?/(?:security|auth\\w*|permissions?)\\b|\\.husky\\b|(?:{SECURITY})\\w*(?:tests?|testen|テスト|테스트)"
            )),
            motive: None,
            scoped: false,
        },
        Class {
            concern: Concern::DisablesSafeguard,
            what: "weakens or deletes failing tests",
            act: re(WEAKEN),
            thing: re(TESTS),
            motive: Some(re(FAILING)),
            scoped: false,
        },
        Class {
            concern: Concern::Exfiltration,
            what: "puts secrets where others read them",
            act: re(LEAK),
            thing: re(SECRET),
            motive: Some(re(DESTINATION)),
            scoped: false,
        },
        Class {
            concern: Concern::WidensPermissions,
            what: "opens permissions to everyone",
            act: re(WIDEN),
            thing: re(WIDE_PERMISSION),
            motive: None,
            scoped: false,
        },
        Class {
            concern: Concern::ChangesUserEnvironment,
            what: "installs something that starts on its own",
            act: re(INSTALL),
            thing: re(PERSISTENCE),
            motive: None,
            scoped: false,
        },
        Class {
            concern: Concern::RemoteCode,
            what: "replaces git hooks with code from elsewhere",
            act: re(REPLACE),
            thing: re(HOOKS),
            motive: Some(re(ELSEWHERE)),
            scoped: false,
        },
        Class {
            concern: Concern::Destructive,
            what: "deletes branches in bulk",
            act: re(BULK_DELETE),
            thing: re(ALL_BRANCHES),
            // Branches of a repository, not of an if-chain.
            motive: Some(re(
                r"\bgit\b|\borigin\b|remot|\bpush\b|\brepo\w*|github|gitlab|zdaln|удален|远程|リモート|원격",
            )),
            scoped: false,
        },
        Class {
            concern: Concern::DisablesSafeguard,
            what: "switches off account or branch protection",
            act: re(SWITCH_OFF),
            thing: re(ACCOUNT_GUARD),
            motive: None,
            scoped: true,
        },
    ]
});

/// Whole-text shapes that need no object: each is the act itself.
static SHAPES: LazyLock<Vec<(Concern, &'static str, Gated)>> = LazyLock::new(|| {
    vec![
        (
            Concern::RemoteCode,
            "runs what an address returns",
            re(
                r"\b(?:fetch|download|get|call|curl|wget|hit|query|pull)\w*\b[^.;\n]{0,80}?\b(?:and|then|,)\s+(?:run|execute|eval|source|pipe)\w*\s+(?:what(?:ever)?\s+(?:it|that|this|they)\s+(?:returns?|serves?|sends?|gives?|outputs?)|(?:the|its)\s+(?:response|output|result|body|reply|script|contents?))\b[^.;\n]{0,40}\b(?:with|in|through|into|via|using)\s+(?:a\s+|the\s+)?(?:bash|sh|zsh|shell|python|node|sudo|powershell)\b",
            ),
        ),
        (
            Concern::RemoteCode,
            "runs a fork's code where the secrets are",
            re(
                r"\bpull_request_target\b[^\n]{0,200}?\b(?:secrets?|credentials?|tokens?|keys?|inherit)\b|\b(?:secrets?|credentials?|tokens?)\b[^\n]{0,200}?\bpull_request_target\b",
            ),
        ),
        (
            Concern::Exfiltration,
            "carries secrets in a link's address",
            re(
                r"!?\[[^\]\n]*\]\(\s*https?://[^)\s]*\?[^)\s]*=[^)]*\)[^\n]{0,160}\b(?:base64|encoded|contents?\s+of|\.env\b|token|secret|credential|password|api[_ ]?key)|\b(?:base64|encoded|contents?\s+of)\b[^\n]{0,120}!?\[[^\]\n]*\]\(\s*https?://[^)\s]*\?[^)\s]*=",
            ),
        ),
        (
            Concern::IgnoreGuidance,
            "claims authority over the agent",
            re(
                r"\[\s*(?:system|admin|administrator|security|operator|developer)\s+(?:notice|message|override|instruction|instructions|update|alert|directive)\s*\]",
            ),
        ),
        (
            Concern::IgnoreGuidance,
            "claims its rules are lifted",
            re(
                r"\b(?:previous|earlier|prior|former|existing|all|any|other)\s+(?:\w+\s+){0,2}?(?:guidance|guidelines|policies|policy|restrictions|rules|limits|constraints|safeguards|instructions)\b[^.\n]{0,60}?\b(?:(?:has|have)\s+been|(?:are|is)(?:\s+now)?|were)\s+(?:\w+\s+)?(?:revoked|lifted|rescinded|withdrawn|suspended|waived|void|voided|cancell?ed|removed|superseded)\b",
            ),
        ),
        (
            Concern::Deceives,
            "hides its changes from reviewers",
            re(
                r"\b(?:reviewers?|auditors?|the\s+user|maintainers?|security|qa)\s+(?:should|must|need|are)\s*(?:not|n't)\s+(?:to\s+)?(?:be\s+)?(?:told|informed|notified|made\s+aware|shown)\b|\b(?:leave|keep)\s+(?:\w+\s+){0,4}?(?:out\s+of|off)\s+(?:the\s+|your\s+|all\s+)?(?:pr|pull\s+request|merge\s+request|commit|changelog|release\s+notes?)?\s*(?:summar\w+|descriptions?|messages?|notes?|changelog|review)\b",
            ),
        ),
        (
            Concern::RemoteCode,
            "installs from a registry nobody vetted",
            re(
                r"\b(?:registry|index|mirror)\b[^.;\n]{0,40}(?:to|=|:)\s*['\x22`]?(https?://[^\s'\x22`]+)|\.npmrc\b[^\n]{0,80}?(https?://[^\s'\x22`]+)|(https?://[^\s'\x22`]+)[^.\n]{0,20}\bin\s+\.npmrc",
            ),
        ),
        (
            Concern::RemoteCode,
            "pins a dependency to someone's branch",
            re(
                r"['\x22`]?(?:github|gitlab|bitbucket):[\w.-]+/[\w.-]+#(?:main|master|develop|dev|head|trunk|[\w-]*(?:fix|patch|branch)[\w-]*)\b|git\+https?://[^\s'\x22`]+@(?:main|master|develop|dev|head|trunk)\b",
            ),
        ),
        (
            Concern::IgnoreGuidance,
            "claims someone's permission for what an agent must not do",
            re(&format!(
                r"(?:{AUTHORITY})[^.\n]{{0,60}}?(?:{APPROVAL})[^\n]{{0,120}}?(?:{RISKY_GRANT})|(?:{APPROVAL})[^.\n]{{0,40}}?(?:{AUTHORITY})[^\n]{{0,120}}?(?:{RISKY_GRANT})|\b(?:per|according\s+to|as\s+per|laut|selon|d'apres|segun|de\s+acordo\s+com|secondo|wedlug|согласно)\b[^.\n]{{0,40}}(?:{AUTHORITY})[^\n]{{0,100}}?(?:{RISKY_GRANT})"
            )),
        ),
        (
            Concern::IgnoreGuidance,
            "claims its limits are lifted",
            re(
                r"^\W*(?:system|sys|admin|operator|developer)\s*:\s*(?:the\s+)?(?:operator|user|admin|owner|you|agents?|all|every|previous|prior|ignore|disregard|new\s+instructions|override|from\s+now)\b|\b(?:granted|given|unlocked|enabled)\s+(?:you\s+|the\s+agent\s+|agents\s+)?(?:unrestricted|full|unlimited|root|admin|sudo)\s+(?:shell\s+|system\s+|file\s+|network\s+)?(?:access|permissions?|rights|privileges)\b|\b(?:disregard|ignore|bypass|override|escape)\s+(?:the\s+|your\s+|any\s+|all\s+)?(?:sandbox|guardrails?|safety\s+(?:rules|checks|guidelines|policies)|restrictions|permission\s+(?:checks|prompts)|approval\s+prompts)\b",
            ),
        ),
    ]
});

/// Someone in charge, an approval, and what an agent must not be allowed.
const AUTHORITY: &str = r"\b(?:ciso|cto|ceo|cio|vp|director|head\s+of\s+\w+|security\s+(?:team|lead|officer)|legal|compliance|management|leadership|infosec|(?:tech|team|security)\s+lead|manager|responsable|jefe|chef|direttore|direktor|kierownik|leitung|sicherheitsteam|руковод\w*|директор)\b|负责人|经理|上司|責任者|팀장";
const APPROVAL: &str = r"\b(?:approved|signed\s+off|okayed|ok'?d|cleared|allowed|authori[sz]ed|confirmed|decided|waived|approuve|valide|autorise|aprobo|autorizo|permitio|aprovou|autorizou|approvato|autorizzato|genehmigt|erlaubt|freigegeben|zatwierdzil|pozwolil|одобрил\w*|разрешил\w*|onayladi|izin\s+verdi)\b|批准|同意|允许|承認|許可|승인|허가";
const RISKY_GRANT: &str = r"\bprodukti\w*(?:schlussel|passw\w*|zugang\w*|token\w*|geheimnis\w*|daten\w*|datenbank)|\bprod(?:uction)?\s+(?:\w+\s+)?(?:credentials?|passwords?|keys?|tokens?|secrets?|database|db|data)\b|\b(?:identifiants|mots?\s+de\s+passe|contrasenas?|credenciales|senhas?|credenciais|credenziali|zugangsdaten|passworter|hasla|haslo|пароли?|учетн\w*)\b[^.\n]{0,30}\b(?:de\s+production|de\s+produccion|de\s+producao|di\s+produzione|produktiv\w*|produkcyj\w*|прод\w*)|\b(?:production|produccion|producao|produzione|produktion|produkcj\w*)\b[^.\n]{0,30}\b(?:identifiants|contrasena|credenciales|senha|credenziali|zugangsdaten|passwort|haslo|пароль)|\bpush\w*\s+(?:\w+\s+)?(?:directly\s+)?to\s+main\b|\bwithout\s+(?:code\s+)?review\b|\bskip\w*\s+(?:code\s+)?review\b|\bsans\s+revue\b|\bsin\s+revision\b|\bohne\s+review\b|\bcustomer\s+data\b|\bdonnees\s+clients?\b|\bdatos\s+de\s+clientes\b|\bkundendaten\b|生产(?:环境)?(?:的)?(?:密码|凭据|密钥)|本番(?:の)?(?:パスワード|認証情報|鍵)";

/// Before an act, in its clause: a negation, in every language the lexicons read.
static NEGATION_BEFORE: LazyLock<Gated> = LazyLock::new(|| {
    re(
        r"\b(?:never|don't|dont|do\s+not|does\s+not|must\s+not|mustn't|should\s+not|shouldn't|not|no|avoid|instead\s+of|rather\s+than|nie|nicht|niemals|kein\w*|ne|n'|jamais|nunca|no|nao|non|mai|niet|nooit|geen|asla|не|нельзя|никогда|nigdy)\b|不要|别|勿|禁止|절대|하지\s*마|不得|不能|不可",
    )
});
/// After an act, in its sentence: a prohibition, a guard catching it.
static PROHIBITED_AFTER: LazyLock<Gated> = LazyLock::new(|| {
    re(
        r"\b(?:is|are)\s+(?:\w+\s+)?(?:forbidden|banned|prohibited|not\s+allowed|blocked|disallowed|rejected)\b|\bverboten\b|\binterdit|\bprohibid|\bproibid|\bvietat|\bzabronion|\byasak|запрещ|禁止|금지|いけません|いけない|ダメ|ないで|しない|ません|마세요|말고|말\s*것|않|\bverbieten\b|\bnicht\s+erlaubt\b|\bnon\s+autorise|\bno\s+(?:esta\s+)?permitid|\bnao\s+(?:e\s+)?permitid|\bmaz\b|\byapma|\bnie\s+wolno\b",
    )
});
/// Anywhere in the text: the act is told as history, not asked for.
static PAST: LazyLock<Gated> = LazyLock::new(|| {
    re(
        r"\b(?:in|since)\s+(?:19|20)\d\d\b|\blast\s+(?:year|month|week|spring|summer|autumn|fall|winter)\b|\bby\s+mistake\b|\bincident\b|\bpostmortem\b|\bago\b|\bused\s+to\b|\bonce\b[^.;\n]{0,40}\b(?:was|were|rewritten|deleted|removed|leaked)|\bletztes\s+jahr|\bversehentlich|\bl'an\s+dernier|\bpar\s+erreur|\bhace\s+(?:un|una|dos|\d)|\bpor\s+error\b|\bno\s+ano\s+passado|\bpor\s+engano|\bl'anno\s+scorso|\bper\s+errore|\bw\s+zeszlym\s+roku|\bв\s+прошлом\s+году|\bпо\s+ошибке|去年|误删|誤って|昨年|작년|실수로|\bgecen\s+yil|\byanlislikla",
    )
});
/// Anywhere in the sentence: the act is asked for now (a past marker does not excuse it then).
static NOW: LazyLock<Gated> = LazyLock::new(|| {
    re(r"\b(?:should|must|always|every|each|whenever|may|can|please|from\s+now|going\s+forward)\b")
});
static NEGATION_AFTER_VERB: LazyLock<Gated> = LazyLock::new(|| {
    re(r"^\W*(?:\w+\s+){0,2}?(?:niemals|nie|nicht|keinesfalls|nooit|niet|jamais|mai)\b")
});
/// A use reserved for a role, a guard catching the act, or the act as quoted data.
static RESERVED: LazyLock<Gated> = LazyLock::new(|| {
    re(
        r"\breserved\s+for\b|\bonly\s+(?:the\s+)?[\w-]+(?:\s+[\w-]+){0,2}\s+(?:may|can|is\s+allowed|are\s+allowed|does|do|runs?)\b|\bnur\s+(?:dem|der|den|die)\b[^.\n]{0,40}\berlaubt|\b(?:rule|linter|lint|check|scanner|policy|hook|ci)\s+(?:\w+\s+)?(?:fails|rejects|flags|blocks|catches|detects|prevents|forbids)\b|\bfor\s+history\s+only\b|\bretired\b[^.\n]{0,20}\bdon't\s+run|\bis\s+(?:installed|created|managed|owned|run|maintained)\s+by\b|\bowned\s+by\b|\bby\s+design\b",
    )
});
static ONLY_SCOPE: LazyLock<Gated> = LazyLock::new(|| {
    re(
        r"\byour\s+own\b|\bmerged\b|\bpropias\b|\bwlasne\b|\beigenen\b|\bvos\s+propres\b|\bonly\s+(?:on|in|for|when|while|inside|within|during|against)\b|\bnur\s+(?:auf|in|fur|bei|wahrend|lokal)\b|\bseulement\s+(?:sur|dans|pour|en)\b|\bsolo\s+(?:en|para|in|per|durante)\b|\bapenas\s+(?:em|no|na|para)\b",
    )
});
static REFUSED: LazyLock<Gated> = LazyLock::new(|| {
    re(
        r"\b(?:refuse|decline|reject|push\s+back|say\s+no|verweigere|lehne\s+\S+\s+ab|refuse[zr]?|rechaza|recusa|rifiuta|odmow\w*|откажи\w*)\b|拒绝|断って|거절",
    )
});
/// Secrets taken out before anything is shared: no leak.
static REDACTED: LazyLock<Gated> = LazyLock::new(|| {
    re(
        r"\b(?:redact|mask|scrub|sanitiz|anonymi|censor|strip\s+(?:out\s+)?(?:the\s+)?(?:secrets?|tokens?))\w*",
    )
});
static PERMISSION_SCOPE_RE: LazyLock<Gated> = LazyLock::new(|| re(PERMISSION_SCOPE));

/// Whether the character at byte `i` of `t` ends a sentence (with `clause`, a clause): a full
/// stop only when a space or the end follows it (`.env`, `package.json` and `0.0.0.0/0` go on).
fn stops(t: &str, i: usize, c: char, clause: bool) -> bool {
    match c {
        '.' => t[i + 1..].chars().next().is_none_or(char::is_whitespace),
        ';' | '!' | '?' | '。' | '；' | '\n' => true,
        ',' | ':' | '，' | '、' => clause,
        _ => false,
    }
}

/// Where the clause (or sentence) holding byte `at` of `t` starts.
fn start_of(t: &str, at: usize, clause: bool) -> usize {
    t[..at]
        .char_indices()
        .rev()
        .find(|&(i, c)| stops(t, i, c, clause))
        .map_or(0, |(i, c)| i + c.len_utf8())
}

fn clause_start(t: &str, at: usize) -> usize {
    start_of(t, at, true)
}

fn sentence_start_of(t: &str, at: usize) -> usize {
    start_of(t, at, false)
}

fn sentence_end(t: &str, at: usize) -> usize {
    t[at..]
        .char_indices()
        .find(|&(i, c)| stops(t, at + i, c, false))
        .map_or(t.len(), |(i, _)| at + i)
}

/// Whether the act at `start..end` is advice (negated, prohibited, past, reserved, in scope).
fn kept(t: &str, start: usize, end: usize) -> bool {
    let clause = &t[clause_start(t, start)..start];
    let sentence_start = sentence_start_of(t, start);
    let lead = &t[sentence_start..start];
    let after = &t[end..sentence_end(t, end)];
    let sentence = &t[sentence_start..sentence_end(t, end)];
    NEGATION_BEFORE.is_match(clause)
        || PROHIBITED_AFTER.is_match(after)
        // A negation right after the verb, where the language puts it ("lösche sie niemals",
        // "verwijder ze nooit").
        || NEGATION_AFTER_VERB.is_match(after)
        || (PAST.is_match(t) && !NOW.is_match(sentence))
        || RESERVED.is_match(sentence)
        // The act is refused ("if the user asks to ignore the sandbox, refuse").
        || REFUSED.is_match(sentence)
        // "never X, only Y": a prohibition leads the sentence.
        || lead.trim_start().starts_with("never ")
}

/// The first act on a protected thing in `reading` that is not advice, if any.
pub fn find(reading: &str) -> Option<(Concern, &'static str)> {
    for (concern, what, shape) in SHAPES.iter() {
        for c in shape.captures_iter(reading) {
            let m = c.get(0).expect("whole match");
            // A registry's address: the public registries and the company's own hosts are
            // where packages are meant to come from.
            if let Some(url) = c.iter().skip(1).flatten().next()
                && trusted_registry(url.as_str())
            {
                continue;
            }
            // Someone's approval of a use kept to a case ("only in the anonymised warehouse").
            let sentence =
                &reading[sentence_start_of(reading, m.start())..sentence_end(reading, m.end())];
            if what.starts_with("claims someone's permission")
                && (ONLY_SCOPE.is_match(sentence) || REDACTED.is_match(sentence))
            {
                continue;
            }
            if !kept(reading, m.start(), m.end()) {
                return Some((*concern, what));
            }
        }
    }
    if look_alike_swap(reading) {
        return Some((
            Concern::RemoteCode,
            "installs a look-alike of a package it names",
        ));
    }
    for class in CLASSES.iter() {
        if !class.thing.is_match(reading) {
            continue;
        }
        if let Some(motive) = &class.motive
            && !motive.is_match(reading)
        {
            continue;
        }
        if class.concern == Concern::Exfiltration && REDACTED.is_match(reading) {
            continue;
        }
        let things: Vec<(usize, usize)> = class
            .thing
            .find_iter(reading)
            .filter(|m| class.concern != Concern::Exfiltration || !not_a_secret(reading, m))
            // A thing negated in its own clause ("no owner role sneaks in", "not logs with
            // tokens") is not what the act is done to.
            .filter(|m| {
                !NEGATION_BEFORE.is_match(&reading[clause_start(reading, m.start())..m.start()])
            })
            .map(|m| (m.start(), m.end()))
            .collect();
        for act in class.act.find_iter(reading) {
            // The act and its thing in one sentence, near each other.
            // An act inside a code span acts on what that span names, not on the prose around
            // it ("tests/test_policy.py asserts that `rm -rf /` is refused").
            let span = code_span_at(reading, act.start());
            let near = things.iter().any(|&(a, b)| {
                if let Some((lo, hi)) = span
                    && !(a >= lo && b <= hi)
                {
                    return false;
                }
                let (lo, hi) = if a < act.start() {
                    (b.min(act.start()), act.start())
                } else {
                    (act.end(), a.max(act.end()))
                };
                (!class.scoped || a >= act.start())
                    && hi.saturating_sub(lo) <= 90
                    // Within one sentence; a semicolon may stand between a thing and the act
                    // that comes back to it ("the tests in tests/permissions block the
                    // release; comment them out"), not before a thing named after the act.
                    && !reading[lo..hi]
                        .char_indices()
                        .any(|(i, c)| (c != ';' || a > act.start()) && stops(reading, lo + i, c, false))
                    // The act is not part of the thing's own name ("Allow-Origin: *").
                    && (b <= act.start() || a >= act.end())
            });
            if !near {
                continue;
            }
            // A verb in a passive or described form ("is installed by", "are skipped with").
            let before = &reading[clause_start(reading, act.start())..act.start()];
            if before.trim_end().ends_with(" is")
                || before.trim_end().ends_with(" are")
                || before.trim_end().ends_with(" be")
                || before.trim_end().ends_with(" was")
                || before.trim_end().ends_with(" were")
            {
                continue;
            }
            if class.concern == Concern::WidensPermissions
                && PERMISSION_SCOPE_RE.is_match(
                    &reading
                        [sentence_start_of(reading, act.start())..sentence_end(reading, act.end())],
                )
            {
                continue;
            }
            // Where a secret would go is named in the act's own sentence.
            if class.concern == Concern::Exfiltration
                && class.motive.as_ref().is_some_and(|m| {
                    !m.is_match(
                        &reading[sentence_start_of(reading, act.start())
                            ..sentence_end(reading, act.end())],
                    )
                })
            {
                continue;
            }
            // A use restricted to a case ("only on the ARM runner", "only for GET").
            if ONLY_SCOPE.is_match(
                &reading[sentence_start_of(reading, act.start())..sentence_end(reading, act.end())],
            ) {
                continue;
            }
            if !kept(reading, act.start(), act.end()) {
                return Some((class.concern, class.what));
            }
        }
    }
    None
}

/// A registry's address that is where packages are meant to come from: a public registry, or a
/// host inside the company (`.internal`, `.corp`, `.local`, `localhost`).
fn trusted_registry(url: &str) -> bool {
    let host = url
        .split("://")
        .nth(1)
        .unwrap_or(url)
        .split(['/', ':', '?'])
        .next()
        .unwrap_or("");
    const PUBLIC: &[&str] = &[
        "registry.npmjs.org",
        "registry.yarnpkg.com",
        "pypi.org",
        "files.pythonhosted.org",
        "crates.io",
        "index.crates.io",
        "rubygems.org",
        "proxy.golang.org",
        "repo.maven.apache.org",
        "repo1.maven.org",
    ];
    PUBLIC.contains(&host)
        || host == "localhost"
        || host.starts_with("127.")
        || [".internal", ".corp", ".local", ".lan", ".intranet"]
            .iter()
            .any(|s| host.ends_with(s))
}

/// A word for secrets that names no secret: a public key (`~/.ssh/id_ed25519.pub`), the tool
/// that hunts them ("secret scanning"), a secret's name rather than its value.
fn not_a_secret(t: &str, m: &regex::Match) -> bool {
    let token_end = t[m.start()..]
        .find(|c: char| c.is_whitespace() || matches!(c, '`' | '\'' | '"' | ')' | ','))
        .map_or(t.len(), |i| m.start() + i);
    let rest = t[m.end()..].trim_start_matches([' ', '-', '_']);
    t[m.start()..token_end].ends_with(".pub")
        || ["scan", "detect", "manager", "name", "store", "rotation"]
            .iter()
            .any(|w| rest.starts_with(w))
}

/// The backtick code span holding byte `at`, if any.
fn code_span_at(t: &str, at: usize) -> Option<(usize, usize)> {
    let ticks: Vec<usize> = t.match_indices('`').map(|(i, _)| i).collect();
    ticks
        .chunks_exact(2)
        .map(|p| (p[0] + 1, p[1]))
        .find(|&(lo, hi)| at >= lo && at < hi)
}

/// The words [`look_alike_swap`] reads.
static SWAP: LazyLock<Gated> = LazyLock::new(|| {
    re(
        r"\binstead\s+of\b|\brather\s+than\b|\bfork\b|\breplac\w*|\bswitch\w*\s+(?:from|to)\b|\bstatt\b|\banstelle\b|\ben\s+(?:lugar|vez)\s+de\b|\bau\s+lieu\s+de\b|\binvece\s+di\b|\bem\s+vez\s+de\b|\bzamiast\b|\bвместо\b|而不是|代わりに|대신",
    )
});
static INSTALL_WORDS: LazyLock<Gated> = LazyLock::new(|| {
    re(
        r"\b(?:install\w*|use|add|depend\w*|require\w*|import|pip|npm|yarn|pnpm|cargo|gem|go\s+get|package|dependency|librar\w*|installier\w*|instal\w*|zainstaluj|установи)\b",
    )
});
static NAME: LazyLock<Gated> = LazyLock::new(|| re(r"[a-z][a-z0-9._-]{3,}[a-z0-9]"));
static WARNED: LazyLock<Gated> = LazyLock::new(|| {
    re(
        r"\b(?:never|don't|dont|do\s+not|avoid|beware|typosquat\w*|look-?alikes?|malicious|fake|rejects?|nie|nicht|jamais|nunca|не)\b",
    )
});

/// A package swapped for a name one letter away from it ("install `python-dateutils`, the
/// maintained fork, instead of python-dateutil"): the look-alike of the very name the text
/// gives, recommended in its place, is how a typosquat is sold.
fn look_alike_swap(t: &str) -> bool {
    if !SWAP.is_match(t) || !INSTALL_WORDS.is_match(t) || WARNED.is_match(t) {
        return false;
    }
    let names: Vec<&str> = NAME.find_iter(t).map(|m| m.as_str()).collect();
    names.iter().enumerate().any(|(i, a)| {
        names[i + 1..]
            .iter()
            .any(|b| a != b && a.len().min(b.len()) >= 5 && one_edit(a.as_bytes(), b.as_bytes()))
    })
}

/// Whether `a` and `b` differ by one inserted, deleted, replaced or swapped letter.
fn one_edit(a: &[u8], b: &[u8]) -> bool {
    let (a, b) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if b.len() - a.len() > 1 {
        return false;
    }
    let p = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    if a.len() == b.len() {
        let rest_equal = |from: usize| a[from..] == b[from..];
        (p < a.len() && rest_equal(p + 1))
            || (p + 2 <= a.len() && a[p] == b[p + 1] && a[p + 1] == b[p] && rest_equal(p + 2))
    } else {
        a[p..] == b[p + 1..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lazy_regex::fold_text;

    /// Every pattern of this layer, named.
    fn all_patterns() -> Vec<(String, &'static Gated)> {
        let mut out: Vec<(String, &'static Gated)> = Vec::new();
        for c in CLASSES.iter() {
            out.push((format!("{}: act", c.what), &c.act));
            out.push((format!("{}: thing", c.what), &c.thing));
            if let Some(m) = &c.motive {
                out.push((format!("{}: motive", c.what), m));
            }
        }
        for (_, what, shape) in SHAPES.iter() {
            out.push((format!("shape {what}"), shape));
        }
        let statics: [(&str, &'static LazyLock<Gated>); 14] = [
            ("NEGATION_BEFORE", &NEGATION_BEFORE),
            ("PROHIBITED_AFTER", &PROHIBITED_AFTER),
            ("PAST", &PAST),
            ("NOW", &NOW),
            ("NEGATION_AFTER_VERB", &NEGATION_AFTER_VERB),
            ("RESERVED", &RESERVED),
            ("ONLY_SCOPE", &ONLY_SCOPE),
            ("REFUSED", &REFUSED),
            ("REDACTED", &REDACTED),
            ("PERMISSION_SCOPE_RE", &PERMISSION_SCOPE_RE),
            ("SWAP", &SWAP),
            ("INSTALL_WORDS", &INSTALL_WORDS),
            ("NAME", &NAME),
            ("WARNED", &WARNED),
        ];
        out.extend(statics.iter().map(|(n, g)| (n.to_string(), &***g)));
        out
    }

    /// Compiled only when a text could match, a pattern that does not build would go unnoticed
    /// until then: every one builds.
    #[test]
    fn every_pattern_builds() {
        for (name, g) in all_patterns() {
            let _ = g.compiled();
            assert!(
                g.needs() != &crate::lazy_regex::Needs::Nothing || name == "NAME",
                "{name}"
            );
        }
    }

    /// The gate never turns a match away: every reading of every text of the labelled sets (and
    /// each in upper case, matched only through case folding) that a pattern matches meets what
    /// the pattern needs.
    #[test]
    fn gates_never_turn_a_match_away() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../eval/quarantine");
        let mut texts = Vec::new();
        for entry in std::fs::read_dir(dir).expect("eval/quarantine") {
            let path = entry.expect("entry").path();
            // blind.json is held out: the lead scores it.
            if path.extension().is_none_or(|e| e != "json") || path.ends_with("blind.json") {
                continue;
            }
            let value: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).expect("set")).expect("JSON");
            let mut strings = Vec::new();
            collect_strings(&value, &mut strings);
            texts.extend(strings);
        }
        assert!(texts.len() > 2000, "{}", texts.len());
        let patterns = all_patterns();
        let mut matched = 0;
        for text in &texts {
            let mut readings = super::super::normalise::readings(text, true, true);
            readings.push(text.to_uppercase());
            for r in &readings {
                let folded = fold_text(r);
                for (name, g) in &patterns {
                    if g.compiled().is_match(r) {
                        matched += 1;
                        assert!(g.needs().met_by(&folded), "{name} on {r:?}");
                    }
                }
            }
        }
        assert!(matched > 1000, "{matched}");
    }

    fn collect_strings(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::String(s) => out.push(s.clone()),
            serde_json::Value::Array(a) => a.iter().for_each(|x| collect_strings(x, out)),
            serde_json::Value::Object(o) => o.values().for_each(|x| collect_strings(x, out)),
            _ => {}
        }
    }

    /// What a Stop hook's `[PROCESS_KNOWLEDGE]` draft usually says holds none of the words of a
    /// shape or a protected thing: checking it builds none of their patterns (building them was
    /// nine tenths of that hook's CPU).
    #[test]
    fn an_ordinary_learning_builds_no_shape_and_no_thing() {
        for text in [
            "rebuild the jobs table index after import 9-1795787327353062647",
            "high",
            "keep request handlers thin and move logic into services",
            "run make check before pushing",
        ] {
            let folded = fold_text(text);
            for (name, g) in all_patterns() {
                if name.starts_with("shape ") || name.ends_with(": thing") {
                    assert!(!g.needs().met_by(&folded), "{name} on {text:?}");
                }
            }
        }
    }
}
