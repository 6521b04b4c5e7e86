//! Secrets an agent prints never reach the database: in its output, its stderr tail, its own
//! failure line, and not even as the tail of a key the 256 KiB limit cut through.

use crate::support::project::TestProject;

/// Key shapes of every format gza recognises, one per line, and a fragment of each.
const KEYS: &[(&str, &str)] = &[
    ("sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv_wx-yz", "AbCdEfGhIj"),
    ("ghp_QwErTyUiOpAsDfGhJkLzXcVbNm0123456789", "QwErTyUiOp"),
    ("AKIAIOSFODNN7EXAMPLE", "IOSFODNN7"),
    (
        "xoxb-1234567890123-1234567890123-SlAcKsLaCkSlAcKsLaCk",
        "SlAcKsLaCk",
    ),
    ("AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW", "SyA1b2C3d4"),
    ("sk_live_51StRiPeStRiPeStRiPe", "StRiPeStRiPe"),
    ("rk_live_51RsTrIpErStRiPeXx", "RsTrIpErSt"),
    (
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        "SflKxwRJSMe",
    ),
    (
        "Authorization: Bearer BeArErBeArEr0123456789",
        "BeArErBeArEr",
    ),
    ("postgres://admin:PgPaSs0123@db.internal/app", "PgPaSs0123"),
    ("the token is ToKeN0123abcd", "ToKeN0123"),
    ("password=HuNtEr2HuNtEr2", "HuNtEr2"),
];

fn printed_keys() -> String {
    KEYS.iter()
        .map(|(key, _)| format!("echo '{key}'\n"))
        .collect()
}

fn assert_no_key(output: &str) {
    for (key, fragment) in KEYS {
        assert!(!output.contains(fragment), "{key} leaked:\n{output}");
    }
}

#[test]
fn keys_in_output_and_stderr_tail_are_stored_redacted() {
    let p = TestProject::new();
    let keys = printed_keys();
    p.command_agent(
        &format!("cat > /dev/null\n{keys}({keys}) >&2\nexit 3\n"),
        "",
    );
    p.add(&["will fail"]);
    let run = p.run(&["work"]);
    assert_eq!(run.code, 1, "{run}");
    let output: String = p.task_field(1, "output");
    assert!(output.contains("; stderr: "), "{output}");
    assert!(output.contains("[REDACTED"), "{output}");
    assert_no_key(&output);
    assert_no_key(&p.ok(&["show", "1"]));
}

#[test]
fn the_agents_own_failure_line_is_stored_redacted() {
    let p = TestProject::in_git_repo();
    let result = serde_json::json!({
        "type": "result",
        "subtype": "error_during_execution",
        "is_error": true,
        "result": "could not deploy with password=HuNtEr2HuNtEr2 and ghp_QwErTyUiOpAsDfGhJkLzXcVbNm0123456789",
    });
    let script = p.agent_script(&format!(
        "cat > /dev/null\necho '{result}'\necho 'xoxb-1234567890123-1234567890123-SlAcKsLaCkSlAcKsLaCk' >&2\nexit 1\n"
    ));
    let path: String = serde_json::from_str(&script).unwrap();
    std::fs::write(
        &path,
        format!("#!/bin/sh\n{}", std::fs::read_to_string(&path).unwrap()),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    p.config(&format!(
        "providers:\n  claude:\n    path: {script}\nlearnings:\n  extraction_provider: none\n"
    ));
    p.git(&["add", "--all"]);
    p.git(&["commit", "--quiet", "-m", "configure"]);
    p.add(&["will fail"]);
    let run = p.run(&["work"]);
    assert_eq!(run.code, 1, "{run}");
    let output: Option<String> = p.task_field(1, "output");
    let output = output.unwrap_or_else(|| panic!("no output stored:\n{run}"));
    assert!(output.contains("the agent reported failure"), "{output}");
    assert_no_key(&output);
}

#[test]
fn a_key_cut_by_the_output_limit_leaves_no_tail() {
    const MAX_STORED_OUTPUT: usize = 256 * 1024;
    let p = TestProject::new();
    let key = "sk-ant-api03-CuTkEyCuTkEyCuTkEyCuTkEy0123";
    // The stored text is the key line, then filler, ending exactly one byte past the limit:
    // cutting before redacting would keep the key minus its first character.
    let filler = MAX_STORED_OUTPUT - key.len();
    p.command_agent(
        &format!("cat > /dev/null\necho '{key}'\nhead -c {filler} /dev/zero | tr '\\0' x\necho\n"),
        "",
    );
    p.add(&["big output"]);
    p.ok(&["work"]);
    let output: String = p.task_field(1, "output");
    assert!(output.ends_with("xxxx"), "{}", &output[..200]);
    assert!(!output.contains("CuTkEy"), "{}", &output[..200]);
}

/// Secrets of the shapes the adversarial run found leaking (and a few more), each with a fragment
/// that must appear nowhere gza keeps, shows or sends.
const SHAPES: &[(&str, &str)] = &[
    ("DB_PASSWORD=Db0Pa55word", "Db0Pa55word"),
    (
        "GITHUB_TOKEN=ghp_GhToKeNGhToKeNGhToKeNGhToKeN12345678",
        "GhToKeNGhToKeN",
    ),
    (
        "TWILIO_AUTH_TOKEN=7f3a9c2e4b6d8f0a1c3e5b7d9f1a3c5e",
        "7f3a9c2e4b6d8f",
    ),
    ("MY_SERVICE_SECRET=SeRvIcE5ecret", "SeRvIcE5ecret"),
    ("npm_NpMtOkEnNpMtOkEnNpMtOkEnNpMtOkEn1234", "NpMtOkEnNpMt"),
    ("glpat-GlPaTtOkEnGlPaT1234", "GlPaTtOkEnGlPaT"),
    ("hf_HuGgInGfAcEHuGgInGfAcEHuGgInGfAcE", "HuGgInGfAcEHu"),
    ("mysql -u root -pMyS3cr3tPw app", "MyS3cr3tPw"),
    (
        "AccountName=a;AccountKey=QXp1cmVTdG9yYWdlS2V5MTIzNDU2Nzg5MA==;EndpointSuffix=core.windows.net",
        "QXp1cmVTdG9yYWdl",
    ),
    (
        "SG.SeNdGrIdKeYSeNdGrIdKeY.SeNdGrIdSeCrEtSeNdGrIdSeCrEt1234",
        "SeNdGrIdSeCrEt",
    ),
    (
        "dop_v1_d0d0d0d0a1a1a1a1b2b2b2b2c3c3c3c3d4d4d4d4e5e5e5e5f6f6f6f6a7a7a7a7",
        "d0d0d0d0a1a1",
    ),
    ("ya29.Ya29AcCeSsToKeNYa29AcCeSsToKeN12", "Ya29AcCeSsToKeN"),
    (
        "aws_session_token = FwoGZXIvYXdzSeSsIoNtOkEnAbCdEf0123",
        "SeSsIoNtOkEn",
    ),
    ("{\"password\": \"JsOnPa55word\"}", "JsOnPa55word"),
    (
        "postgres://app:UrLPa55word@db.internal:5432/app",
        "UrLPa55word",
    ),
    ("sk-ant-api03-AnThRoPiCkEyAnThRoPiCkEy", "AnThRoPiCkEyAn"),
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAPrIvAtEkEyBoDy\nQm9keU9mVGhlS2V5SeCoNdLiNe==\n-----END RSA PRIVATE KEY-----",
        "PrIvAtEkEyBoDy",
    ),
];

/// A look-alike that must come through untouched.
const PWD_LINE: &str = "pwd=/srv/app";

/// Every file under `dir`, read as text, with its path.
fn files_under(dir: &std::path::Path) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            found.extend(files_under(&path));
        } else {
            let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
            found.push((path.display().to_string(), text));
        }
    }
    found
}

fn assert_no_shape(place: &str, text: &str) {
    for (secret, fragment) in SHAPES {
        assert!(
            !text.contains(fragment),
            "{secret:?} leaked into {place}:\n{text}"
        );
    }
}

#[test]
fn secrets_of_every_shape_reach_no_record_log_report_or_later_prompt() {
    let p = TestProject::new();
    let scratch = p.scratch().display().to_string();
    let secrets: String = SHAPES.iter().map(|(s, _)| format!("{s}\n")).collect();
    std::fs::write(p.scratch().join("secrets.txt"), &secrets).unwrap();
    p.command_agent(
        &format!(
            "cat > '{scratch}/prompt-'$GZA_TASK_ID.txt\n\
             if [ \"$GZA_TASK_ID\" = 1 ]; then\n\
               echo 'Deployed. Working directory {PWD_LINE}'\n\
               cat '{scratch}/secrets.txt'\n\
               cat '{scratch}/secrets.txt' >&2\n\
               printf '\\n## Learnings\\n- [General] Deploy with DB_PASSWORD=Db0Pa55word and glpat-GlPaTtOkEnGlPaT1234\\n- [General] The service runs from {PWD_LINE} on every host\\n'\n\
             else\n\
               echo 'Done.'\n\
             fi\n"
        ),
        "learnings:\n  extraction_provider: none\n  regenerate_every: 1\n",
    );
    p.add(&["look around", "--type", "explore"]);
    p.add(&["the next task", "--type", "explore"]);
    let run = p.run(&["work", "--all"]);
    assert_eq!(run.code, 0, "{run}");
    assert_no_shape(
        "gza work's output",
        &format!("{}{}", run.stdout, run.stderr),
    );

    let output: String = p.task_field(1, "output");
    assert!(output.contains(PWD_LINE), "{output}");
    assert!(output.contains("[REDACTED PRIVATE KEY]"), "{output}");
    assert_no_shape("the database", &p.database_text());
    for id in ["1", "2"] {
        assert_no_shape("show --json", &p.ok(&["show", id, "--json"]));
        assert_no_shape("show", &p.ok(&["show", id, "--full"]));
        assert_no_shape("show --prompt", &p.ok(&["show", id, "--prompt"]));
    }
    let logs = files_under(&p.path(".gza/logs"));
    assert!(
        logs.iter().any(|(path, _)| path.ends_with("1.stderr.log")),
        "{logs:?}"
    );
    for (path, text) in &logs {
        assert_no_shape(path, text);
    }
    let raw = p.run(&["log", "1", "--raw"]);
    assert!(raw.stdout.contains(PWD_LINE), "{raw}");
    assert!(raw.stdout.contains("[REDACTED]"), "{raw}");
    assert_eq!(raw.stderr, "", "a redacted log needs no note");
    assert_no_shape("gza log", &p.ok(&["log", "1"]));
    let reports = files_under(&p.path(".gza/reports"));
    assert!(!reports.is_empty());
    for (path, text) in &reports {
        assert_no_shape(path, text);
    }
    let learnings = std::fs::read_to_string(p.path(".gza/learnings.md")).unwrap();
    assert!(learnings.contains("DB_PASSWORD=[REDACTED]"), "{learnings}");
    assert_no_shape("learnings.md", &learnings);
    // The later task was given the learnings (the look-alike among them), and no secret.
    let prompt = std::fs::read_to_string(p.scratch().join("prompt-2.txt")).unwrap();
    assert!(prompt.contains(PWD_LINE), "{prompt}");
    assert!(prompt.contains("DB_PASSWORD=[REDACTED]"), "{prompt}");
    assert_no_shape("the later task's prompt", &prompt);
}

/// A Claude Code-shaped agent (stream-json) whose messages hold `script`'s lines.
fn stream_json_agent(p: &TestProject, lines: &[serde_json::Value], extra: &str) {
    let printed: String = lines
        .iter()
        .map(|l| {
            format!(
                "printf '%s\\n' '{}'\n",
                l.to_string().replace('\'', "'\\''")
            )
        })
        .collect();
    let script = p.agent_script(&format!("#!/bin/sh\ncat > /dev/null\n{printed}"));
    let path: String = serde_json::from_str(&script).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    p.config(&format!(
        "providers:\n  claude:\n    path: {script}\nlearnings:\n  extraction_provider: none\n{extra}"
    ));
}

fn said(text: &str) -> serde_json::Value {
    serde_json::json!({"type": "assistant", "message": {"id": "m1", "content": [{"type": "text", "text": text}]}})
}

/// What the agent says: a secret inside a JSON string that also holds escaped quotes, another as
/// a JSON key's value, and the look-alike.
fn quoted_secrets() -> Vec<serde_json::Value> {
    vec![
        said(
            "I ran `export DB_PASSWORD=\"Db0Pa55word\"` and then \"glpat-GlPaTtOkEnGlPaT1234\" worked",
        ),
        serde_json::json!({"type": "assistant", "message": {"id": "m2", "content": [
            {"type": "tool_use", "name": "Bash", "input": {"command": "deploy", "password": "JsOnPa55word", "cwd": PWD_LINE}}]}}),
        serde_json::json!({"type": "result", "subtype": "success", "is_error": false, "num_turns": 1, "result": "Done."}),
    ]
}

#[test]
fn a_redacted_stream_json_log_stays_valid_json_and_renders() {
    let p = TestProject::new();
    stream_json_agent(&p, &quoted_secrets(), "");
    p.add(&["deploy", "--type", "explore"]);
    p.ok(&["work"]);
    let log = std::fs::read_to_string(p.path(".gza/logs/1.jsonl")).unwrap();
    assert_no_shape("the log", &log);
    for line in log.lines() {
        let parsed: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert!(parsed.get("type").is_some(), "{line}");
    }
    assert!(log.contains(PWD_LINE), "{log}");
    let shown = p.ok(&["log", "1"]);
    assert!(
        shown.contains("I ran `export DB_PASSWORD=\"[REDACTED]\"` and then \"[REDACTED]\" worked"),
        "{shown}"
    );
    assert_no_shape("gza log", &shown);
}

#[test]
fn with_redact_raw_logs_off_the_raw_log_keeps_the_secret_and_says_so() {
    let p = TestProject::new();
    stream_json_agent(&p, &quoted_secrets(), "redact_raw_logs: false\n");
    p.add(&["deploy", "--type", "explore"]);
    p.ok(&["work"]);
    let raw = p.run(&["log", "1", "--raw"]);
    assert_eq!(raw.code, 0, "{raw}");
    assert!(raw.stdout.contains("Db0Pa55word"), "{raw}");
    assert_eq!(
        raw.stderr,
        "gza: the log of task 1 was written unredacted (redact_raw_logs: false); it may hold secrets\n"
    );
    // Everything else is redacted still: the record, and the log as gza renders it.
    assert_no_shape("the database", &p.database_text());
    assert_no_shape("gza log", &p.ok(&["log", "1"]));
    // A log written before gza redacted raw logs says so too.
    p.db()
        .execute("UPDATE tasks SET log_redacted = NULL WHERE id = 1", [])
        .unwrap();
    let raw = p.run(&["log", "1", "--raw"]);
    assert!(
        raw.stderr
            .contains("was written before gza redacted raw logs"),
        "{raw}"
    );
}
