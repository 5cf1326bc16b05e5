//! The Prometheus text exposition format, version 0.0.4.

use std::fmt::{Display, Write};

#[derive(Default)]
pub struct Exposition {
    text: String,
}

impl Exposition {
    /// Starts a metric family: its `# HELP` and `# TYPE` lines.
    pub fn family(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.text, "# HELP {name} {help}");
        let _ = writeln!(self.text, "# TYPE {name} {kind}");
    }

    /// One sample; `labels` already formatted (`a="b",c="d"`), empty for none.
    pub fn sample(&mut self, name: &str, labels: &str, value: impl Display) {
        if labels.is_empty() {
            let _ = writeln!(self.text, "{name} {value}");
        } else {
            let _ = writeln!(self.text, "{name}{{{labels}}} {value}");
        }
    }

    /// A family with a single unlabelled sample.
    pub fn single(&mut self, name: &str, kind: &str, help: &str, value: impl Display) {
        self.family(name, kind, help);
        self.sample(name, "", value);
    }

    pub fn finish(self) -> String {
        self.text
    }
}
