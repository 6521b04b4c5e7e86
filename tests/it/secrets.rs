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
