//! Where a bracket that is never closed was opened. A parser meets a missing `}` only at the
//! end of the file, and says so there; the author needs the line where the block began. This
//! reads the source the way the tokenizer does, far enough to pair brackets (strings,
//! comments, template literals and regular expressions are skipped), and names the opener
//! whose pairing looks wrong: the first one closed at another indentation than its own line
//! has (in code indented by any consistent rule, the closer of a missing bracket's neighbour
//! is taken for it), else the innermost one left open.

/// The bracket (`{`, `(` or `[`) that is never closed, and the line it was opened on; `None`
/// when every bracket is closed, or the source cannot be read this simply.
pub(super) fn unclosed_bracket(source: &str) -> Option<(char, u32)> {
    let mut reader = Reader::new(source);
    while reader.i < reader.chars.len() {
        reader.step()?;
    }
    let innermost = (reader.open.iter().rev()).find(|(b, _)| matches!(b, '{' | '(' | '['));
    innermost.map(|&left| reader.suspect.unwrap_or(left))
}

/// The source, read a character (or a token to skip) at a time.
struct Reader<'a> {
    lines: Vec<&'a str>,
    chars: Vec<char>,
    i: usize,
    line: u32,
    /// Open brackets with their lines; '`' is a template literal being read, and '$' a `${`
    /// inside one (closed by `}`, back into the template).
    open: Vec<(char, u32)>,
    /// The first opener closed at another indentation than its own line's.
    suspect: Option<(char, u32)>,
    /// The last character of code that was not space, and the word it ended, for telling a
    /// regular expression from a division.
    last: char,
    word: String,
}

impl<'a> Reader<'a> {
    fn new(source: &'a str) -> Self {
        Self {
            lines: source.split('\n').collect(),
            chars: source.chars().collect(),
            i: 0,
            line: 1,
            open: Vec::new(),
            suspect: None,
            last: '\0',
            word: String::new(),
        }
    }

    fn at(&self, i: usize) -> char {
        self.chars.get(i).copied().unwrap_or('\0')
    }

    /// Reads what begins at the current character; `None` when the source is beyond this
    /// simple reading (a string or pattern across lines, brackets that do not pair).
    fn step(&mut self) -> Option<()> {
        let (c, next) = (self.at(self.i), self.at(self.i + 1));
        if c == '\n' {
            self.line += 1;
        }
        if self.open.last().is_some_and(|(b, _)| *b == '`') {
            self.template(c, next);
            self.i += 1;
            return Some(());
        }
        match c {
            '/' if next == '/' => {
                self.line_comment();
                return Some(());
            }
            '/' if next == '*' => {
                self.block_comment();
                return Some(());
            }
            '\'' | '"' => self.string(c)?,
            '/' if starts_expression(self.last, &self.word) => self.pattern()?,
            '`' => self.open.push(('`', self.line)),
            '{' | '(' | '[' => self.open.push((c, self.line)),
            '}' | ')' | ']' => self.close(c)?,
            _ => {}
        }
        self.note(c);
        self.i += 1;
        Some(())
    }

    /// Inside a template literal: its end, or a `${` that opens code.
    fn template(&mut self, c: char, next: char) {
        match c {
            '\\' => self.i += 1,
            '`' => {
                self.open.pop();
                self.last = '`';
            }
            '$' if next == '{' => {
                self.open.push(('$', self.line));
                self.i += 1;
                self.last = '{';
            }
            _ => {}
        }
    }

    fn line_comment(&mut self) {
        while self.i < self.chars.len() && self.chars[self.i] != '\n' {
            self.i += 1;
        }
    }

    fn block_comment(&mut self) {
        self.i += 2;
        while self.i < self.chars.len() && !(self.at(self.i) == '*' && self.at(self.i + 1) == '/') {
            if self.chars[self.i] == '\n' {
                self.line += 1;
            }
            self.i += 1;
        }
        self.i += 2;
    }

    /// Skips a string quoted with `quote`, leaving `i` on its closing quote.
    fn string(&mut self, quote: char) -> Option<()> {
        self.i += 1;
        while self.i < self.chars.len() && self.chars[self.i] != quote {
            match self.chars[self.i] {
                '\\' => self.i += 1,
                '\n' => return None,
                _ => {}
            }
            self.i += 1;
        }
        Some(())
    }

    /// Skips a regular expression, leaving `i` on its closing `/`.
    fn pattern(&mut self) -> Option<()> {
        let mut class = false;
        self.i += 1;
        while self.i < self.chars.len() && (class || self.chars[self.i] != '/') {
            match self.chars[self.i] {
                '\\' => self.i += 1,
                '[' => class = true,
                ']' => class = false,
                '\n' => return None,
                _ => {}
            }
            self.i += 1;
        }
        Some(())
    }

    /// Pairs a closing bracket with the last one open.
    fn close(&mut self, c: char) -> Option<()> {
        let (opener, at) = self.open.pop()?;
        let wanted = match opener {
            '{' | '$' => '}',
            '(' => ')',
            _ => ']',
        };
        if wanted != c {
            return None;
        }
        let misaligned = at != self.line && self.indent(at) != self.indent(self.line);
        if opener != '$' && misaligned && self.suspect.is_none() {
            self.suspect = Some((opener, at));
        }
        Some(())
    }

    /// How far line `line` is indented.
    fn indent(&self, line: u32) -> usize {
        let text = self
            .lines
            .get(line as usize - 1)
            .copied()
            .unwrap_or_default();
        text.len() - text.trim_start().len()
    }

    /// Keeps the last character of code and the word it ends.
    fn note(&mut self, c: char) {
        let in_word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
        if in_word(c) {
            if !in_word(self.last) {
                self.word.clear();
            }
            self.word.push(c);
        }
        if !c.is_whitespace() {
            self.last = c;
        }
    }
}

/// Whether a `/` after `last` (ending `word`) begins a regular expression rather than divides.
fn starts_expression(last: char, word: &str) -> bool {
    match last {
        '\0' => true,
        c if c.is_alphanumeric() || c == '_' || c == '$' => matches!(
            word,
            "return"
                | "typeof"
                | "instanceof"
                | "in"
                | "of"
                | "new"
                | "delete"
                | "void"
                | "throw"
                | "case"
                | "do"
                | "else"
                | "yield"
                | "await"
        ),
        ')' | ']' | '}' | '`' | '\'' | '"' => false,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::unclosed_bracket;

    #[test]
    fn the_block_left_open_is_named_not_the_end_of_the_file() {
        let source = "module.exports = {\n\
                      \x20 onPlayerMove(p, m, room) {\n\
                      \x20   if (m.x) {\n\
                      \x20     return { state: 1 };\n\
                      \x20 },\n\
                      \x20 onPlayerQuit() {},\n\
                      };\n";
        assert_eq!(unclosed_bracket(source), Some(('{', 3)));
        let at_the_end = "function f() {\n  return 1;\n";
        assert_eq!(unclosed_bracket(at_the_end), Some(('{', 1)));
    }

    #[test]
    fn strings_comments_templates_and_patterns_hold_no_brackets() {
        let source = "const a = '{'; // {\n\
                      /* { */ const b = \"(\" + `[${ {x: 1}.x }` + /[{(]/.source;\n\
                      const c = (4 / 2) / (1);\n\
                      function f() { return /}/.test(a); }\n";
        assert_eq!(unclosed_bracket(source), None);
        assert_eq!(unclosed_bracket("const x = (1 + 2;\n"), Some(('(', 1)));
    }
}
