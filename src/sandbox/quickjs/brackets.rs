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
    let lines: Vec<&str> = source.split('\n').collect();
    let indent = |line: u32| {
        let text = lines.get(line as usize - 1).copied().unwrap_or_default();
        text.len() - text.trim_start().len()
    };
    let chars: Vec<char> = source.chars().collect();
    // Open brackets with their lines; '`' is a template literal being read, and '$' a `${`
    // inside one (closed by `}`, back into the template).
    let mut open: Vec<(char, u32)> = Vec::new();
    let mut suspect: Option<(char, u32)> = None;
    let mut line = 1u32;
    // The last character of code that was not space, and the word it ended, for telling a
    // regular expression from a division.
    let mut last = '\0';
    let mut word = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied().unwrap_or('\0');
        if c == '\n' {
            line += 1;
        }
        if open.last().is_some_and(|(b, _)| *b == '`') {
            match c {
                '\\' => i += 1,
                '`' => {
                    open.pop();
                    last = '`';
                }
                '$' if next == '{' => {
                    open.push(('$', line));
                    i += 1;
                    last = '{';
                }
                _ => {}
            }
            i += 1;
            continue;
        }
        match c {
            '/' if next == '/' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '/' if next == '*' => {
                i += 2;
                while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                    if chars[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
                i += 2;
                continue;
            }
            '\'' | '"' => {
                i += 1;
                while i < chars.len() && chars[i] != c {
                    match chars[i] {
                        '\\' => i += 1,
                        '\n' => return None,
                        _ => {}
                    }
                    i += 1;
                }
            }
            '/' if starts_expression(last, &word) => {
                let mut class = false;
                i += 1;
                while i < chars.len() && (class || chars[i] != '/') {
                    match chars[i] {
                        '\\' => i += 1,
                        '[' => class = true,
                        ']' => class = false,
                        '\n' => return None,
                        _ => {}
                    }
                    i += 1;
                }
            }
            '`' => open.push(('`', line)),
            '{' | '(' | '[' => open.push((c, line)),
            '}' | ')' | ']' => {
                let (opener, at) = open.pop()?;
                let wanted = match opener {
                    '{' | '$' => '}',
                    '(' => ')',
                    _ => ']',
                };
                if wanted != c {
                    return None;
                }
                if opener != '$' && at != line && indent(at) != indent(line) && suspect.is_none() {
                    suspect = Some((opener, at));
                }
            }
            _ => {}
        }
        if c.is_alphanumeric() || c == '_' || c == '$' {
            if !last.is_alphanumeric() && last != '_' && last != '$' {
                word.clear();
            }
            word.push(c);
        }
        if !c.is_whitespace() {
            last = c;
        }
        i += 1;
    }
    let innermost = open
        .iter()
        .rev()
        .find(|(b, _)| matches!(b, '{' | '(' | '['));
    innermost.map(|&left| suspect.unwrap_or(left))
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
