//! Groups: `--group` on add, and `history`, `next` and `work` limited to one group.

use insta::assert_snapshot;

use crate::support::project::TestProject;

fn grouped_queue() -> TestProject {
    let p = TestProject::new();
    p.command_agent(
        "cat > /dev/null\necho \"$GZA_TASK_ID\" >> ran.txt\necho ok\n",
        "",
    );
    p.add(&["auth one", "--group", "auth"]);
    p.add(&["docs one", "--group", "docs"]);
    p.add(&["auth two", "-g", "auth", "--depends-on", "2"]);
    p.add(&["auth three", "-g", "auth", "--next"]);
    p.add(&["ungrouped"]);
    p
}

#[test]
fn next_and_history_list_one_group() {
    let p = grouped_queue();
    assert_snapshot!(
        "group_next",
        p.run(&["next", "--group", "auth"]).to_string()
    );
    assert_snapshot!(
        "group_next_all",
        p.run(&["next", "--group", "auth", "--all"]).to_string()
    );
    assert_snapshot!(
        "group_history",
        p.run(&["history", "-g", "docs"]).to_string()
    );
    let ids: Vec<i64> = p
        .json(&["history", "--group", "auth", "--json"])
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, vec![4, 3, 1]);
}

#[test]
fn work_runs_only_the_group_and_waits_for_dependencies_outside_it() {
    let p = grouped_queue();
    let run = p.run(&["work", "--group", "auth", "--all"]);
    assert_eq!(run.code, 0, "{run}");
    // 3 depends on 2, which is in another group and has not run.
    assert_eq!(
        std::fs::read_to_string(p.path("ran.txt")).unwrap(),
        "4\n1\n"
    );
    for (id, status) in [
        (1, "completed"),
        (2, "pending"),
        (3, "pending"),
        (4, "completed"),
        (5, "pending"),
    ] {
        assert_eq!(p.task_field::<String>(id, "status"), status, "task {id}");
    }
    assert_snapshot!(
        "group_work_none_ready",
        p.run(&["work", "--group", "auth"]).to_string()
    );
    p.ok(&["work", "--group", "docs"]);
    p.ok(&["work", "-g", "auth"]);
    assert_eq!(p.task_field::<String>(3, "status"), "completed");
    assert_eq!(p.task_field::<String>(5, "status"), "pending");
    assert_eq!(
        p.ok(&["next", "-g", "auth"]),
        "No pending tasks in group auth\n"
    );
}

#[test]
fn an_unknown_group_is_named_with_the_groups_in_use() {
    let p = TestProject::new();
    p.add(&["ungrouped"]);
    assert_snapshot!("group_none_yet", p.user_error(&["next", "--group", "auth"]));
    p.add(&["a", "--group", "auth"]);
    p.add(&["b", "--group", "docs"]);
    let before = p.dump();
    assert_snapshot!(
        "group_unknown",
        p.user_error(&["history", "--group", "autth"])
    );
    assert!(
        p.user_error(&["work", "--group", "autth"])
            .contains("groups in use: auth, docs")
    );
    assert_eq!(p.dump(), before, "nothing ran");
}

#[test]
fn group_names_must_be_one_line_of_text() {
    let p = TestProject::new();
    for bad in ["", "   ", "two\nlines", &"g".repeat(101)] {
        let run = p.run(&["add", "x", "--group", bad]);
        assert_eq!(run.code, 2, "{bad:?}: {run}");
    }
    // Surrounding spaces are dropped.
    p.add(&["x", "--group", " auth "]);
    assert_eq!(p.json(&["show", "1", "--json"])["group"], "auth");
    assert_eq!(
        p.run(&["work", "1", "--group", "auth"]).code,
        2,
        "ids and --group conflict"
    );
}

#[test]
fn reviews_and_improvements_stay_in_their_tasks_group() {
    let p = TestProject::in_git_repo();
    p.command_agent(
        "cat > /dev/null\necho hi > hi.txt\nprintf '## Verdict\\nCHANGES_REQUESTED\\n'\n",
        "",
    );
    p.git(&["add", "--all"]);
    p.git(&["commit", "--quiet", "-m", "configure"]);
    p.add(&["Say hi", "--group", "greetings"]);
    p.ok(&["work"]);
    p.ok(&["review", "1"]);
    p.ok(&["work"]);
    p.ok(&["improve", "1"]);
    let ids: Vec<i64> = p
        .json(&["history", "--group", "greetings", "--json"])
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, vec![3, 2, 1]);
}
