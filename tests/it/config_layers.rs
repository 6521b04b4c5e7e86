//! Layered settings: user, project, local, environment; `gza config` shows where each came from.

use insta::assert_snapshot;

use crate::support::project::TestProject;

/// `gza config` lines for these keys only.
fn lines_for(out: &str, keys: &[&str]) -> String {
    out.lines()
        .filter(|l| keys.iter().any(|k| l.split_whitespace().next() == Some(*k)))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n")
}

fn user_file(p: &TestProject, yaml: &str) {
    std::fs::create_dir_all(p.home().join(".gza")).unwrap();
    std::fs::write(p.home().join(".gza/config.yaml"), yaml).unwrap();
}

#[test]
fn each_layer_overrides_the_one_before_and_config_says_where_from() {
    let mut p = TestProject::new();
    user_file(
        &p,
        "timeout_minutes: 12\nmax_concurrent: 9\nmax_turns: 11\nlearnings:\n  max_tokens: 900\n",
    );
    std::fs::write(
        p.path("gza.yaml"),
        "project_name: demo\nmax_concurrent: 4\nmax_turns: 22\n",
    )
    .unwrap();
    std::fs::write(
        p.path("gza.local.yaml"),
        "# mine\nmax_turns: 33\nlearnings:\n  inject: both\n",
    )
    .unwrap();
    p.set_env("GZA_CLEANUP_DAYS", "7");
    let keys = [
        "timeout_minutes",
        "max_concurrent",
        "max_turns",
        "cleanup_days",
        "learnings.max_tokens",
        "learnings.inject",
        "learnings.window_size",
        "project_name",
    ];
    let out = p
        .ok(&["config"])
        .replace(&p.home().display().to_string(), "[HOME]");
    assert_snapshot!(lines_for(&out, &keys), @r#"
    cleanup_days 7 $GZA_CLEANUP_DAYS
    learnings.inject "both" gza.local.yaml:4
    learnings.max_tokens 900 [HOME]/.gza/config.yaml:5
    learnings.window_size 15 default
    max_concurrent 4 gza.yaml:2
    max_turns 33 gza.local.yaml:2
    project_name "demo" gza.yaml:1
    timeout_minutes 12 [HOME]/.gza/config.yaml:1
    "#);
    let json = p.json(&["config", "--json"]);
    assert_eq!(json["max_turns"]["value"], 33);
    assert_eq!(json["max_turns"]["source"], "gza.local.yaml:2");
    assert_eq!(json["learnings"]["max_tokens"], serde_json::Value::Null);
    assert_eq!(json["learnings.max_tokens"]["value"], 900);
    // The settings are the ones every command uses: a task's timeout comes from the user file.
    p.ok(&["add", "a task"]);
    assert!(p.ok(&["config"]).contains("gza.local.yaml"));
}

#[test]
fn a_bad_key_or_type_in_any_layer_names_its_file_line_and_key() {
    let mut p = TestProject::new();
    std::fs::write(p.path("gza.yaml"), "project_name: demo\n").unwrap();
    let home = p.home().display().to_string();
    let err = |p: &TestProject| p.user_error(&["config"]).replace(&home, "[HOME]");

    user_file(&p, "max_turns: 5\nmax_concurent: 3\n");
    assert_snapshot!(err(&p), @"Error: [HOME]/.gza/config.yaml:2:1: unknown key `max_concurent`, expected one of `project_name`, `provider`, `model`, `timeout_minutes`, `max_turns`, `max_concurrent`, `work_priority`, `cleanup_days`, `redact_raw_logs`, `sandbox`, `docker_image`, `sandbox_env`, `learnings`, `hooks`, `providers`, `database`, `project`, `push`, `verify`, `verify_timeout_minutes`, `watch`; fix the file (`gza config --example` prints every key, documented)");
    user_file(&p, "learnings:\n  max_tokens: lots\n");
    assert!(
        err(&p).contains("[HOME]/.gza/config.yaml:2:"),
        "{}",
        err(&p)
    );
    assert!(err(&p).contains("learnings.max_tokens"), "{}", err(&p));
    user_file(&p, "");

    std::fs::write(p.path("gza.local.yaml"), "hooks:\n  treshold: 0.5\n").unwrap();
    let e = err(&p);
    assert!(e.contains("gza.local.yaml:2:"), "{e}");
    assert!(e.contains("unknown key `treshold`"), "{e}");
    std::fs::write(p.path("gza.local.yaml"), "max_concurrent: -1\n").unwrap();
    let e = err(&p);
    assert!(e.contains("gza.local.yaml:1:"), "{e}");
    assert!(e.contains("max_concurrent"), "{e}");
    std::fs::remove_file(p.path("gza.local.yaml")).unwrap();

    std::fs::write(p.path("gza.yaml"), "max_turns: [1]\n").unwrap();
    assert!(err(&p).contains("gza.yaml:1:"), "{}", err(&p));
    std::fs::write(p.path("gza.yaml"), "project_name: demo\n").unwrap();

    p.set_env("GZA_MAX_CONCURRENT", "many");
    assert_snapshot!(err(&p), @r#"Error: GZA_MAX_CONCURRENT=many: max_concurrent: got the text "many"; max_concurrent must be between 1 and 256 (the environment sets max_concurrent); fix or unset it"#);
    // A misspelt variable is not silently ignored.
    p.set_env("GZA_MAX_CONCURRENT", "2");
    p.set_env("GZA_MAX_CONCURENT", "4");
    let run = p.run(&["config"]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(
        run.stderr.trim(),
        "warning: GZA_MAX_CONCURENT is not a variable gza reads; did you mean GZA_MAX_CONCURRENT?",
        "{run}"
    );
    p.set_env("GZA_MAX_CONCURENT", "");
    p.set_env("GZA_MAX_CONCURRENT", "0");
    assert!(
        err(&p).contains("max_concurrent must be between 1 and 256"),
        "{}",
        err(&p)
    );
    p.set_env("GZA_MAX_CONCURRENT", "2");
    // Checks across keys run on the layers together: docker in one layer, its image in another.
    std::fs::write(p.path("gza.yaml"), "sandbox: docker\n").unwrap();
    assert!(err(&p).contains("docker_image"), "{}", err(&p));
    std::fs::write(p.path("gza.local.yaml"), "docker_image: my/agent:1\n").unwrap();
    p.ok(&["config"]);
    // Every command reads the same layers: a broken one stops them all with the same line.
    std::fs::write(p.path("gza.local.yaml"), "bogus: 1\n").unwrap();
    assert!(
        p.user_error(&["history"])
            .contains("gza.local.yaml:1:1: unknown key `bogus`")
    );
}

#[test]
fn a_local_settings_file_that_is_a_directory_is_a_clear_error_and_init_ignores_the_file() {
    let p = TestProject::new();
    assert!(
        std::fs::read_to_string(p.path(".gitignore"))
            .unwrap()
            .contains("/gza.local.yaml")
    );
    std::fs::create_dir(p.path("gza.local.yaml")).unwrap();
    let e = p.user_error(&["history"]);
    assert!(
        e.contains("gza.local.yaml: is not a regular file (a directory?)"),
        "{e}"
    );
    // Nothing stored is touched; removing the directory brings everything back.
    std::fs::remove_dir(p.path("gza.local.yaml")).unwrap();
    p.ok(&["history"]);
}

/// An installed gza has no gza.example.yaml beside it: `gza config --example` prints it, in or
/// out of a project, and it is what `gza init` documents.
#[test]
fn config_example_prints_every_key_anywhere() {
    let p = TestProject::empty();
    let run = p.run(&["config", "--example"]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(run.stdout, include_str!("../../gza.example.yaml"));
}

/// Whatever shape a database value has and wherever it comes from (each settings file, the
/// setting's variable, `GZA_DATABASE_URL`, `db copy --to`), no line gza prints shows its
/// password; `gza config` shows the connection in use and where it came from.
#[test]
fn no_database_value_from_any_source_shows_its_password() {
    const SECRET: &str = "hunter2SECRET";
    let malformed = [
        "POSTGRES://gza:hunter2SECRET@127.0.0.1:1/pw1?sslmode=maybe",
        "gza:hunter2SECRET@127.0.0.1:1/pw1",
        "pg://gza:hunter2SECRET@127.0.0.1:1/pw1?sslmode=disable",
        "postgres://gza@127.0.0.1:1/pw1 password=hunter2SECRET",
        "postgres://gza:hunter2SECRET@127.0.0.1:1/pw1#x",
    ];
    for value in malformed {
        // In a settings file: the one "holds a password" line, naming the file.
        let p = TestProject::empty_sqlite();
        p.ok(&["init"]);
        for file in ["gza.local.yaml", "user"] {
            let yaml = format!("database: {}\n", serde_json::to_string(value).unwrap());
            if file == "user" {
                user_file(&p, &yaml);
            } else {
                std::fs::write(p.path(file), &yaml).unwrap();
            }
            let err = p.user_error(&["config"]);
            let named = if file == "user" { "config.yaml" } else { file };
            assert!(
                err.contains("holds a password") && err.contains(named),
                "{value}: {err}"
            );
            assert!(!err.contains(SECRET), "{value}: {err}");
            let _ = std::fs::remove_file(p.path(file));
            let _ = std::fs::remove_file(p.home().join(".gza/config.yaml"));
        }
        // In the environment: the error names the variable, never gza.yaml, and is masked.
        for var in ["GZA_DATABASE", "GZA_DATABASE_URL"] {
            let mut p = TestProject::empty_sqlite();
            p.ok(&["init"]);
            p.set_env(var, value);
            let run = p.run(&["next"]);
            assert_ne!(run.code, 0, "{value} in {var}: {run}");
            assert!(run.stderr.contains(var), "{value} in {var}: {run}");
            assert!(!run.stderr.contains("gza.yaml"), "{value} in {var}: {run}");
            assert!(!run.to_string().contains(SECRET), "{value} in {var}: {run}");
        }
        let p = TestProject::empty_sqlite();
        p.ok(&["init"]);
        let run = p.run(&["db", "copy", "--to", value]);
        assert_ne!(run.code, 0, "{run}");
        assert!(!run.to_string().contains(SECRET), "{value}: {run}");
    }
    // A valid connection with a password, from either variable: `gza config` shows it without
    // the password, from where it came.
    for var in ["GZA_DATABASE", "GZA_DATABASE_URL"] {
        let mut p = TestProject::empty_sqlite();
        p.ok(&["init"]);
        p.set_env(
            var,
            "postgres://gza_secret:hunter2SECRET@127.0.0.1:1/pw1?sslmode=disable",
        );
        let out = p.ok(&["config"]);
        assert_eq!(
            lines_for(&out, &["database"]),
            format!(
                "database \"postgres://gza_secret:***@127.0.0.1:1/pw1?sslmode=disable\" ${var}"
            ),
            "{out}"
        );
        let json = p.json(&["config", "--json"]);
        assert_eq!(json["database"]["source"], format!("${var}"), "{json}");
        assert!(!json.to_string().contains(SECRET), "{json}");
    }
}

/// A check across keys names the file (and line) or the variable that set the key it is
/// about, not gza.yaml; `gza init` refuses such settings in that one line and sets up nothing.
#[test]
fn a_settings_error_names_the_file_that_holds_the_key_and_init_refuses_it() {
    let mut p = TestProject::empty_sqlite();
    p.ok(&["init"]);
    std::fs::write(p.path("gza.local.yaml"), "# mine\nproject: ''\n").unwrap();
    let err = p.user_error(&["next"]);
    assert!(
        err.contains("gza.local.yaml:2") && err.contains("project must not be empty"),
        "{err}"
    );
    assert!(!err.contains("gza.yaml"), "{err}");
    // A clone whose database is not made yet: init refuses, and makes none.
    std::fs::remove_file(p.path(".gza/gza.db")).unwrap();
    let err = p.user_error(&["init"]);
    assert!(err.contains("gza.local.yaml:2"), "{err}");
    assert!(!p.path(".gza/gza.db").exists());
    // A new project: refused too, and no gza.yaml is left behind.
    let q = TestProject::empty_sqlite();
    std::fs::create_dir_all(q.root()).unwrap();
    std::fs::write(q.path("gza.local.yaml"), "project: ''\n").unwrap();
    let err = q.user_error(&["init"]);
    assert!(err.contains("gza.local.yaml:1"), "{err}");
    assert!(!q.path("gza.yaml").exists());
    // From the environment: the variable is named.
    std::fs::remove_file(p.path("gza.local.yaml")).unwrap();
    p.set_env("GZA_MAX_CONCURRENT", "0");
    let err = p.user_error(&["next"]);
    assert!(err.contains("GZA_MAX_CONCURRENT: max_concurrent"), "{err}");
    p.unset_env("GZA_MAX_CONCURRENT");
    std::fs::write(p.path("gza.local.yaml"), "max_concurrent: 0\n").unwrap();
    let err = p.user_error(&["next"]);
    assert!(err.contains("gza.local.yaml:1"), "{err}");
}

/// A whole-number key with a range of its own says that range however the value is wrong:
/// `max_turns: -5` was told "a whole number, 0 or more", and then `max_turns: 0` "must be at
/// least 1".
#[test]
fn a_negative_or_zero_max_turns_gets_one_range() {
    let p = TestProject::new();
    for value in ["-5", "0"] {
        p.config(&format!("max_turns: {value}\n"));
        let err = p.user_error(&["history"]);
        assert!(
            err.contains("max_turns must be at least 1"),
            "{value}: {err}"
        );
        assert!(!err.contains("0 or more"), "{value}: {err}");
    }
    p.config("watch:\n  max_attempts: -2\n");
    let err = p.user_error(&["history"]);
    assert!(
        err.contains("watch.max_attempts must be at least 1"),
        "{err}"
    );
}
