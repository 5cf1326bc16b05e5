//! What one call logged, kept within bounds: a flood of `console.log` costs the call its
//! lines past the limit, never the server its memory or its log.

use super::truncate;
use crate::sandbox::protocol::{LogLevel, LogLine};

/// Log output kept from one call, beyond which lines are dropped (and that is said).
pub(super) const MAX_LOG_BYTES: usize = 16 * 1024;
const MAX_LOG_LINE: usize = 2000;

/// What a call logged, capped in size.
#[derive(Default)]
pub(super) struct LogBuffer {
    lines: Vec<LogLine>,
    bytes: usize,
    dropped: bool,
}

impl LogBuffer {
    pub(super) fn push(&mut self, level: LogLevel, text: String) {
        let text = truncate(text, MAX_LOG_LINE);
        if self.bytes + text.len() > MAX_LOG_BYTES {
            if !self.dropped {
                self.dropped = true;
                self.lines.push(LogLine {
                    level: LogLevel::Warn,
                    text: format!("more log output from this call was dropped (the limit is {MAX_LOG_BYTES} bytes)"),
                });
            }
            return;
        }
        self.bytes += text.len();
        self.lines.push(LogLine { level, text });
    }

    pub(super) fn take(&mut self) -> Vec<LogLine> {
        self.bytes = 0;
        self.dropped = false;
        std::mem::take(&mut self.lines)
    }
}
