//! What a person reads, as snapshots: the help of the main commands, the learnings as
//! `gza learnings show` lists and details them, and one-line errors. Times are replaced by
//! `[TIME]` (`normalize_times`); everything else is as printed, at 100 columns, without colour.

use insta::assert_snapshot;

use crate::support::project::{TestProject, normalize_times};

/// `gza ARGS --help`, checked to succeed.
fn help(p: &TestProject, args: &[&str]) -> String {
    let mut args = args.to_vec();
    args.push("--help");
    p.ok(&args)
}

#[test]
fn help_of_the_main_commands() {
    let p = TestProject::empty();
    assert_snapshot!("help", help(&p, &[]));
    assert_snapshot!("help_add", help(&p, &["add"]));
    assert_snapshot!("help_work", help(&p, &["work"]));
    assert_snapshot!("help_history", help(&p, &["history"]));
    assert_snapshot!("help_show", help(&p, &["show"]));
    assert_snapshot!("help_learnings", help(&p, &["learnings"]));
    assert_snapshot!("help_learnings_add", help(&p, &["learnings", "add"]));
}

#[test]
fn learnings_as_listed_and_detailed() {
    let p = TestProject::new();
    p.ok(&[
        "learnings",
        "add",
        "--priority",
        "HIGH",
        "--section",
        "Code Style",
        "Keep handlers thin; logic lives in the service layer",
    ]);
    p.ok(&["learnings", "add", "Run make test before finishing"]);
    p.ok(&[
        "learnings",
        "add",
        "--tool",
        "Bash",
        "--keyword",
        "git push",
        "--check",
        "CI is green",
        "Never push to main directly",
    ]);
    p.ok(&[
        "learnings",
        "archive",
        "L2",
        "--reason",
        "we use nextest now",
    ]);
    assert_snapshot!("learnings_list", p.ok(&["learnings", "show"]));
    assert_snapshot!("learnings_list_all", p.ok(&["learnings", "show", "--all"]));
    assert_snapshot!(
        "learning_detail",
        normalize_times(&p.ok(&["learnings", "show", "L3"]))
    );
    assert_snapshot!(
        "learning_detail_archived",
        normalize_times(&p.ok(&["learnings", "show", "L2"]))
    );
}

#[test]
fn one_line_errors_say_what_to_do() {
    let p = TestProject::new();
    p.add(&["one"]);
    let errors = [
        p.user_error(&["show", "9"]),
        p.user_error(&["learnings", "show", "L9"]),
        p.user_error(&["learnings", "edit", "L9", "--text", "x"]),
        p.user_error(&["retry", "1"]),
        p.user_error(&["log", "1"]),
        p.user_error(&["delete", "9"]),
    ];
    for e in &errors {
        assert_eq!(e.trim_end().lines().count(), 1, "one line: {e}");
    }
    assert_snapshot!("one_line_errors", errors.join(""));
    let outside = TestProject::empty();
    assert_snapshot!("error_no_project", outside.user_error(&["history"]));
}
