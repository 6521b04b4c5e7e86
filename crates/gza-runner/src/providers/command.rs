//! Any agent command: the prompt goes to stdin, plain text comes back, exit status 0 is success.

use super::{
    AgentReport, AgentRequest, Invocation, MAX_STORED_OUTPUT, Progress, StreamParser, Verdict,
};
use gza_core::config::Config;

pub fn invocation(config: &Config, request: &AgentRequest) -> Invocation {
    let command = &config.providers.command.command;
    let expand = |arg: &String| arg.replace("{model}", request.model.unwrap_or(""));
    Invocation {
        program: command.first().map(expand).unwrap_or_default(),
        args: command.iter().skip(1).map(expand).collect(),
        prompt_on_stdin: true,
        env: Vec::new(),
    }
}

/// Keeps the last [`MAX_STORED_OUTPUT`] bytes of text, however much the agent prints.
#[derive(Default)]
pub struct TextParser {
    text: String,
    cut: usize,
}

impl StreamParser for TextParser {
    fn line(&mut self, line: &str) {
        self.text.push_str(line);
        self.text.push('\n');
        if self.text.len() > 2 * MAX_STORED_OUTPUT {
            let start = self
                .text
                .ceil_char_boundary(self.text.len() - MAX_STORED_OUTPUT - super::REDACTION_MARGIN);
            self.cut += start;
            self.text.drain(..start);
        }
    }

    fn progress(&self) -> Progress {
        Progress::default()
    }

    fn finish(self: Box<Self>, exit_ok: bool) -> AgentReport {
        let text = self.text.trim_end();
        let output = super::bound_redacted(text, self.cut > 0);
        AgentReport {
            verdict: if exit_ok {
                Verdict::Success
            } else {
                Verdict::NoResult
            },
            output: (!output.is_empty()).then_some(output),
            session_id: None,
            model: None,
            cost_usd: None,
            input_tokens: None,
            output_tokens: None,
            num_turns: None,
        }
    }
}
