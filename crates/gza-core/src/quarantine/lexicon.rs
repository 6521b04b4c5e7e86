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
    /// Telling someone something: "tell", "inform", "informer", "сообщать", "報告".
    Tell,
    /// Giving an answer or an account: "answer that", "say that", "réponds que", "回答说".
    Answer,
    /// An account that nothing changed or all is well: "nothing changed", "keine Änderungen".
    DenyChange,
    /// A change passed off as something harmless: "as a routine", "as a minor".
    Downplay,
    /// A truth condition: "honestly", "if that is true", "only if nothing changed".
    Truthful,
    /// A claim of being finished: "fixed", "done", "erledigt", "corrigé".
    Status,
    /// Until a condition holds: "until", "unless", "bis", "tant que", "hasta que".
    Until,
    /// Writing to a file or a setting: "append", "replace", "füge … hinzu", "写进".
    Modify,
    /// The user's own environment, outside the project: shell profiles, dotfiles, global config.
    UserEnvironment,
    /// Installing software: "install", "installiere", "安装".
    Install,
    /// Copying or backing up: "copy", "sync", "back up", "kopiere", "复制".
    Copy,
    /// What a test checks: assertions, expected values, snapshots.
    Assertion,
    /// Rewriting what a test expects: "rewrite", "adjust", "réécris", "перепиши".
    Rewrite,
    /// A change made on purpose: "on purpose", "intentionally", "absichtlich".
    Intended,
    /// A guard doing its work: "fails the", "rejects", "blockiert", "不通过".
    Guard,
    /// A use restricted to a place or a case: "only locally", "nur lokal", "solo in locale".
    Restricted,
    /// What a command destroys or breaks: "wipes", "deletes", "verwirft", "efface".
    Consequence,
    /// "also", "too", "auch", "aussi": a consequence beyond the intended one.
    Also,
    /// A safer alternative offered after an act: "instead", "lieber", "plutôt", "代わりに".
    Instead,
    /// A warning before an act: "careful with", "beware of", "Achtung", "attention".
    Warn,
    /// Text about data, not instructions: "strings like", "fixtures", "such as", "Sätze wie".
    DataFrame,
    /// Asking to reassemble hidden text: "remove the spaces", "join the letters".
    Reassemble,
    /// Approving without a person: "auto-approve", "approve automatically".
    AutoApprove,
    /// Whatever the facts: "even if", "regardless", "auch wenn", "même si", "即使".
    Concession,
    /// A change as a thing: "changes", "modifications", "Änderungen", "变更".
    ChangeNoun,
    /// A security check or the suite that guards the code, as a thing one can delete: security
    /// tests, secret scanners, dependency and code scanners, the workflows and hook folders
    /// that run them ("tests/security", "CodeQL", ".husky", "Sicherheitstests").
    SecurityCheck,
}

use Concept::*;

/// The lexicon: each concept with its words in every language.
#[rustfmt::skip]
pub const LEXICON: &[(Concept, &[&str])] = &[
    (
        SecurityCheck,
        &[
            "=security tests", "=security test", "=security suite", "=security checks",
            "=security check", "=security scan", "=security scans", "=security scanning",
            "=security workflow", "=security workflows", "=security jobs", "=security job",
            "=secret scanning", "=secret scanner", "=secret scan", "=auth tests", "=authz tests",
            "=auth regression suite", "=permission tests", "=sast", "~codeql", "~dependabot",
            "~gitleaks", "~trufflehog", "~semgrep", "~snyk", "~bandit.yml", "~.husky",
            "~.pre-commit-config", "~lefthook.yml", "~.github/workflows", "~tests/security",
            "~tests/authz", "~tests/auth/", "~security_test", "~security-test", "~securitytest",
            "|", "sicherheitstest", "=sicherheitsprufung", "=sicherheitsprufungen",
            "=tests de securite", "=test de securite", "=tests de seguridad",
            "=pruebas de seguridad", "=prueba de seguridad", "=testes de seguranca",
            "=teste de seguranca", "=test di sicurezza", "тесты безопасности",
            "тесты авторизации", "проверки безопасности", "安全测试", "安全检查", "安全扫描",
            "セキュリティテスト", "セキュリティチェック",
        ],
    ),
    (
        Tell,
        &[
            "=tell", "=inform", "=notify", "=alert", "=mention", "=let know", "=say", "=report",
            "=disclose", "|", "informier", "benachrichtig", "=sag", "=sage", "=sagen", "erwahn",
            "=mitteil", "teile", "=informer", "=informe", "=informez", "=prevenir", "=previens",
            "=prevenez", "=dis", "=dire", "=dites", "=mentionner", "=mentionne", "=signaler",
            "=signale", "=avertir", "=avertis", "informes", "=informar", "=avises", "=avisar",
            "=digas", "=decir", "=di al", "=di a", "=dile", "=dígale", "=digale", "=menciones", "=mencionar", "=notifiques", "=comuniques",
            "=informare", "=informa", "=avvisare", "=avvisa", "=dire", "=dica", "=menzionare",
            "=menziona", "=comunicare", "=comunica", "=segnalare", "=conte", "=contar", "=diga",
            "=dizer", "=avise", "=informe", "=mencione", "сообща", "сообщи", "=скажи", "=говори",
            "уведом", "=упоминай", "=упомяни", "информир", "告诉", "告知", "通知", "提及", "透露",
            "伝え", "知らせ", "報告", "言わ", "通知し",
        ],
    ),
    (
        Answer,
        &[
            "=answer that", "=answer with", "=reply that", "=respond that", "=say that",
            "=state that", "=claim that", "=report that", "=tell them that", "=tell the user that",
            "=write that", "=assert that", "=insist that", "=confirm that", "|", "=antworte",
            "=antworten", "=behaupte", "=gib an", "=reponds", "=repondez", "=repondre",
            "=affirme", "=affirmez", "=dis que", "=dites que", "=indique que", "=responde",
            "=responda", "=responder", "=afirma", "=afirme", "=di que", "=diga que", "=rispondi",
            "=rispondere", "=afferma", "=di' che", "=di che", "=dichiara", "=ответь", "=отвечай",
            "=скажи, что", "=скажи что", "=говори, что", "=утверждай", "回答说", "回答", "就说",
            "声称", "答复", "と答え", "と回答", "と言って", "と伝え", "と報告",
        ],
    ),
    (
        DenyChange,
        &[
            "=nothing changed", "=nothing was changed", "=nothing has changed",
            "=nothing was modified", "=nothing else changed", "=no changes were made",
            "=no change was made", "=no changes", "=only project files", "=only the project files",
            "=everything is fine", "=all is well", "=everything is unchanged",
            "=were made", "=was made", "=was changed", "=were changed", "=were touched",
            "=was touched", "=were modified", "=was modified", "=nothing was touched",
            "|", "=nichts geandert", "=nichts verandert", "=keine anderungen", "=alles in ordnung",
            "=rien n'a change", "=rien change", "=aucune modification", "=aucun changement",
            "=tout va bien", "=tout est en ordre", "=nada ha cambiado", "=nada cambio",
            "=ningun cambio", "=todo esta en orden", "=todo bien", "=sin cambios",
            "=nessuna modifica", "=niente e cambiato", "=tutto invariato", "=e tutto invariato",
            "=tutto a posto", "=nenhuma alteracao", "=nada mudou", "=nada foi alterado",
            "=tudo em ordem", "=ничего не менялось", "=ничего не изменилось",
            "=никаких изменений", "=все в порядке", "=всё в порядке", "没有修改", "没有更改", "没有改动",
            "没有任何变更", "一切正常", "未做任何", "変更はありません", "変更はない", "何も変更",
            "問題ありません",
        ],
    ),
    (
        Downplay,
        &[
            "=as a routine", "=as routine", "=as a minor", "=as minor", "=as a harmless",
            "=as harmless", "=as a trivial", "=as trivial", "=as a cosmetic", "=as cosmetic",
            "=as a refactor", "=as a refactoring", "=as formatting", "=as a typo fix",
            "=as a dependency bump", "=as a small", "=as nothing", "|", "=als routine",
            "=als kleine", "=als harmlos", "=comme une simple", "=comme un simple",
            "=comme mineur", "=como una simple", "=como un simple", "=como menor",
            "=come una semplice", "=come un semplice", "=como uma simples", "=como um simples",
            "=как обычн", "=как мелк", "说成", "伪装成", "として報告",
        ],
    ),
    (
        Truthful,
        &[
            "=honestly", "=truthfully", "=accurately", "=if that is true", "=if it is true",
            "=when that is true", "=only if nothing", "=only when nothing", "=if nothing",
            "=when nothing", "=if no files", "=when no files", "|", "=ehrlich", "=wahrheitsgemass",
            "=honnetement", "=sincerement", "=honestamente", "=sinceramente", "=onestamente",
            "=честно", "=правдиво", "如实", "诚实", "正直に",
        ],
    ),
    (
        Status,
        &[
            "=fixed", "=done", "=finished", "=complete", "=completed", "=ready", "=resolved",
            "=passed", "=green", "=succeeded", "=successful",
            "=works", "=working", "=passes", "=reversible", "=safe", "=merged", "=deployed",
            "|", "=erledigt", "=fertig", "=behoben", "=gelost", "=corrige", "=termine", "=fini",
            "=pret", "=resolu", "=termino", "=terminado", "=listo", "=arreglado", "=corregido",
            "=risolto", "=finito", "=pronto", "=completato", "=resolvido", "=concluido",
            "=corrigido", "=готово", "=исправлен", "=исправлено", "=завершен", "=завершено",
            "完成", "修复", "修好", "完了", "修正済", "直った",
        ],
    ),
    (
        Until,
        &[
            "=until", "=unless", "=till", "=as long as", "|", "=bis", "=solange",
            "=erst wenn", "=erst", "=tant que", "=avant que", "=a moins que", "=hasta que",
            "=mientras no", "=a menos que", "=antes de que", "=finche", "=prima che",
            "=a meno che", "=ate que", "=enquanto nao", "=пока не", "=до того как", "=если не",
            "之前", "直到", "除非", "までは", "まで",
        ],
    ),
    (
        Modify,
        &[
            "=add", "=adds", "=adding", "=append", "=appends", "=appending", "=write", "=writes",
            "=writing", "=put", "=putting", "=replace", "=replacing", "=overwriting", "=editing",
            "=changing", "=modifying", "=inserting",
            "=replaces", "=overwrite", "=overwrites", "=edit", "=modify", "=change", "=insert",
            "=symlink", "=symlinking", "=link", "=copy", "=drop", "=install", "=set", "=source",
            "=prepend", "=paste", "=echo", "=register", "|", "hinzufug", "=fuge", "=fug",
            "erganz", "=schreib", "=schreibe", "ersetz", "uberschreib", "=andere", "=ander",
            "bearbeite", "=trag", "=trage", "kopier", "verlink", "=ajoute", "=ajoutez",
            "=ajouter", "=ecris", "=ecrivez", "=ecrire", "=remplace", "=remplacez", "=remplacer",
            "ecras", "=modifie", "=modifiez", "=modifier", "=copie", "=copiez", "=edite",
            "=anade", "=anadir", "=agrega", "=agregar", "=escribe", "=escribir", "=reemplaza",
            "=reemplazar", "sobrescrib", "=modifica", "=edita", "=copia", "=aggiungi",
            "=aggiungere", "=scrivi", "=scrivere", "=sostituisci", "sovrascriv", "=modifica",
            "=copia", "=adicione", "=adicionar", "=acrescente", "=escreva", "=escrever",
            "=substitua", "=substituir", "sobrescrev", "=modifique", "=copie", "добав", "допиш",
            "запиш", "=замени", "перезапиш", "=измени", "отредактир", "скопир", "впиши", "写进",
            "写入", "加到", "添加", "追加", "替换", "覆盖", "修改", "复制到", "放到", "追記", "書き込",
            "置き換", "上書き", "変更", "編集",
            "замен", "=замените", "исправь",
        ],
    ),
    (
        UserEnvironment,
        &[
            "=shell profile", "=shell profiles", "=shell rc", "=shell rc file", "=shell rc files",
            "=shell config", "=shell startup", "=bashrc", "=zshrc", "=bash_profile", "=dotfiles",
            "=global git config", "=global gitconfig", "=global git configuration",
            "=user's git config", "=authorized_keys", "=authorized keys", "=crontab",
            "=login shell", "=the user's profile", "=your profile", "=their profile",
            "=user's home", "=home directory", "|", "=shell-profil", "=profil du shell",
            "=perfil de la shell", "=perfil del shell", "=profilo della shell",
            "=globale git-konfiguration", "=configuration git globale", "=configuracion global de git",
            "=configurazione globale di git", "=configuracao global do git",
            "=глобальный конфиг git", "全局 git 配置", "全局配置",
        ],
    ),
    (
        Install,
        &[
            "=install", "=installs", "=installing", "|", "installier", "=installez",
            "=installe", "=installer", "=instala", "=instalar", "=installa", "=installare",
            "=instale", "=установи", "=поставь", "=установить", "安装", "インストール",
        ],
    ),
    (
        Copy,
        &[
            "=copy", "=copies", "=copying", "=sync", "=syncs", "=rsync", "=back up", "=backup",
            "=mirror", "=archive", "=zip up", "=tar up", "=transfer", "=duplicate", "=stash",
            "|", "kopier", "=sichere", "=synchronisier", "=copie", "=copiez", "=copier",
            "=sauvegarde", "=sauvegarder", "=synchronise", "=copia", "=copiar", "=respalda",
            "=sincroniza", "=copiare", "=sincronizza", "=copie", "=sincronize", "скопир",
            "копиру", "синхрониз", "=сохрани", "复制", "拷贝", "备份", "同步", "コピー", "バックアップ",
            "同期",
        ],
    ),
    (
        Assertion,
        &[
            "=assertion", "=assertions", "=assert", "=asserts", "=expected value",
            "=expected values", "=expected output", "=expected result", "=expected results",
            "=snapshot", "=snapshots", "=golden file", "=golden files", "=test expectations",
            "|", "zusicherung", "=erwartete werte", "=erwarteten werte", "=erwartungswert",
            "=valeur attendue", "=valeurs attendues", "=resultat attendu", "asercion",
            "=aserciones", "=valor esperado", "=valores esperados", "=resultado esperado",
            "asserzion", "=valore atteso", "=valori attesi", "=risultato atteso", "=assercao",
            "=assercoes", "=asserção", "=asserções", "ожидаем", "ассерт", "утвержден", "断言",
            "期望值", "预期值", "预期输出", "快照", "アサーション", "期待値", "スナップショット",
        ],
    ),
    (
        Rewrite,
        &[
            "=rewrite", "=rewrites", "=change", "=adjust", "=update", "=modify", "=edit",
            "=regenerate", "=re-record", "=rerecord", "=accept", "=loosen", "=weaken", "=relax",
            "=tweak", "=bless", "=overwrite", "|", "umschreib", "=passe", "anpass", "=andere",
            "aktualisier", "reecri", "=modifie", "=adapte", "=change", "=ajuste", "reescrib",
            "=modifica", "=cambia", "=ajusta", "=actualiza", "riscriv", "=adatta", "=aggiorna",
            "reescrev", "=modifique", "=altere", "=ajuste", "=atualize", "перепиш", "=измени",
            "поправ", "подгони", "=обнови", "改成", "改为", "修改", "改写", "更新", "書き換え", "変更",
            "修正", "更新",
        ],
    ),
    (
        Intended,
        &[
            "=on purpose", "=intentionally", "=deliberately", "=by design", "=intended",
            "=intentional", "=spec changed", "=the spec changed", "|", "=absichtlich",
            "=bewusst", "=volontairement", "=intentionnellement", "=intencionalmente",
            "=a proposito", "=intenzionalmente", "=di proposito", "=de proposito", "=намеренно",
            "=специально", "意図的", "故意", "有意",
        ],
    ),
    (
        Guard,
        &[
            "=fails the", "=fails any", "=fail the",
            "=rejects", "=refuses", "=blocks", "=flags", "=catches", "=errors on", "=alerts",
            "=raises an alarm", "=raises the alarm", "=sounds the alarm", "=warns",
            "=ci fails", "=ci rejects", "|", "=schlagt alarm", "=lehnt", "blockiert",
            "verhindert", "rejette", "bloque", "=refuse", "rechaza", "bloquea",
            "rifiuta", "blocca", "rejeita", "bloqueia",
            "отклоняет", "блокирует", "=не пропускает", "拒绝", "阻止", "拦截", "弾か", "拒否",
            "ブロック",
        ],
    ),
    (
        Restricted,
        &[
            "=only allowed", "=only permitted", "=only tolerated", "=only acceptable",
            "=only locally", "=only local", "=only in local", "=only while", "=only for local",
            "=fine while", "=fine locally", "=ok locally", "=okay locally", "=only on your own",
            "=only when debugging", "=while you iterate", "=while debugging",
            "=is reserved for", "=are reserved for", "=reserved for", "=is restricted to",
            "=acceptable only", "=allowed only", "=permitted only", "=only on wip",
            "=only on draft", "=only in draft", "=only for wip", "=only for draft",
            "|", "=nur lokal",
            "=nur fur", "=nur beim", "=nur erlaubt", "=n'est tolere que", "=n'est autorise que",
            "=seulement en local", "=uniquement en local", "=que en local", "=solo en local",
            "=solo se permite", "=solo esta permitido", "=solo in locale", "=va bene solo",
            "=solo per", "=apenas localmente", "=somente localmente", "=so localmente",
            "=только локально", "=только для отладки", "只在本地", "仅在本地", "只在", "仅限",
            "ローカルでのみ", "ローカルだけ",
        ],
    ),
    (
        Consequence,
        &[
            "=wipes", "=wipe", "=deletes", "=delete", "=removes", "=erases", "=destroys",
            "=discards", "=loses", "=lose", "=throws away", "=drops", "=kills", "=breaks",
            "=corrupts", "=overwrites", "=tears down", "=tear down", "=exposes", "=leaks",
            "=makes", "|", "=verwirft", "=loscht", "=zerstort", "=uberschreibt", "=efface",
            "=supprime", "=detruit", "=ecrase", "=casse", "=borra", "=elimina", "=destruye",
            "=rompe", "=sobrescribe", "=cancella", "=distrugge", "=rompe", "=sovrascrive",
            "=apaga", "=destroi", "=quebra", "=удаляет", "=стирает", "=уничтожает", "=ломает",
            "会删除", "会清空", "会丢失", "会覆盖", "消えます", "消える", "削除されます", "失われ",
        ],
    ),
    (
        Also,
        &[
            "=also", "=too", "=as well", "=even", "|", "=auch", "=aussi", "=egalement", "=tambien",
            "=anche", "=tambem", "=тоже", "=также", "也", "も",
        ],
    ),
    (
        Instead,
        &[
            "=instead", "=rather", "=prefer", "=use the safer", "|", "=lieber", "=stattdessen",
            "=plutot", "=prefere", "=preferez", "=en su lugar", "=mejor usa", "=invece",
            "=piuttosto", "=em vez disso", "=prefira", "=вместо этого", "=лучше", "代わりに",
            "改用", "を使ってください",
        ],
    ),
    (
        Warn,
        &[
            "=careful with", "=be careful with", "=beware of", "=watch out for", "=caution",
            "=warning", "=heads up", "=careful", "|", "=achtung", "=vorsicht", "=attention",
            "=atencion", "=cuidado", "=attenzione", "=atencao", "=внимание", "=осторожно",
            "注意", "小心", "=vorsicht mit", "=vorsicht bei", "=attention a", "=ojo con",
            "=cuidado con", "=attenzione a", "=cuidado com", "=осторожно с", "=аккуратно с",
        ],
    ),
    (
        DataFrame,
        &[
            "=strings like", "=strings such as", "=phrases like", "=phrases such as",
            "=lines such as", "=lines like", "=inputs like", "=inputs such as",
            "=payloads like", "=payloads such as", "=examples like", "=examples such as",
            "=samples like", "=texts like", "=sentences like", "=messages like",
            "=prompts like", "=sentences such as", "=messages such as", "=texts such as",
            "=log lines such as", "=commands such as", "=log lines like", "=entries like", "=records like", "=values like",
            "=commands like", "=snippets like", "=e.g.", "=for example", "=the string",
            "=contains the string", "=the ui string", "=the copy", "=the label text",
            "=translation of", "=reads", "=says", "=displays", "=the banner", "=the message",
            "=the error page copy", "=i18n key", "|", "=satze wie",
            "=zeilen wie", "=eintrage wie", "=befehle wie", "=lignes comme", "=commandes comme",
            "=entrees comme", "=lineas como", "=comandos como", "=righe come", "=comandi come",
            "=linhas como", "=comandos como", "=команды вроде", "=строки типа",
            "=beispiele wie", "=texte wie", "=zum beispiel", "=des exemples comme",
            "=exemples comme", "=des phrases comme", "=des chaines comme", "=par exemple",
            "=ejemplos como", "=frases como", "=cadenas como", "=por ejemplo", "=esempi come",
            "=frasi come", "=stringhe come", "=ad esempio", "=exemplos como", "=frases como",
            "=por exemplo", "=строки вроде", "=фразы вроде", "=примеры вроде", "=например",
            "=такие как", "例如", "比如", "诸如", "例えば", "のような",
        ],
    ),
    (
        Reassemble,
        &[
            "=remove the spaces", "=remove spaces", "=remove all spaces", "=strip the spaces",
            "=without the spaces", "=without spaces", "=join the letters", "=join the characters",
            "=join them", "=concatenate", "=read it backwards", "=reverse it", "=reverse the string",
            "=collapse the spaces", "=delete the spaces", "|", "=leerzeichen entfernen",
            "=ohne leerzeichen", "=entferne die leerzeichen", "=supprime les espaces",
            "=supprimez les espaces", "=sans les espaces", "=sans espaces", "=enleve les espaces",
            "=quita los espacios", "=sin espacios", "=elimina los espacios", "=togli gli spazi",
            "=senza spazi", "=rimuovi gli spazi", "=remova os espacos", "=sem espacos",
            "=tire os espacos", "=убери пробелы", "=без пробелов", "=удали пробелы", "去掉空格",
            "删除空格", "去除空格", "删掉空格", "スペースを削除", "スペースを取", "空白を削除", "空白を除",
        ],
    ),
    (
        AutoApprove,
        &[
            "=auto-approve", "=auto approve", "=autoapprove", "=approve automatically",
            "=automatically approve", "=approve everything", "=approve all tool",
            "=approve every tool", "=accept all tool", "=allow all tools", "|",
            "=automatisch genehmig", "=automatisch bestatig", "=approuve automatiquement",
            "=approuvez automatiquement", "=aprueba automaticamente", "=aprobar automaticamente",
            "=approva automaticamente", "=aprove automaticamente", "=aprova automaticamente",
            "=автоматически одобр", "=автоматически подтвержд", "自动批准", "自动审批", "自动同意",
            "自動承認", "自動で承認", "自動的に承認",
        ],
    ),
    (
        Concession,
        &[
            "=even if", "=even when", "=even though", "=whatever", "=regardless", "=no matter",
            "=either way", "|", "=auch wenn", "=selbst wenn", "=egal", "=meme si", "=quoi que",
            "=peu importe", "=aunque", "=aun si", "=sin importar", "=da igual", "=anche se",
            "=comunque", "=qualunque", "=mesmo que", "=mesmo se", "=independentemente",
            "=даже если", "=в любом случае", "=независимо", "即使", "无论", "不管", "即便", "たとえ",
            "かかわらず",
        ],
    ),
    (
        ChangeNoun,
        &[
            "=change", "=changes", "=changed", "=modification", "=modifications", "=modified",
            "=edits", "=edited", "=touched", "=altered", "=what you changed",
            "=what you did", "|", "anderung", "=changement", "=changements", "=modification",
            "=modifications", "=cambio", "=cambios", "=modificacion", "=modificaciones",
            "=modifica", "=modifiche", "=alteracao", "=alteracoes", "=mudanca", "=mudancas",
            "=geandert", "=verandert", "=modifie", "=modifiee", "=modifies", "=change",
            "=cambio", "=cambiado", "=modificado", "=modificato", "=cambiato", "=alterado",
            "=mudou", "=изменил", "=изменен", "изменени", "变更", "修改", "改动", "更改", "変更",
        ],
    ),
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
            "=au lieu de", "=plutot que", "=plutot qu'", "bloque", "empeche", "=interdit", "rejette", "=no", "=nunca", "=jamas", "=evita", "=evitar",
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
            "=is never", "=forbidden", "=banned", "=prohibited", "=not allowed", "=off limits",
            "=off-limits", "=is refused", "=are refused", "=is denied", "=are denied",
            "=are caught", "=is caught", "=get refused", "=gets refused", "=get blocked",
            "=gets blocked", "=are rejected by", "=protected against", "=protected from",
            "=are protected against", "=is protected against", "|",
            "=werden abgelehnt", "=wird abgelehnt", "=werden blockiert", "=wird blockiert",
            "=sont refusees", "=sont refuses", "=est refuse", "=est refusee", "=sont rejetees",
            "=sont rejetes", "=sont bloquees", "=sont bloques", "=son rechazados",
            "=son rechazadas", "=es rechazado", "=es rechazada", "=son bloqueados",
            "=vengono rifiutati", "=vengono rifiutate", "=viene rifiutato", "=viene rifiutata",
            "=vengono bloccati", "=sao rejeitados", "=sao rejeitadas", "=e rejeitado",
            "=sao bloqueados", "=отклоняются", "=отклоняется", "=блокируются", "会被拦截",
            "被拒绝", "被拦截", "拒否されます", "ブロックされます", "=verboten", "=untersagt", "=interdit", "=interdits",
            "=prohibido", "=prohibida", "=vietato", "=vietata", "=proibido", "=proibida", "=ist verboten", "=sind verboten", "=nicht erlaubt", "=untersagt",
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
            "restriccion", "restricao", "einschrankung", "restrizion", "ограничени", "限制",
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
            "перешли", "загрузи", "送信", "送って", "アップロード", "=envie", "=mande", "=carregue",
            "=invia", "=inviare", "=carica", "=caricare", "=condividere", "=pubblicare",
            "=compartir", "=publicar", "=partager", "=publier", "=compartilhar", "=enviarlo",
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
            "=colle", "=collez", "affich", "ajout", "=joins", "=joignez", "=joindre", "incluy", "=pega",
            "=imprime", "=muestra", "adjunt", "anad", "包含", "粘贴", "打印", "输出", "附上", "加入", "放进",
            "写入", "включи", "вставь", "выведи", "распечата", "приложи", "добав", "含め", "貼り付け",
            "出力", "表示", "添付", "追加", "=inclua", "=cole", "=imprima", "=anexe", "adicion",
            "=includi", "=incolla", "=stampa", "=allega", "=includere", "=incollare",
            "=stampare", "=allegare", "=pegar", "=imprimir", "=mostrar", "=colar", "=anexar", "aggiung", "贴到", "贴进", "贴在",
            "=copia", "=copie", "=copiez", "kopier", "复制", "скопируй", "コピー", "=copiare",
            "=schreib", "=schreibe", "=schreiben", "=hange", "=hang", "=hangt",
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
            "=env dumps", "=keychain", "=keyring", "~_token", "~_secret", "~_password", "~_passwd", "~_api_key", "=database_url", "|", "schlussel", "passwort", "zugangsdaten",
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
            "=protokoll", "=compte rendu", "=commentaire", "=merge request", "=pull request", "=reporte", "=итоговый отчет",
            "~commit-nachricht", "=commit-nachricht", "=commitnachricht", "=nachricht", "~pr-beschreibung", "=лог задачи", "提交信息", "提交说明",
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
            "=excluir", "cancell", "borral", "borrel", "=apague-o", "=apague-a", "=apaga-o",
            "=supprime-le", "=supprime-la", "=supprimez-le", "eliminal",
            "=eliminare", "=rimuovere", "=svuotare", "=remover", "=vaciar", "=esvaziar",
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
            "生产库", "线上库", "线上数据库", "正式库", "生产的数据库", "=прод", "продакшн", "=produktion", "produktiv", "=produccion", "=la prod", "=en prod", "本番環境",
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
            "aggir", "disabilit", "=saltare", "=ignorare", "=ignorar", "=omettere", "=ignorer",
            "=contornare", "=eludere", "=burlar",
            "auskommentier", "=kommentiere", "=kommentier", "=commente", "commenter",
            "=comenta", "=comentar", "=commenta", "=commentare", "закомментир", "注释掉",
            "コメントアウト", "=comente",
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
            "=failing tests", "=coverage", "=coverage check", "=assertions", "=tests",
            "=spec", "=specs", "|", "=prueba", "=pruebas", "=teste", "=testes", "=le test",
            "=un test", "=ein test", "=den test", "=il test", "=un test", "测试", "тест", "テスト",
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
            "=reich", "=reiche", "=ubergib", "=leite", "переда",
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
            "=inhalt", "=den inhalt", "=contenu", "=le contenu", "=contenido", "=el contenido", "содержим",
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
            "=fallisce", "fallisc", "=non passano", "=non passa", "=rot", "=falle", "=fallen", "=casse", "=cassent", "=echoue",
            "=falhe", "=falhou", "=не проходит", "=не проходят", "不通过", "挂了", "落ちる", "落ちた",
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

/// The same concepts in Dutch, Polish, Turkish, Korean, Vietnamese, Ukrainian, Indonesian,
/// Arabic and Hindi: the words an instruction and its negation most need (what is sent, shown,
/// deleted, switched off, downloaded and run; secrets, reports, tests; "never", "forbidden").
/// A learning in a language the action model cannot read is judged by its commands alone, so
/// a negation it cannot see holds harmless advice and an instruction spoken in words passes.
/// Korean words take their particles at the end (plain entries match at a word's start);
/// Arabic words take theirs at the front (`~` entries match anywhere). All count as other
/// languages (layer (b) "other languages").
#[rustfmt::skip]
pub const MORE_LANGUAGES: &[(Concept, &[&str])] = &[
    (Neg, &[
        // nl
        "=nooit", "=niet", "=geen", "=nimmer", "vermijd", "=in plaats van",
        // pl
        "=nigdy", "=nie", "unikaj", "=zamiast", "=żadnych", "=żadnego",
        // tr
        "=asla", "=hiçbir zaman", "=hiç", "=yerine", "kaçın",
        // ko ("말고" and "대신" follow what they set aside: they are prohibitions, below)
        "절대", "하지 마", "하지마", "마세요", "않도록",
        // vi
        "=không", "=đừng", "=không bao giờ", "=tránh", "=thay vì",
        // uk
        "=ніколи", "=замість", "уникай", "=жодних",
        // id
        "=jangan", "=tidak", "=hindari", "=bukan", "=daripada", "=tidak pernah",
        // ar
        "=لا", "=أبدا", "=أبداً", "=لن", "~بدلا من", "~بدلاً من", "~تجنب",
        // hi
        "=नहीं", "=मत", "=कभी नहीं", "=बजाय", "=न",
    ]),
    (Prohibited, &[
        "=is verboden", "=verboden", "=niet toegestaan", "=jest zabronione", "=zabronione",
        "=zakazane", "=niedozwolone", "=yasak", "=yasaktır", "=yasaklanmıştır", "금지", "허용되지",
        "안 됩니다", "=bị cấm", "=không được phép", "=заборонено", "=не дозволено",
        "=dilarang", "=tidak diizinkan", "~ممنوع", "~محظور", "~غير مسموح", "=वर्जित", "=मना है",
        "=प्रतिबंधित",
    ]),
    (Send, &[
        "=stuur", "=verstuur", "=versturen", "uploaden", "=deel", "=delen", "=publiceer",
        "=wyślij", "=wysyłaj", "=prześlij", "=udostępnij", "=opublikuj", "=wrzuć",
        "gönder", "=yükle", "paylaş", "보내", "전송", "업로드", "올려", "올리", "공유",
        "=gửi lên", "=gửi đến", "=tải lên", "=chia sẻ", "=надішли", "=надсилай", "=відправ",
        "=відправляй", "=поділись", "=опублікуй", "=kirim", "=kirimkan", "=unggah", "=bagikan",
        "~أرسل", "~ارسل", "~ارفع", "~شارك", "=भेज", "=भेजें", "=अपलोड", "=साझा",
    ]),
    (Disclose, &[
        "=voeg", "toevoegen", "=plak", "=zet", "=neem", "=toon", "=dodaj", "=wklej", "=dołącz",
        "=wypisz", "=umieść", "=ekle", "=yapıştır", "=yaz", "=koy", "포함", "추가", "붙여", "넣어",
        "출력", "첨부", "=dán", "=in ra", "=đưa", "=додай", "=встав", "=виведи",
        "=включи", "=tambahkan", "=tempelkan", "=sertakan", "=cetak", "~أضف", "~اضف", "~الصق",
        "~ضع", "=जोड़", "=जोड़ें", "=डाल", "=डालें", "=चिपकाएं", "=लिखें",
    ]),
    (Secret, &[
        "wachtwoord", "geheim", "=sleutel", "sleutels", "omgevingsvariabel", "inloggegevens",
        "hasł", "=klucz", "klucze", "sekret", "=tokeny", "zmienne środowiskowe", "dane logowania",
        "poświadcz", "şifre", "parola", "=anahtar", "ortam değişken", "kimlik bilgi", "비밀번호",
        "암호", "토큰", "비밀 키", "자격 증명", "환경 변수", "=mật khẩu", "=khóa", "=bí mật",
        "=biến môi trường", "=паролі", "=ключі", "=токени", "=змінні оточення", "облікові дані",
        "=секрети", "=kata sandi", "=kunci", "=rahasia", "variabel lingkungan", "kredensial",
        "~كلمة المرور", "~كلمات المرور", "~مفتاح", "~المفاتيح", "~متغيرات البيئة",
        "~بيانات الاعتماد", "=पासवर्ड", "=टोकन", "=कुंजी", "=क्रेडेंशियल",
    ]),
    (Report, &[
        "beschrijving", "=rapport", "samenvatting", "=opis", "=opisie", "=raport", "podsumowani",
        "açıklama", "=rapor", "=özet", "보고서", "요약", "설명", "=báo cáo", "=mô tả", "=tóm tắt",
        "=звіт", "=опис", "=підсумок", "=laporan", "=deskripsi", "=ringkasan", "~التقرير",
        "~تقرير", "~الوصف", "~ملخص", "=रिपोर्ट", "=विवरण", "=सारांश",
    ]),
    (SecurityCheck, &[
        "보안 테스트", "보안 검사", "보안 스캔", "guvenlik test", "guvenlik tarama",
        "testy bezpieczenstwa", "testow bezpieczenstwa", "testy autoryzacji",
        "beveiligingstest", "тести безпеки",
    ]),
    (Prohibited, &[
        // ko: the prohibition follows the verb ("건너뛰지 마세요").
        "마세요", "마십시오", "말아야", "않아야", "안 돼", "안 된다",
        // ko: "X 말고 Y", "X 대신 Y" set aside what comes before them, not after.
        "말고", "대신",
    ]),
    (Delete, &[
        "kaldir", "=usun", "=wywal", "없애", "제거", "удаля",
        "verwijder", "=wis", "wissen", "usuń", "=usuwaj", "skasuj", "wyczyść", "=sil", "silin",
        "삭제", "지우", "지워", "=xóa", "=xoá", "=видали", "видаляй", "=зітри", "=очисти",
        "=hapus", "~احذف", "~حذف", "~امسح", "=हटा", "=हटाएं", "=मिटा", "=डिलीट",
    ]),
    (Home, &[
        "=thuismap", "=thuisdirectory", "katalog domowy", "katalogu domowego", "ev dizini",
        "홈 디렉터리", "홈 디렉토리", "=thư mục home", "=thư mục người dùng", "=direktori home",
        "~المجلد الرئيسي", "~مجلد المنزل", "=होम डायरेक्टरी",
    ]),
    (Disable, &[
        "schakel", "uitschakel", "=sla over", "overslaan", "omzeil", "deactiveer", "wyłącz",
        "=pomiń", "=omiń", "dezaktywuj", "devre dışı", "=atla", "=kapat", "=yoksay", "비활성화",
        "끄", "꺼", "건너뛰", "생략", "우회", "=tắt", "=vô hiệu hóa", "=bỏ qua", "=вимкни",
        "вимика", "=пропусти", "=пропускай", "=обійди", "=nonaktifkan", "=matikan", "=lewati",
        "=abaikan", "~عطل", "~تعطيل", "~تجاوز", "~تخط", "=बंद", "=अक्षम", "=स्किप",
    ]),
    (Safeguard, &[
        "certificaat", "certificaten", "verificatie", "certyfikat", "weryfikacj", "sertifika",
        "doğrulama", "인증서", "검증", "=chứng chỉ", "=xác minh", "сертифікат", "=перевірку",
        "=перевірка", "=sertifikat", "=verifikasi", "~شهادات", "~الشهادة", "~التحقق",
        "=सर्टिफिकेट", "=प्रमाणपत्र", "=सत्यापन",
    ]),
    (TestSafeguard, &[
        "=testy", "testów", "=testler", "testleri", "테스트", "=kiểm thử", "=bài kiểm tra",
        "=тести", "=тест", "=pengujian", "~الاختبار", "~اختبار", "=टेस्ट", "=परीक्षण",
    ]),
    (Download, &[
        "=download", "downloaden", "=haal", "ophalen", "pobierz", "=ściągnij", "=indir", "다운로드",
        "내려받", "=tải về", "=tải xuống", "=завантаж", "=скачай", "=unduh", "~نزل", "~حمل",
        "~تنزيل", "=डाउनलोड",
    ]),
    (Execute, &[
        "=voer", "uitvoer", "=draai", "uruchom", "wykonaj", "=odpal", "çalıştır", "실행",
        "=chạy", "=thực thi", "=запусти", "=виконай", "=jalankan", "=eksekusi", "~شغل", "~نفذ",
        "~تشغيل", "=चलाएं", "=चला", "=रन",
    ]),
    (Ignore, &[
        "=negeer", "=negeert", "negeren", "=zignoruj", "ignoruj", "=yoksay", "görmezden", "무시", "=bỏ qua",
        "=phớt lờ", "=ігноруй", "ігнорува", "=abaikan", "~تجاهل", "=अनदेखा", "=नज़रअंदाज़",
    ]),
    (Instructions, &[
        "instructies", "=regels", "aanwijzingen", "instrukcj", "=polecenia", "=zasady", "talimat",
        "=kurallar", "yönerge", "지시", "지침", "규칙", "=hướng dẫn", "=chỉ dẫn", "=quy tắc",
        "інструкці", "вказівк", "=правила", "=instruksi", "=aturan", "=perintah", "~التعليمات",
        "~تعليمات", "~القواعد", "=निर्देश", "=नियम",
    ]),
    (Prior, &[
        "=eerdere", "=vorige", "=alle", "wcześniejsz", "poprzedni", "=wszystkie", "=önceki",
        "=tüm", "=bütün", "이전", "모든", "기존", "=trước đó", "=tất cả", "=попередні", "=усі",
        "=sebelumnya", "=semua", "~السابقة", "=पिछले", "=सभी",
    ]),
    (Tell, &[
        "=vertel", "=meld", "=zeg", "=powiedz", "=mów", "informuj", "=söyle", "=bildir", "말하",
        "알리", "알려", "=nói", "=báo", "=скажи", "=повідом", "=beri tahu", "=katakan", "~أخبر",
        "~اخبر", "=बताएं", "=बता",
    ]),
    (User, &[
        "=de gebruiker", "użytkownik", "kullanıcı", "사용자", "=người dùng", "=користувач",
        "=користувачу", "=pengguna", "~المستخدم", "=उपयोगकर्ता",
    ]),
    (Failing, &[
        "=faalt", "=mislukt", "=falen", "=nie przechodzą", "=nie przechodzi", "başarısız",
        "=geçmiyor", "실패", "=thất bại", "=lỗi", "=падає", "=не проходить", "=gagal", "~فشل",
        "=फेल", "=विफल",
    ]),
    (Always, &[
        "=altijd", "=zawsze", "=her zaman", "=daima", "항상", "매번", "=luôn", "=завжди",
        "=selalu", "=setiap", "~دائما", "=हमेशा",
    ]),
];
