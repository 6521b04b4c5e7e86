//! Finding work through the binary: `search`, tags, `lineage`, `comment`, `unmerged` and
//! `checkout`.

use insta::assert_snapshot;

use crate::support::project::TestProject;

/// An agent whose report is the scratch directory's `report-<task id>.txt` (or "done"), and which writes
/// `work-<task id>.txt` in a code task's checkout. Each prompt is saved to the scratch directory
/// as `prompt-<task id>.txt`. A review approves when `fixed.txt` is in its checkout; an improve
/// task writes it.
fn agent(p: &TestProject) {
    let prompts = p.scratch().display().to_string();
    p.command_agent(
        &format!(
            r#"prompt=$(cat)
printf '%s' "$prompt" > "{prompts}/prompt-$GZA_TASK_ID.txt"
case "$prompt" in
  "Complete this task: Review task"*)
    if [ -f fixed.txt ]; then
      printf '## Verdict\n\nAPPROVED\n'
    else
      printf '## Blockers\n- add fixed.txt\n\n## Verdict\n\nCHANGES_REQUESTED\n'
    fi ;;
  "Complete this task: Improve task"*)
    echo fixed > fixed.txt
    echo 'Added fixed.txt' ;;
  *)
    echo "$GZA_TASK_ID" > "work-$GZA_TASK_ID.txt"
    cat "{prompts}/report-$GZA_TASK_ID.txt" 2>/dev/null || echo done ;;
esac
"#
        ),
        "",
    );
}

fn prompt_of(p: &TestProject, id: i64) -> String {
    std::fs::read_to_string(p.scratch().join(format!("prompt-{id}.txt"))).unwrap()
}

/// A project in a git repository with the agent configured and committed.
fn repo() -> TestProject {
    let p = TestProject::in_git_repo();
    agent(&p);
    p.git(&["add", "--all"]);
    p.git(&["commit", "--quiet", "-m", "configure gza"]);
    p
}

#[test]
fn search_finds_words_in_prompts_and_outputs_newest_first_with_the_match_marked() {
    let p = TestProject::new();
    agent(&p);
    let report = |id: i64, text: &str| {
        std::fs::write(p.scratch().join(format!("report-{id}.txt")), text).unwrap();
    };
    report(1, "wired the login form to the provider\n");
    report(3, "the Login page and the café menu are documented\n");
    p.add(&["Add OAuth login to the settings page"]);
    p.add(&[
        "Fix the authentication bug in src/auth.rs (token ghp_0123456789abcdefghijklmnopqrstuvwxyz)",
    ]);
    p.add(&["Write the release notes"]);
    p.add(&["Refactor the parser", "--tag", "core"]);
    p.ok(&["work", "--all"]);
    // A task still pending is found too.
    p.add(&["Document the login flow"]);

    // A word finds the words it begins, in prompts and outputs; newest first.
    assert_snapshot!("search_login", p.run(&["search", "login"]).to_string());
    // Several words are all required; accents and case are folded; a quoted phrase is exact.
    assert_snapshot!(
        "search_phrase",
        p.run(&["search", "LOGIN", "cafe", "\"login page\""])
            .to_string()
    );
    assert_snapshot!("search_auth_prefix", p.run(&["search", "auth"]).to_string());
    // A secret in a prompt is redacted in the snippet, even when the search names it.
    let secret = p.ok(&["search", "ghp_0123456789abcdefghijklmnopqrstuvwxyz"]);
    assert!(!secret.contains("0123456789abcdef"), "{secret}");
    assert!(secret.contains("Task 2"), "{secret}");
    // Filters, an order by relevance, and a limit that says how many more there are.
    assert_snapshot!(
        "search_limited",
        p.run(&["search", "login", "-n", "1", "--status", "completed"])
            .to_string()
    );
    let ids = |args: &[&str]| -> Vec<i64> {
        p.json(args)
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["id"].as_i64().unwrap())
            .collect()
    };
    assert_eq!(ids(&["search", "login", "--json"]), vec![5, 3, 1]);
    assert_eq!(
        ids(&["search", "login", "--json", "-n", "0"]),
        vec![5, 3, 1]
    );
    assert_eq!(
        ids(&["search", "parser", "--tag", "core", "--json"]),
        vec![4]
    );
    assert_eq!(
        ids(&[
            "search",
            "login",
            "--type",
            "implement",
            "--status",
            "pending",
            "--json"
        ]),
        vec![5]
    );
    // By relevance, a short prompt that is about the parser comes before a long one that
    // mentions it in passing, though it is older.
    p.add(&[
        "Mention the parser once among many other words about build scripts, configuration \
         files, release notes and the continuous integration set-up",
    ]);
    assert_eq!(ids(&["search", "parser", "--json"]), vec![6, 4]);
    assert_eq!(
        ids(&["search", "parser", "--relevance", "--json"]),
        vec![4, 6]
    );
    let hit = &p.json(&["search", "provider", "--json"])[0];
    assert_eq!(hit["matched_in"], serde_json::json!(["output"]));
    assert_eq!(hit["output"], "…the login form to the «provider»");

    // The index follows every change of a prompt and every deletion.
    p.ok(&["edit", "5", "Document the sign-in flow"]);
    assert_eq!(ids(&["search", "login", "--json"]), vec![3, 1]);
    assert_eq!(ids(&["search", "sign", "in", "--json"]), vec![5]);
    p.ok(&["delete", "1", "--yes"]);
    assert_eq!(ids(&["search", "login", "--json"]), vec![3]);

    assert_snapshot!(
        "search_no_match",
        p.run(&["search", "nothing-like-this"]).to_string()
    );
    assert_snapshot!("search_no_words", p.user_error(&["search", "--", "-- ++"]));
}

#[test]
fn tags_label_tasks_and_filter_next_history_and_work() {
    let p = repo();
    p.add(&["Login form", "--tag", "auth", "--tag", "UI"]);
    p.add(&["Docs page", "--tag", "docs"]);
    p.add(&["Token refresh", "--tag", "auth"]);
    p.add(&["Untagged"]);
    assert_snapshot!("tags_next", p.run(&["next", "--tag", "auth"]).to_string());
    assert_snapshot!(
        "tags_next_all_tags",
        p.run(&["next", "--tag", "auth", "--tag", "ui", "--all-tags"])
            .to_string()
    );
    // Any of several tags.
    let ids = |args: &[&str]| -> Vec<i64> {
        p.json(args)
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_i64().unwrap())
            .collect()
    };
    assert_eq!(
        ids(&["next", "--tag", "docs", "--tag", "ui", "--json"]),
        vec![1, 2]
    );

    // work --tag runs only tagged tasks.
    let run = p.run(&["work", "--tag", "auth", "--all"]);
    assert_eq!(run.code, 0, "{run}");
    for (id, status) in [
        (1, "completed"),
        (2, "pending"),
        (3, "completed"),
        (4, "pending"),
    ] {
        assert_eq!(p.task_field::<String>(id, "status"), status, "task {id}");
    }
    assert_snapshot!(
        "tags_work_none_ready",
        p.run(&["work", "--tag", "auth"]).to_string()
    );
    assert_eq!(ids(&["history", "--tag", "auth", "--json"]), vec![3, 1]);

    // Tags change whatever the status; a review carries its task's tags.
    p.ok(&["edit", "1", "--untag", "ui", "--tag", "release"]);
    p.ok(&["review", "1"]);
    let show = p.json(&["show", "5", "--json"]);
    assert_eq!(show["tags"], serde_json::json!(["auth", "release"]));
    assert!(
        p.ok(&["show", "1"])
            .contains("Tags:           auth, release\n")
    );
    assert_eq!(ids(&["next", "--tag", "release", "--json"]), vec![5]);
    // A task without tags prints the record it always did.
    assert!(p.json(&["show", "4", "--json"]).get("tags").is_none());

    assert_snapshot!("tags_unknown", p.user_error(&["history", "--tag", "nope"]));
    assert_snapshot!(
        "tags_invalid",
        p.run(&["add", "x", "--tag", "two words"]).to_string()
    );
    assert_eq!(p.run(&["next", "--all-tags"]).code, 2);
}

#[test]
fn lineage_draws_a_task_its_reviews_improvements_and_merge_as_a_tree() {
    let p = repo();
    p.add(&["Add a hello file"]);
    p.ok(&["work"]);
    p.ok(&["review", "1"]);
    p.ok(&["work"]);
    p.ok(&["improve", "1"]);
    p.ok(&["work"]);
    p.ok(&["review", "3"]);
    p.ok(&["work"]);
    p.ok(&["merge", "1"]);
    p.add(&["Something else"]);
    // Any task of the tree draws the whole tree, marking the one asked for.
    assert_snapshot!("lineage_tree", p.run(&["lineage", "3"]).to_string());
    let tree = p.json(&["lineage", "4", "--json"]);
    assert_eq!(tree["id"], 1);
    assert_eq!(tree["merged_into"], "main");
    let kids: Vec<i64> = tree["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["id"].as_i64().unwrap())
        .collect();
    assert_eq!(kids, vec![2, 3]);
    assert_eq!(tree["children"][1]["children"][0]["id"], 4);
    assert_eq!(
        tree["children"][1]["children"][0]["review_verdict"],
        "APPROVED"
    );
    // A task alone is a tree of one.
    assert_snapshot!("lineage_alone", p.run(&["lineage", "5"]).to_string());
    assert_snapshot!("lineage_unknown", p.user_error(&["lineage", "99"]));
}

#[test]
fn comments_show_on_the_task_and_reach_the_next_improve_task_once() {
    let p = repo();
    p.add(&["Add a hello file"]);
    p.ok(&["work"]);
    p.ok(&["review", "1"]);
    p.ok(&["work"]);
    assert_snapshot!(
        "comment_added",
        p.run(&[
            "comment",
            "1",
            "Keep hello.txt to one line",
            "--author",
            "ana"
        ])
        .to_string()
    );
    p.ok(&["comment", "2", "The review missed the README"]);
    p.ok(&["improve", "1"]);
    // What the improve task would be given, before it runs.
    let preview = p.ok(&["show", "3", "--prompt"]);
    assert!(preview.contains("## Comments on this branch"), "{preview}");
    p.ok(&["work"]);
    let prompt = prompt_of(&p, 3);
    assert!(
        prompt.contains("Comment 1 on task 1 by ana (")
            && prompt.contains("Keep hello.txt to one line")
            && prompt.contains("Comment 2 on task 2 (")
            && prompt.contains("The review missed the README"),
        "{prompt}"
    );
    assert_snapshot!(
        "comment_show",
        p.run(&["show", "1"])
            .to_string()
            .split("\nComments:\n")
            .nth(1)
            .unwrap_or("(no comments section)")
            .to_string()
    );
    // Addressed by a completed improve task: the next one is not given them again.
    p.ok(&["review", "3"]);
    p.ok(&["work"]);
    p.ok(&["comment", "4", "One more thing"]);
    // Review 4 approved; an improve task of it is given only the new comment.
    p.ok(&["improve", "4"]);
    p.ok(&["work"]);
    let second = prompt_of(&p, 5);
    assert!(second.contains("One more thing"), "{second}");
    assert!(!second.contains("Keep hello.txt"), "{second}");
    assert_snapshot!("comment_empty", p.user_error(&["comment", "1", " "]));
    assert_snapshot!(
        "comment_unknown_task",
        p.user_error(&["comment", "42", "hi"])
    );
}

#[test]
fn a_failed_improve_task_leaves_its_comments_open_for_the_next() {
    let p = repo();
    p.add(&["Add a hello file"]);
    p.ok(&["work"]);
    p.ok(&["review", "1"]);
    p.ok(&["work"]);
    p.ok(&["comment", "1", "Mind the newline"]);
    p.ok(&["improve", "1"]);
    // The agent fails this one.
    let failing = p.agent_script("cat > /dev/null\nexit 3\n");
    std::fs::write(
        p.path("gza.local.yaml"),
        format!("providers:\n  command:\n    command: [sh, {failing}]\n"),
    )
    .unwrap();
    p.run(&["work"]);
    assert_eq!(p.task_field::<String>(3, "status"), "failed");
    assert!(
        p.ok(&["show", "1"])
            .contains("open; given to task 3, which failed")
    );
    std::fs::remove_file(p.path("gza.local.yaml")).unwrap();
    p.ok(&["retry", "3"]);
    p.ok(&["work"]);
    assert!(prompt_of(&p, 4).contains("Mind the newline"));
    assert!(p.ok(&["show", "1"]).contains("(addressed by task 4)"));
}

#[test]
fn unmerged_lists_branches_with_work_not_merged_and_their_verdicts() {
    let p = repo();
    p.add(&["First change"]);
    p.add(&["Second change", "--tag", "ui"]);
    p.add(&["Third change"]);
    p.add(&["Merged by hand"]);
    p.add(&["Merged by gza"]);
    p.add(&["Explore the code", "--type", "explore"]);
    p.ok(&["work", "--all"]);
    p.ok(&["review", "2"]);
    p.ok(&["work"]);
    let by_hand: String = p.task_field(4, "branch");
    p.git(&["merge", "--quiet", "--no-edit", &by_hand]);
    p.ok(&["merge", "5"]);
    assert_snapshot!("unmerged", p.run(&["unmerged"]).to_string());
    let json = p.json(&["unmerged", "--tag", "ui", "--json"]);
    assert_eq!(json.as_array().unwrap().len(), 1);
    assert_eq!(json[0]["id"], 2);
    assert_eq!(json[0]["ahead"], 1);
    assert_eq!(json[0]["review"]["verdict"], "CHANGES_REQUESTED");
    p.git(&[
        "worktree",
        "remove",
        "--force",
        &p.task_field::<String>(3, "worktree"),
    ]);
    p.git(&["branch", "-D", &p.task_field::<String>(3, "branch")]);
    assert!(p.ok(&["unmerged"]).contains("1 branch deleted"));
}

#[test]
fn checkout_switches_to_a_tasks_branch_and_refuses_over_uncommitted_work() {
    let p = repo();
    p.add(&["Add a hello file"]);
    p.ok(&["work"]);
    let branch: String = p.task_field(1, "branch");
    let worktree: String = p.task_field(1, "worktree");
    // Uncommitted changes here: refused, nothing changed.
    std::fs::write(p.path("README.md"), "changed\n").unwrap();
    let refused = p.user_error(&["checkout", "1"]);
    assert_snapshot!("checkout_dirty", refused);
    assert_eq!(p.git(&["branch", "--show-current"]).trim(), "main");
    assert!(std::path::Path::new(&worktree).is_dir());
    p.git(&["checkout", "--quiet", "README.md"]);
    // Uncommitted work in the branch's worktree: refused, the worktree kept.
    std::fs::write(std::path::Path::new(&worktree).join("draft.txt"), "x").unwrap();
    let refused = p.user_error(&["checkout", "1"]);
    assert!(
        refused.contains("has uncommitted changes (draft.txt)"),
        "{refused}"
    );
    std::fs::remove_file(std::path::Path::new(&worktree).join("draft.txt")).unwrap();
    // Clean: the worktree goes, the branch is checked out here.
    let run = p.run(&["checkout", "1"]);
    assert_eq!(run.code, 0, "{run}");
    assert_snapshot!(
        "checkout_done",
        run.to_string().replace(&branch, "[BRANCH]")
    );
    assert_eq!(p.git(&["branch", "--show-current"]).trim(), branch);
    assert!(!std::path::Path::new(&worktree).exists());
    assert_eq!(p.task_field::<Option<String>>(1, "worktree"), None);
    assert!(p.path("work-1.txt").is_file());
    assert!(
        p.ok(&["checkout", "1"])
            .contains("checked out here already")
    );
    // A task without a branch.
    p.add(&["Look around", "--type", "explore"]);
    assert_snapshot!("checkout_no_branch", p.user_error(&["checkout", "2"]));
}
