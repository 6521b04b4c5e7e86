//! Tables measured in terminal columns: CJK characters and most emoji take two, so a table
//! that counted characters would overflow the screen or push its columns out of line.

use insta::assert_snapshot;
use unicode_width::UnicodeWidthStr;

use crate::support::project::TestProject;

const PROMPTS: [&str; 4] = [
    "修复登录页面的布局问题并为所有表单字段添加中文错误提示同时更新相关的单元测试以及部署脚本和配置文件",
    "🚀 Ship the release notes 🎉 and tag the build ✅ once CI is green everywhere",
    "Traduire la page « À propos » et vérifier l’accentuation",
    "ログイン画面のボタンを修正",
];

/// Fails naming the first line of `text` wider than `columns` terminal columns.
fn assert_fits(text: &str, columns: usize) {
    for line in text.lines() {
        assert!(
            line.width() <= columns,
            "{} columns, more than {columns}:\n{line}\nin:\n{text}",
            line.width()
        );
    }
}

#[test]
fn history_and_next_cut_wide_prompts_to_the_screen_by_columns() {
    // 100 columns (TestProject's COLUMNS): the prompt column gets what the others leave.
    let p = TestProject::new();
    for prompt in PROMPTS {
        p.add(&[prompt]);
    }
    p.db()
        .execute(
            "UPDATE tasks SET status = 'failed', failure_reason = 'TIMEOUT', cost_usd = 0.25, \
             duration_seconds = 125 WHERE id = 2",
            [],
        )
        .unwrap();
    let history = p.run(&["history"]);
    assert_eq!(history.code, 0, "{history}");
    assert_fits(&history.stdout, 100);
    assert_snapshot!("wide_history", history.to_string());
    let next = p.run(&["next", "--all"]);
    assert_eq!(next.code, 0, "{next}");
    assert_fits(&next.stdout, 100);
    assert_snapshot!("wide_next", next.to_string());
}

#[test]
fn config_lines_up_its_sources_after_a_wide_value() {
    let p = TestProject::new();
    p.config("project_name: 日本語のプロジェクト🚀\nmodel: sonnet\n");
    let run = p.run(&["config"]);
    assert_eq!(run.code, 0, "{run}");
    // The sources of short values start in the same terminal column, the wide one's too.
    let column = |key: &str| {
        let line = run
            .stdout
            .lines()
            .find(|l| l.starts_with(&format!("{key} ")))
            .unwrap_or_else(|| panic!("no {key} in:\n{run}"));
        let at = line
            .find("gza.yaml")
            .or_else(|| line.find("default"))
            .unwrap_or_else(|| panic!("no source in {line:?}"));
        line[..at].width()
    };
    let columns = ["project_name", "model", "cleanup_days", "provider"].map(column);
    assert!(
        columns.iter().all(|&c| c == columns[0]),
        "{columns:?}\n{run}"
    );
    let shown: String = run
        .stdout
        .lines()
        .filter(|l| {
            ["project_name ", "model ", "provider "]
                .iter()
                .any(|k| l.starts_with(k))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    assert_snapshot!("wide_config", shown);
}
