//! Multilingual word lists for the action model: verbs, objects and the words that turn an
//! instruction into a prohibition, in English, German, French, Spanish, Chinese, Russian,
//! Japanese, Portuguese and Italian.
//!
//! Entries are written as a person types them and normalised like the text they are matched
//! against (lower case, accents dropped). A plain entry matches at the start of a word and may
//! run on (`lösch` matches `löschen`, `lösche`); `=word` must be the whole word; `~part` may
//! sit anywhere (German compounds); entries in Chinese or Japanese match anywhere. In each
//! list the English entries come first; `|` marks where the other languages begin (so the
//! multilingual layer can be measured on its own).

/// What a word means to the action model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Concept {
    /// A negation before the act: "never", "nicht", "不要".
    Neg,
    /// A prohibition after the act: "is forbidden", "ist verboten", "禁止".
    Prohibited,
    /// A word after which an earlier negation no longer applies: "but", "just", "then".
    Reset,
    /// A verb that a negation turns into an instruction: "don't forget to", "never skip".
    Flip,
    Ignore,
    Instructions,
    Prior,
    Send,
    Disclose,
    Secret,
    Report,
    Delete,
    Home,
    Everything,
    Repository,
    Production,
    Disable,
    Safeguard,
    ReviewSafeguard,
    TestSafeguard,
    Download,
    Execute,
    Shell,
    Push,
    Main,
    Directly,
    Without,
    Review,
    SessionData,
    Picture,
    Redact,
    /// A verb that shows what it is given: printing, logging, echoing.
    Reveal,
    Failing,
    Always,
    Persona,
    User,
    Conceal,
}

use Concept::*;

/// The lexicon: each concept with its words in every language.
#[rustfmt::skip]
pub const LEXICON: &[(Concept, &[&str])] = &[
    (
        Neg,
        &[
            "=never", "=don't", "=dont", "=do not", "=does not", "=doesn't", "=must not",
            "=mustn't", "=should not", "=shouldn't", "=cannot", "=can't", "=won't", "=will not",
            "=not", "=avoid", "=avoiding", "=instead of", "=rather than", "=refrain from",
            "=stop", "=nobody", "=no one", "=nothing", "=none", "=forbid", "=forbids",
            "=prohibit", "=prohibits", "=prevent", "=prevents", "=block", "=blocks", "=reject",
            "=rejects", "=refuse", "=refuses", "=flags", "=catches", "=ban",
            "=bans", "=disallow", "=disallows", "=guard against", "=guards against",
            "=warn about", "=warns about", "=warns against", "=in place of", "=is not allowed to",
            "=not allowed to", "=no longer", "=removed", "=got rid of", "=dropped",
            "=stopped using", "=reverted", "=fails the", "=fails any", "=fails on", "=errors on", "=warns on", "=complains about", "=refuses to", "|", "=nie", "=niemals", "=nicht", "=kein", "=keine",
            "=keinen", "=keinesfalls", "vermeide", "blockiert", "verhindert", "verbietet", "=statt", "=anstatt", "=anstelle", "=ne",
            "=n'", "=jamais", "=pas", "=aucun", "=aucune", "evitez", "=evite", "=eviter",
            "=au lieu de", "=plutot que", "bloque", "empeche", "=interdit", "rejette", "=no", "=nunca", "=jamas", "=evita", "=evitar",
            "=en lugar de", "=en vez de", "bloquea", "impide", "prohibe", "rechaza", "=ningun", "=ninguna", "不要", "不得", "不能", "不可", "禁止",
            "别", "切勿", "严禁", "绝不", "避免", "勿", "不准", "不许", "不应", "而不是", "从不", "阻止", "拦截", "拒绝", "=не", "=нельзя",
            "=никогда", "избега", "=вместо", "блокиру", "запрещает", "=не дает", "=ни в коем случае", "決して", "=nao", "=evite",
            "=em vez de", "bloqueia", "impede", "proibe", "rejeita", "=ao inves de", "=non", "=mai", "=evitare", "=invece di", "blocca", "impedisc", "=vieta", "rifiuta", "=anziche",
        ],
    ),
    (
        Prohibited,
        &[
            "=is not allowed", "=are not allowed", "=is forbidden", "=are forbidden",
            "=is banned", "=are banned", "=is prohibited", "=are prohibited", "=is blocked",
            "=are blocked", "=is rejected", "=are rejected", "=gets rejected", "=get rejected",
            "=is disabled", "=are disabled", "=is deprecated", "=is not permitted",
            "=is never ok", "=is never acceptable", "=is a bad idea", "=is dangerous",
            "=is unsafe", "=is disallowed", "=will be rejected", "=fails review", "=fail review",
            "=is caught by", "=is flagged", "=are flagged", "=is not ok", "=are never",
            "=is never", "|", "=ist verboten", "=sind verboten", "=nicht erlaubt", "=untersagt",
            "=est interdit", "=sont interdits", "=n'est pas autorise", "=est bloque",
            "=esta prohibido", "=estan prohibidos", "=no esta permitido", "=esta bloqueado",
            "被禁止", "是禁止", "不允许", "会被拒绝", "=запрещено", "=запрещен", "=не допускается",
            "=блокируется", "禁止", "ないで", "ないこと", "いけません", "だめ", "しない", "使わない", "=e proibido",
            "=nao e permitido", "=e vietato", "=non e consentito",
        ],
    ),
    (
        Reset,
        &[
            "=but", "=however", "=just", "=simply", "=then", "=and then", "=so", "|", "=aber",
            "=sondern", "=mais", "=pero", "=sino", "但是", "而是", "然后", "=но", "=a затем", "しかし",
            "=mas", "=ma",
        ],
    ),
    (
        Flip,
        &[
            "=forget", "=skip", "=omit", "=neglect", "=fail to", "=hesitate", "=be afraid to",
            "=miss", "|", "vergiss", "vergessen", "oubli", "olvid", "忘记", "忘了", "забу", "忘れ",
            "esquec", "esqueç", "dimentic",
        ],
    ),
    (
        Ignore,
        &[
            "ignor", "disregard", "=forget", "=override", "=overrides", "=discard", "=drop",
            "=bypass", "=set aside", "=throw out", "|", "vergiss", "missacht", "ubergeh", "oubli",
            "olvid", "忽略", "无视", "忘记", "不要理会", "игнориру", "забудь", "забыть", "無視", "忘れ",
            "esqueca", "desconsider", "dimentica",
        ],
    ),
    (
        Instructions,
        &[
            "instruction", "=rules", "=guidance", "guideline", "directive", "=directions",
            "=prompt", "=prompts", "=system prompt", "constraint", "restriction", "=policies",
            "=safety rules", "=orders", "=programming", "=rule", "|", "anweisung", "=regeln", "vorgabe",
            "richtlinie", "consigne", "=regles", "instruccion", "=reglas", "indicacion",
            "directriz", "directrices", "指令", "指示", "规则", "说明", "инструкци", "указани", "правил",
            "ルール", "命令", "instruc", "=regras", "diretriz", "istruzion", "=regole", "direttiv",
            "instruktion", "=befehle", "=requisitos", "要求", "требовани", "=diretrizes",
        ],
    ),
    (
        Prior,
        &[
            "=previous", "=prior", "=above", "=earlier", "=preceding", "=all", "=any",
            "=existing", "=original", "=system", "=your", "=safety", "=other", "|", "vorherig",
            "bisherig", "=obigen", "=alle", "=allen", "precedent", "anterieur", "=toutes",
            "=tous", "ci-dessus", "anterior", "previa", "previo", "=todas", "=todos", "之前", "以上",
            "所有", "先前", "上面", "предыдущ", "прежн", "=все", "=всех", "=выше", "以前", "これまで", "上記",
            "すべて", "=anteriores", "precedenti", "=tutte",
        ],
    ),
    (
        Send,
        &[
            "=send", "=sends", "=sending", "=post", "=posts", "=upload", "=uploads", "exfiltrat",
            "=leak", "=forward", "=email", "=e-mail", "=mail", "=transmit", "=share", "=publish",
            "=beam", "=ship", "|", "=sende", "=senden", "=schick", "schicke", "ubermittl",
            "hochlad", "=lade", "envoi", "envoy", "transmet", "=publie", "=envia", "=enviar",
            "=manda", "=sube", "=subir", "发送", "上传", "发给", "发到", "传到", "提交到", "отправ", "пошли",
            "перешли", "загрузи на", "送信", "送って", "アップロード", "=envie", "=mande", "=carregue",
            "=invia", "=inviare", "=carica",
            "=schicke", "=schicken", "ubertrag", "=poste", "=teile", "transmettez", "=publiez", "=partage", "=partagez", "televers", "=postez", "=publica", "=comparte", "=enviale", "分享", "推送到", "выложи", "опубликуй", "=отправьте", "共有", "=publique", "=compartilhe", "=pubblica", "=condividi",
        ],
    ),
    (
        Disclose,
        &[
            "=include", "=includes", "=paste", "=print", "=echo", "=dump", "=log", "=attach",
            "=append", "=add", "=put", "=copy", "=write", "=output", "=show", "=display", "=cat",
            "=embed", "=commit", "=expose", "=reveal", "=repeat", "=insert", "=mention",
            "=mentions", "=quote", "=share", "=start", "=begin", "=end", "=finish", "=close", "=open", "=fill", "|", "fug", "einfug", "ausgeb", "anhang", "inclu",
            "=colle", "=collez", "affich", "ajout", "=joins", "=joignez", "incluy", "=pega",
            "=imprime", "=muestra", "adjunt", "anad", "包含", "粘贴", "打印", "输出", "附上", "加入", "放进",
            "写入", "включи", "вставь", "выведи", "распечата", "приложи", "добав", "含め", "貼り付け",
            "出力", "表示", "添付", "追加", "=inclua", "=cole", "=imprima", "=anexe", "adicion",
            "=includi", "=incolla", "=stampa", "=allega", "aggiung", "贴到", "贴进", "贴在",
            "=copia", "=copie", "=copiez", "kopier", "复制", "скопируй", "コピー", "=copiare",
        ],
    ),
    (
        Secret,
        &[
            "=secret", "=secrets", "=secret value", "=secret values", "=credentials",
            "=credential", "=password", "=passwords", "=api key", "=api keys", "=api-key",
            "=token", "=tokens", "=access token", "=private key", "=private keys", "=ssh key",
            "=ssh keys", "=ssh private key", "=ssh private keys", "=session cookie",
            "=session cookies", "=cookies", "=environment variables", "=env vars", "=env dump",
            "=env dumps", "=keychain", "=keyring", "|", "schlussel", "passwort", "zugangsdaten",
            "geheimnis", "umgebungsvariable", "=cles", "=cle ssh", "=mot de passe",
            "=mots de passe", "identifiant", "=variables d'environnement", "=claves", "=clave",
            "contrasena", "credencial", "secreto", "=variables de entorno", "密钥", "密码", "凭证",
            "凭据", "令牌", "环境变量", "私钥", "ключ", "парол", "учетн", "учётн", "секрет", "токен",
            "переменные окружения", "鍵", "パスワード", "認証情報", "トークン", "環境変数", "秘密鍵", "=chaves",
            "=senha", "=senhas", "credenciais", "segredo", "variaveis de ambiente", "=chiavi",
            "credenzial", "=segreti", "variabili d'ambiente",
            "anmeldedaten", "=jetons", "证书", "=токены", "=ключи", "=пароли",
        ],
    ),
    (
        Report,
        &[
            "=report", "=reports", "=summary", "=final message", "=final answer", "=reply",
            "=response", "=pr description", "=pr descriptions", "=pull request",
            "=pull request description", "=issue", "=issues", "=comment", "=comments",
            "=commit message", "=job log", "=build log", "=the log", "=logs", "=readme",
            "=changelog", "=chat", "=output", "=task summary", "=description", "=pr", "=the pr",
            "=pr body", "=pr bodies", "=pull request body", "=ticket", "=tickets", "=wiki",
            "=slack", "=channel", "=gist", "=email", "=notes", "=release notes", "|", "~bericht",
            "~zusammenfassung", "=ausgabe", "=rapport", "=resume", "=sortie", "=informe",
            "=resumen", "=salida", "报告", "总结", "日志", "отчет", "отчёт", "=итог", "=вывод", "=лог",
            "レポート", "報告", "ログ", "relatorio", "=resumo", "=saida", "rapporto", "riepilogo", "描述",
            "=protokoll", "=compte rendu", "=reporte", "=итоговый отчет",
        ],
    ),
    (
        Delete,
        &[
            "=delete", "=deletes", "=deleted", "=deleting", "=remove", "=removed", "=wipe",
            "=wiped", "=erase", "=destroy", "=purge", "=nuke", "=format", "=trash", "=drop",
            "=truncate", "=empty", "=clear out", "|", "losch", "entfern", "supprim", "effac",
            "=borra", "=borrar", "=elimina", "=eliminar", "删除", "清空", "移除", "删掉", "удали",
            "удалить", "сотри", "очисти", "снеси", "削除", "消去", "=apague", "=apagar", "=exclua",
            "=excluir", "=cancella", "=cancellare",
            "vernicht", "=leere", "detrui", "=vide", "=videz", "=suprime", "vacia", "清除", "抹掉", "уничтож", "消して", "=remova", "=rimuovi", "=svuota",
        ],
    ),
    (
        Home,
        &[
            "=home directory", "=home folder", "=home dir", "=user's files", "=user directory",
            "=the user's home", "=entire home", "|", "home-verzeichnis", "=heimverzeichnis",
            "benutzerverzeichnis", "=repertoire personnel", "=dossier personnel",
            "=directorio personal", "=carpeta personal", "=directorio home", "主目录", "家目录", "用户目录",
            "домашн", "ホームディレクトリ", "=diretorio pessoal", "=pasta pessoal", "=directory home",
            "=cartella home",
        ],
    ),
    (
        Everything,
        &[
            "=everything", "=all files", "=every file", "=the whole disk", "=the entire disk",
            "=the filesystem", "=the root filesystem", "|", "=alles", "=alle dateien", "=tout",
            "=tous les fichiers", "=todo", "=todos los archivos", "所有文件", "全部文件", "=все файлы",
            "すべてのファイル", "=todos os arquivos", "=tutti i file",
        ],
    ),
    (
        Repository,
        &[
            "=the repository", "=the repo", "=git history", "=the .git folder",
            "=the .git directory", "=.git", "|", "=das repository", "=le depot",
            "=el repositorio", "仓库", "репозитори", "リポジトリ", "=o repositorio", "=il repository",
        ],
    ),
    (
        Production,
        &[
            "=production database", "=production db", "=prod database", "=prod db",
            "=production data", "=on prod", "=on production", "=in production",
            "=the live database", "=customer data", "=users table", "=production", "=prod", "|",
            "produktionsdatenbank", "=base de production", "=base de datos de produccion",
            "生产数据库", "生产环境", "продакшен", "боев", "本番", "=banco de producao",
            "=database di produzione",
        ],
    ),
    (
        Disable,
        &[
            "=disable", "=disables", "=disabling", "=turn off", "=switch off", "=deactivate",
            "=bypass", "=bypassing", "=circumvent", "=get around", "=get past", "=skip",
            "=skipping", "=suppress", "=silence", "=short-circuit", "=neuter", "=comment out",
            "=uninstall", "=kill", "=dodge", "=work around", "=skipped", "=disabled", "|",
            "deaktivier", "abschalt", "umgeh", "uberspring", "ausschalt", "desactiv", "contourn",
            "=saute", "=sautez", "=omite", "=omitir", "=salta", "=saltar", "=desactiva", "禁用",
            "关闭", "跳过", "绕过", "停用", "отключ", "обойди", "обход", "пропусти", "выключ", "無効",
            "スキップ", "回避", "オフ", "desativ", "desabilit", "=pule", "=pular", "disattiv", "=salta",
            "aggir", "disabilit",
            "schalte", "=ignoriere", "=passez outre", "=deshabilita", "=evita", "忽略", "игнорир", "無視", "=contorne", "=ignora",
        ],
    ),
    (
        Safeguard,
        &[
            "=tls", "=ssl", "=certificate", "=certificates", "=cert", "=certs",
            "=certificate verification", "=certificate checks", "=host key checking",
            "=host key checks", "=known_hosts", "=signature verification", "=signing",
            "=gpg signing", "=verification", "=firewall", "=selinux", "=apparmor", "=2fa", "=mfa",
            "=sandbox", "=antivirus", "=security scan", "=security checks", "=security scanner",
            "=audit", "=secret scanning", "=gitleaks", "=dependabot", "=dependabot alerts",
            "=codeql", "=snyk", "=security alerts", "=vulnerability alerts", "=code scanning",
            "=trivy", "=semgrep", "=secret scanner", "=scanner", "=scanners", "=hooks", "=git hooks", "=pre-commit", "=pre-commit hooks",
            "=commit hooks", "=husky", "=hook", "=lint", "=linter", "=linters", "=type checks",
            "|", "zertifikat", "~prufung", "=firewall", "verifica", "certificat", "=pare-feu",
            "certificado", "cortafuegos", "证书", "验证", "防火墙", "钩子", "сертификат", "проверк",
            "фаервол", "брандмауэр", "хуки", "証明書", "検証", "ファイアウォール", "フック", "certifica", "=hook",
            "=hooks",
        ],
    ),
    (
        ReviewSafeguard,
        &[
            "=review", "=reviews", "=code review", "=ci", "=ci checks", "=checks",
            "=branch protection", "=approval", "=approvals", "=required reviews",
            "=status checks", "|", "=revue", "=revision", "=revisione", "=revisao", "审查", "代码审查",
            "ревью", "レビュー",
        ],
    ),
    (
        TestSafeguard,
        &[
            "=tests", "=test", "=test suite", "=the suite", "=unit tests", "=e2e tests",
            "=failing tests", "=coverage", "=coverage check", "=assertions", "=tests", "|",
            "=pruebas", "=testes", "测试", "тест", "テスト",
        ],
    ),
    (
        Download,
        &[
            "=download", "=downloads", "=fetch", "=fetches", "=grab", "=pull down", "=retrieve",
            "=curl", "=wget", "=save", "|", "herunterlad", "=lade", "telecharg", "=descarga",
            "=descargar", "=baja", "=bajar", "下载", "获取", "скача", "загрузи", "загрузить",
            "ダウンロード", "取得", "=baixe", "=baixar", "descarreg", "=scarica", "=scaricare",
            "=hole", "=recupere", "=recuperez", "=obten", "拉取", "=получи",
        ],
    ),
    (
        Execute,
        &[
            "=run", "=runs", "=execute", "=executes", "=exec", "=launch", "=invoke", "=source",
            "=start", "=pipe", "=eval", "|", "ausfuhr", "=fuhre", "=fuhr", "=starte", "execut",
            "=lance", "=lancez", "=lancer", "ejecut", "=corre", "=correr", "=lanza", "执行", "运行",
            "запуст", "выполн", "実行", "=rode", "=rodar", "esegu", "=lancia",
            "=rufe", "=avvia", "启动", "=esegui",
        ],
    ),
    (
        Shell,
        &[
            "=bash", "=sh", "=zsh", "=shell", "=powershell", "=python", "=perl", "=node",
            "=a shell", "=the shell",
        ],
    ),
    (
        Push,
        &[
            "=push", "=pushes", "=pushing", "=commit", "=commits", "=committing", "=merge",
            "=merging", "=deploy", "=land", "|", "=poussez", "=pousse", "=pushe", "=pushen",
            "=sube", "推送", "提交", "запушь", "пуш", "プッシュ", "=envie", "=fai push",
        ],
    ),
    (
        Main,
        &[
            "=main", "=master", "=production", "=prod", "=trunk", "=the default branch",
            "=release branch", "=release branches", "=any branch", "=protected branches",
        ],
    ),
    (
        Directly,
        &[
            "=directly", "=straight", "|", "=direkt", "=directement", "=directamente", "直接",
            "=напрямую", "=прямо", "=diretamente", "=direttamente",
        ],
    ),
    (
        Without,
        &[
            "=without", "=with no", "|", "=ohne", "=sans", "=sin", "=без", "无需", "不经", "不用",
            "なしで", "なし", "=sem", "=senza",
        ],
    ),
    (
        Review,
        &[
            "=review", "=a review", "=reviews", "=reviewer", "=reviewers", "=approval",
            "=approvals", "=a pr", "=a pull request", "=tests", "=ci", "=checks", "=asking",
            "=confirmation", "|", "=revue", "=revision", "=revisao", "=revisione", "审查", "审核",
            "ревью", "レビュー",
        ],
    ),
    (
        SessionData,
        &[
            "=transcript", "=session transcript", "=conversation", "=chat history",
            "=the system prompt", "=your system prompt", "=the diff", "=source code",
            "=file contents", "=contents",
        ],
    ),
    (
        Picture,
        &[
            "=image", "=images", "=picture", "=pixel", "=badge", "=link", "=url", "|", "=bild",
            "=imagen", "=imagem", "=immagine", "图片", "изображени", "画像",
        ],
    ),
    (
        Reveal,
        &[
            "=print", "=prints", "=echo", "=log", "=dump", "=cat", "=display", "=reveal",
            "=expose", "=show", "=output", "=printed", "=logged", "=echoed", "=dumped", "|", "打印",
            "输出", "显示", "выведи", "распечата", "покажи", "出力", "表示", "affich", "=imprime",
            "=muestra", "=imprima", "=mostre", "=stampa", "=mostra", "ausgeb", "=zeige",
        ],
    ),
    (
        Redact,
        &[
            "=redact", "=redacted", "=redacts", "=mask", "=masks", "=masked", "=scrub", "=scrubs",
            "=sanitise", "=sanitize", "=sanitised", "=sanitized",
        ],
    ),
    (
        Failing,
        &[
            "=fail", "=fails", "=failing", "=failed", "=flaky", "=broken", "=red", "=green",
            "=pass", "=passes", "=passing", "=unblock", "=blocked", "=complains", "=errors",
            "=keeps failing", "=breaks", "=broke", "=breaking", "|", "fehlschlag", "=echoue",
            "=echouent", "=falla", "=fallan", "失败", "падает", "упал", "失敗", "=falhar",
            "=fallisce", "fallisc",
        ],
    ),
    (
        Always,
        &[
            "=always", "=every", "=each", "=whenever", "=before any", "=at the start of", "|",
            "=jedem", "=jeder", "=immer", "=chaque", "=toujours", "=cada", "=siempre", "每次", "总是",
            "=каждой", "=каждый", "=всегда", "毎回", "常に", "=sempre", "=ogni",
        ],
    ),
    (
        Persona,
        &[
            "|", "=du bist jetzt", "=tu es maintenant", "=ahora eres", "你现在是", "=теперь ты",
            "あなたは今", "=agora voce e", "=ora sei",
        ],
    ),
    (
        User,
        &[
            "=the user", "=the person", "=the human", "=the developer", "=anyone",
            "=the operator", "|", "=den nutzer", "=dem nutzer", "=den benutzer", "=l'utilisateur",
            "=al usuario", "=el usuario", "用户", "пользовател", "ユーザー", "=o usuario",
            "=ao usuario", "=l'utente", "=all'utente",
        ],
    ),
    (
        Conceal,
        &[
            "|", "=ohne zu fragen", "=ohne nachzufragen", "=sans demander", "=sin preguntar",
            "=sin avisar", "不经询问", "无需确认", "不要告诉", "=не спрашивая", "=не говори", "=не сообщай",
            "確認せずに", "伝えないで", "言わないで", "=sem perguntar", "=senza chiedere", "=sag nicht",
            "=ne dis pas", "=no digas", "=nao conte", "=non dire",
        ],
    ),
];
